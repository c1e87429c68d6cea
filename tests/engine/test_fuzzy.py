"""Fuzzy correction: edit budgets by word length, ties by document frequency then A-Z."""

from __future__ import annotations

import pytest

from pytest_qualbench.engine.fuzzy import Corrector, max_edits


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
