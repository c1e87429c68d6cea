"""The substring index against the plain definition: the chunks where `needle in text`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_qualbench.evaluation.substrings import (
    FEW_CHUNKS,
    FORMAT,
    SubstringIndex,
    cached_substring_index,
)
from pytest_qualbench.index_cache import IndexCache, texts_key

TEXTS = ["Connection pool: maxIdleConns", "the POOL grows", "pool", "", "café ﬁle pool"]


def plain(texts: list[str], needles: list[str]) -> int:
    return sum(any(needle in text for needle in needles) for text in texts)


def test_counts_chunks_not_occurrences_and_is_case_sensitive() -> None:
    index = SubstringIndex.built(TEXTS)
    assert index.count_containing(["pool"]) == 3
    assert index.count_containing(["POOL", "maxIdle"]) == 2
    assert index.count_containing(["pool", "pool"]) == 3
    assert index.count_containing(["ﬁle"]) == 1
    assert index.count_containing(["absent"]) == 0


def test_short_needles_and_matches_across_chunks() -> None:
    index = SubstringIndex.built(["ab", "cd", "xabx"])
    assert index.count_containing(["ab"]) == 2
    # "bc" and "abcd" only exist across the boundary of two chunks: in neither.
    assert index.count_containing(["bc", "abcd"]) == 0


def test_an_empty_corpus_holds_nothing() -> None:
    assert SubstringIndex.built([]).count_containing(["pool", "p"]) == 0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(alphabet="abcAB é", max_size=30), max_size=8),
    st.lists(st.text(alphabet="abcAB é", min_size=1, max_size=5), min_size=1, max_size=3),
)
def test_equals_the_definition(texts: list[str], needles: list[str]) -> None:
    assert SubstringIndex.built(texts).count_containing(needles) == plain(texts, needles)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.text(alphabet="ab", min_size=3, max_size=12), min_size=3 * FEW_CHUNKS, max_size=80),
    st.lists(st.text(alphabet="ab", min_size=3, max_size=6), min_size=1, max_size=3),
)
def test_equals_the_definition_where_many_chunks_share_the_windows(
    texts: list[str], needles: list[str]
) -> None:
    # Two letters: every needle's windows are in most texts, so more than FEW_CHUNKS
    # candidates are left after the rarest one and the intersections run.
    assert SubstringIndex.built(texts).count_containing(needles) == plain(texts, needles)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(alphabet="ab", min_size=1, max_size=12), max_size=80),
    st.lists(st.text(alphabet="ab", min_size=1, max_size=6), min_size=1, max_size=3),
    st.integers(1, 12),
)
def test_a_count_up_to_at_most_is_the_definition_capped(
    texts: list[str], needles: list[str], at_most: int
) -> None:
    index = SubstringIndex.built(texts)
    expected = min(plain(texts, needles), at_most)
    assert index.count_containing(needles, at_most=at_most) == expected
    # The capped count is kept apart from the whole one.
    assert index.count_containing(needles) == plain(texts, needles)


def test_the_index_is_cached_by_its_texts_and_loaded_unchanged(tmp_path: Path) -> None:
    cache = IndexCache(tmp_path)
    built = cached_substring_index(cache, "markdown", TEXTS)
    stored_at = cache.path("markdown").stat().st_ino
    loaded = cached_substring_index(cache, "markdown", TEXTS)
    # Loaded, not rebuilt: a store replaces the file (a new inode).
    assert cache.path("markdown").stat().st_ino == stored_at
    for array in ("keys", "offsets", "docs"):
        assert np.array_equal(getattr(loaded, array), getattr(built, array))
    assert loaded.count_containing(["pool", "POOL"]) == plain(TEXTS, ["pool", "POOL"])
    # Other texts are another key: rebuilt and stored over the old file.
    other = cached_substring_index(cache, "markdown", [*TEXTS[:-1], "pool table"])
    assert cache.path("markdown").stat().st_ino != stored_at
    assert other.count_containing(["table"]) == 1


@pytest.mark.parametrize(
    ("name", "damage"),
    [
        pytest.param("keys", lambda keys: keys[::-1].copy(), id="keys descending"),
        pytest.param("docs", lambda docs: docs + 100, id="chunk ids out of range"),
        pytest.param("offsets", lambda offsets: offsets[:-1].copy(), id="offsets short"),
        pytest.param("keys", lambda keys: keys.astype(np.float64), id="keys of floats"),
        pytest.param("docs", lambda docs: docs.reshape(1, -1), id="docs two-dimensional"),
    ],
)
def test_a_damaged_or_planted_index_is_refused_and_rebuilt(
    tmp_path: Path, name: str, damage: Callable[[np.ndarray], np.ndarray]
) -> None:
    state = SubstringIndex.built(TEXTS).state()
    planted = replace(state, arrays={**state.arrays, name: damage(state.arrays[name])})
    with pytest.raises(ValueError):
        SubstringIndex.stored(TEXTS, planted)
    cache = IndexCache(tmp_path)
    cache.store_state("markdown", texts_key(FORMAT, TEXTS), planted)
    index = cached_substring_index(cache, "markdown", TEXTS)
    assert index.count_containing(["pool", "maxIdle"]) == plain(TEXTS, ["pool", "maxIdle"])
    stored_state = cache.load_state("markdown", texts_key(FORMAT, TEXTS))[0]
    assert stored_state is not None
    assert SubstringIndex.stored(TEXTS, stored_state)


def test_an_index_of_as_many_other_texts_is_not_taken() -> None:
    state = SubstringIndex.built(["abc", "def"]).state()
    with pytest.raises(ValueError):
        SubstringIndex.stored(["abc"], state)
