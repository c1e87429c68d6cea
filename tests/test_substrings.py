"""The substring index against the plain definition: the chunks where `needle in text`."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_qualbench.evaluation.substrings import SubstringIndex

TEXTS = ["Connection pool: maxIdleConns", "the POOL grows", "pool", "", "café ﬁle pool"]


def plain(texts: list[str], needles: list[str]) -> int:
    return sum(any(needle in text for needle in needles) for text in texts)


def test_counts_chunks_not_occurrences_and_is_case_sensitive() -> None:
    index = SubstringIndex(TEXTS)
    assert index.count_containing(["pool"]) == 3
    assert index.count_containing(["POOL", "maxIdle"]) == 2
    assert index.count_containing(["pool", "pool"]) == 3
    assert index.count_containing(["ﬁle"]) == 1
    assert index.count_containing(["absent"]) == 0


def test_short_needles_and_matches_across_chunks() -> None:
    index = SubstringIndex(["ab", "cd", "xabx"])
    assert index.count_containing(["ab"]) == 2
    # "bc" and "abcd" only exist across the boundary of two chunks: in neither.
    assert index.count_containing(["bc", "abcd"]) == 0


def test_an_empty_corpus_holds_nothing() -> None:
    assert SubstringIndex([]).count_containing(["pool", "p"]) == 0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(alphabet="abcAB é", max_size=30), max_size=8),
    st.lists(st.text(alphabet="abcAB é", min_size=1, max_size=5), min_size=1, max_size=3),
)
def test_equals_the_definition(texts: list[str], needles: list[str]) -> None:
    assert SubstringIndex(texts).count_containing(needles) == plain(texts, needles)
