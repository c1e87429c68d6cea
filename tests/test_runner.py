"""Counting the relevant set: the chunks that contain a case's needles."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pytest_qualbench.evaluation.runner import ChunkTexts


def test_counts_chunks_not_occurrences() -> None:
    texts = ChunkTexts.of(["alpha beta alpha", "gamma", "beta"])
    assert texts.count_containing(["alpha"]) == 1
    assert texts.count_containing(["alpha", "beta"]) == 2
    assert texts.count_containing(["delta"]) == 0


def test_a_match_across_two_chunks_is_in_neither() -> None:
    texts = ChunkTexts.of(["foo ba", "r baz", "bar"])
    assert texts.count_containing(["bar"]) == 1
    assert texts.count_containing(["ar b"]) == 0


def test_empty_chunks_and_no_chunks() -> None:
    assert ChunkTexts.of(["", "x", ""]).count_containing(["x"]) == 1
    assert ChunkTexts.of([]).count_containing(["x"]) == 0


@given(
    st.lists(st.text(alphabet="abc ", max_size=12), max_size=8),
    st.lists(st.text(alphabet="abc ", min_size=1, max_size=3), min_size=1, max_size=3),
)
def test_agrees_with_a_substring_test_per_chunk(texts: list[str], needles: list[str]) -> None:
    expected = sum(1 for text in texts if any(needle in text for needle in needles))
    assert ChunkTexts.of(texts).count_containing(needles) == expected
