"""Fuzzy correction: edit budgets by word length, ties by document frequency then A-Z."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from pytest_qualbench.engine.fuzzy import MIN_FUZZY_WORD_CHARS, Corrector, is_correction, max_edits


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


@given(
    st.dictionaries(st.text("abc", min_size=1, max_size=9), st.integers(1, 5), max_size=30),
    st.text("abcd", min_size=MIN_FUZZY_WORD_CHARS, max_size=9),
)
def test_agrees_with_a_search_of_the_whole_vocabulary(
    word_frequency: dict[str, int], word: str
) -> None:
    within = [
        (Levenshtein.distance(word, candidate), -frequency, candidate)
        for candidate, frequency in word_frequency.items()
        if len(candidate) >= MIN_FUZZY_WORD_CHARS
        and Levenshtein.distance(word, candidate) <= max_edits(word)
    ]
    expected = min(within)[2] if within else None
    assert Corrector(word_frequency).nearest(word) == expected


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
