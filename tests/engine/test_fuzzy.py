"""Fuzzy correction: edit budgets by word length, ties by document frequency then A-Z."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from pytest_qualbench.engine.fuzzy import (
    LETTER_BITS,
    MIN_FUZZY_WORD_CHARS,
    OTHER_BIT,
    Corrector,
    is_correction,
    letter_set_bound,
    letter_sets,
    max_edits,
)


@pytest.mark.parametrize(
    ("word", "edits"),
    [("abc", 1), ("abcd", 1), ("abcde", 2), ("a" * 12, 2), ("a" * 13, 3)],
)
def test_edit_budget_grows_with_word_length(word: str, edits: int) -> None:
    assert max_edits(word) == edits


def test_nearest_word_within_budget() -> None:
    corrector = Corrector({"configuration": 3, "connection": 5})
    assert corrector.correct("cnofiguration") == "configuration"
    assert corrector.correct("zzzzzzzzzz") is None


def test_ties_prefer_higher_document_frequency_then_alphabetical() -> None:
    assert Corrector({"pool": 1, "poll": 4}).correct("pooll") == "poll"
    assert Corrector({"pool": 2, "poll": 2}).correct("pooll") == "poll"
    assert Corrector({"pool": 3, "poll": 2}).correct("pooll") == "pool"


def test_closer_word_beats_more_frequent_one() -> None:
    assert Corrector({"latency": 1, "lately": 50}).correct("latncy") == "latency"


def test_short_words_are_never_corrected() -> None:
    assert Corrector({"db": 9, "ab": 9}).correct("dc") is None


def test_vocabulary_words_under_three_characters_are_no_candidates() -> None:
    assert Corrector({"ab": 9}).correct("abx") is None


def test_words_of_any_length_within_budget_are_candidates() -> None:
    # One deletion and one insertion away: lengths 4, 5 and 6 around "poole".
    assert Corrector({"pool": 1}).correct("poole") == "pool"
    assert Corrector({"pooles": 1}).correct("poole") == "pooles"
    assert Corrector({"po": 1, "poolesss": 1}).correct("poole") is None


def nearest_of_all(word_frequency: dict[str, int], word: str) -> str | None:
    """The correction by comparing the word with every vocabulary word: the closest
    within budget, then the most frequent, then the first A-Z."""
    within = [
        (Levenshtein.distance(word, candidate), -frequency, candidate)
        for candidate, frequency in word_frequency.items()
        if len(candidate) >= MIN_FUZZY_WORD_CHARS
        and Levenshtein.distance(word, candidate) <= max_edits(word)
    ]
    return min(within)[2] if within else None


@given(
    st.dictionaries(st.text("abc", min_size=1, max_size=9), st.integers(1, 5), max_size=30),
    st.text("abcd", min_size=MIN_FUZZY_WORD_CHARS, max_size=9),
)
def test_agrees_with_a_search_of_the_whole_vocabulary(
    word_frequency: dict[str, int], word: str
) -> None:
    assert Corrector(word_frequency).nearest(word) == nearest_of_all(word_frequency, word)


def test_stopwords_and_short_identifier_parts_are_no_corrections() -> None:
    parts = frozenset({"cert", "uptime"})
    assert not is_correction("when", parts)
    assert not is_correction("cert", parts)
    assert is_correction("uptime", parts)
    assert is_correction("cert", frozenset())
    corrector = Corrector({"cert": 1, "when": 9, "uptime": 1}, parts)
    assert corrector.correct("cerata") is None
    assert corrector.correct("whem") is None
    assert corrector.correct("uptme") == "uptime"


def test_a_word_with_a_digit_is_left_alone() -> None:
    assert Corrector({"1969": 5, "v1969": 5}).correct("1979") is None
    assert Corrector({"v1969": 5}).correct("v1979") is None


def test_letter_sets_count_each_letter_once_and_share_one_bit_for_the_rest() -> None:
    sets = letter_sets(["abc", "cab", "aab", "é", "ж", "a_1-"])
    assert sets[0] == sets[1] == 0b111
    assert sets[2] == 0b11
    assert sets[3] == sets[4] == 1 << OTHER_BIT
    assert sets[5] == 1 | 1 << LETTER_BITS.index("_") | 1 << LETTER_BITS.index("1") | 1 << (
        LETTER_BITS.index("-")
    )
    assert len(letter_sets([])) == 0


def test_letter_set_bound_counts_the_letters_one_side_lacks() -> None:
    # "pool" -> "loop": same letters, bound 0 (the distance is 2).
    # "pool" -> "pond": n and d the word lacks, l the choice lacks: bound 2 (distance 2).
    # "pool" -> "xyzw": 4 letters each way: bound 4 (distance 4).
    word = letter_sets(["pool"])[0]
    assert letter_set_bound(word, letter_sets(["loop", "pond", "xyzw"])).tolist() == [0, 2, 4]


@given(
    st.dictionaries(st.text("ab1_-éжq", min_size=1, max_size=9), st.integers(1, 5), max_size=40),
    st.text("ab1_-éжz", min_size=MIN_FUZZY_WORD_CHARS, max_size=9),
)
def test_the_letter_bound_never_drops_the_nearest_word(
    word_frequency: dict[str, int], word: str
) -> None:
    # Characters of every kind of bit, and two ("é", "ж") that share one: the bound must
    # stay below every true distance, so the answer is that of the whole vocabulary.
    vocabulary = list(word_frequency)
    bounds = letter_set_bound(letter_sets([word])[0], letter_sets(vocabulary)).tolist()
    for candidate, bound in zip(vocabulary, bounds, strict=True):
        assert bound <= Levenshtein.distance(word, candidate)
    assert Corrector(word_frequency).nearest(word) == nearest_of_all(word_frequency, word)
