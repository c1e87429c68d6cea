"""The posting walks refuse arrays that would make them read past a buffer (on the kernel
that runs: the compiled one where it is built)."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_qualbench.engine.bm25 import idf
from pytest_qualbench.engine.kernel import KERNEL, walks
from pytest_qualbench.engine.segmented_ids import Walked
from tests.kernels import KERNEL_PARAMS

# One key over one segment: docs 1 and 3.
LOCAL = np.array([1, 3], dtype=np.uint16)
BOUNDS = np.array([0, 2], dtype=np.int64)
NORMS = np.ones(4)
# A key's dense set (`dense_sets`): its start, bits and ranks.
Sets = tuple[npt.NDArray[np.int64], npt.NDArray[np.uint64], npt.NDArray[np.uint16]]
# The key has no dense set (`dense_sets`): its rows are searched for.
NO_SETS: Sets = (
    np.array([-1], dtype=np.int64),
    np.zeros(0, dtype=np.uint64),
    np.zeros(0, dtype=np.uint16),
)
# A set of docs 1 and 3 (bits 1 and 3 of its one word), no rows before its word.
SETS: Sets = (
    np.array([0], dtype=np.int64),
    np.array([0b1010], dtype=np.uint64),
    np.zeros(1, dtype=np.uint16),
)


def add_scores(
    terms: list[int],
    candidates: list[int],
    *,
    bounds: np.ndarray = BOUNDS,
    sets: Sets = NO_SETS,
) -> np.ndarray:
    totals = np.zeros(len(candidates))
    walks.add_scores(
        LOCAL,
        bounds,
        1,
        *sets,
        np.array([2, 1], dtype=np.uint8),
        NORMS,
        np.array(terms, dtype=np.int64),
        np.ones(len(terms)),
        np.ones(len(terms)),
        1.2,
        np.array(candidates, dtype=np.int64),
        totals,
    )
    return totals


def test_scores_the_held_candidates() -> None:
    assert add_scores([0], [0, 1, 2, 3]).tolist() == [0.0, 2 * 2.2 / (1 + 2), 0.0, 2.2 / 2]


def eight_docs_score(candidates: list[int], sets: Sets) -> list[float]:
    """add_scores over one key holding docs 0-7 once each: its 8 rows are at least 4
    a candidate, so each candidate's row is probed for (by the set when it has one)."""
    totals = np.zeros(len(candidates))
    walks.add_scores(
        np.arange(8, dtype=np.uint16), np.array([0, 8], dtype=np.int64), 1, *sets,
        np.ones(8, dtype=np.uint8), np.ones(8), np.array([0]), np.ones(1), np.ones(1), 1.0,
        np.array(candidates, dtype=np.int64), totals,
    )  # fmt: skip
    return [float(total) for total in totals]


EIGHT_DOCS_SET = (np.array([0], dtype=np.int64), np.array([0xFF], dtype=np.uint64))


def test_a_dense_set_finds_the_rows_a_search_finds() -> None:
    found = eight_docs_score([5], (*EIGHT_DOCS_SET, np.zeros(1, dtype=np.uint16)))
    assert found == eight_docs_score([5], NO_SETS) == [2 * 1.0 / (1.0 + 1.0)]


@pytest.mark.skipif(KERNEL != "c", reason="the reference kernel reads no dense set")
def test_a_damaged_dense_set_is_never_read_past_its_arrays_or_the_run() -> None:
    _, bits = EIGHT_DOCS_SET
    ranks = np.zeros(1, dtype=np.uint16)
    # A set said to start past the words is not used: the rows are searched for.
    past_words = (np.array([1], dtype=np.int64), bits, ranks)
    assert eight_docs_score([5], past_words) == eight_docs_score([5], NO_SETS)
    # A rank putting a row past the key's run finds nothing there.
    past_run = (*EIGHT_DOCS_SET, np.array([7], dtype=np.uint16))
    assert eight_docs_score([5], past_run) == [0.0]


def test_refuses_dense_sets_that_do_not_match_the_postings() -> None:
    at, bits, ranks = SETS
    with pytest.raises(ValueError, match="dense sets do not match"):
        add_scores([0], [1], sets=(np.array([0, -1], dtype=np.int64), bits, ranks))
    with pytest.raises(ValueError, match="dense sets do not match"):
        add_scores([0], [1], sets=(at, bits, np.zeros(2, dtype=np.uint16)))
    with pytest.raises(ValueError, match="dense set bits: expected"):
        add_scores([0], [1], sets=(at, bits.astype(np.int64), ranks))


def test_refuses_candidates_out_of_order() -> None:
    # A walk moves forward only: an id below the one before would be missed.
    with pytest.raises(ValueError, match="not ascending"):
        add_scores([0], [3, 1])
    with pytest.raises(ValueError, match="not ascending"):
        add_scores([0], [1, 1])


@pytest.mark.parametrize(
    ("terms", "candidates", "message"),
    [
        ([1], [1], "key 1 out of range"),
        ([-1], [1], "key -1 out of range"),
        ([0], [4], "not a doc id"),
        ([0], [-1], "not a doc id"),
    ],
)
def test_refuses_keys_and_docs_out_of_range(
    terms: list[int], candidates: list[int], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        add_scores(terms, candidates)


def ranked_by_key_0(local: npt.NDArray[Any], bounds: npt.NDArray[Any]) -> None:
    """`best_of` of doc 1 by key 0 over these postings: a walk that reads them whole."""
    walks.best_of(
        local, bounds, 1, *NO_SETS, np.ones(2, dtype=np.uint8), NORMS, np.array([0]),
        np.ones(1), np.ones(1), 1.2, np.array([1]), 1, True,
    )  # fmt: skip


def test_refuses_bounds_past_the_ids() -> None:
    with pytest.raises(ValueError, match="bounds out of range"):
        add_scores([0], [1], bounds=np.array([0, 3], dtype=np.int64))
    with pytest.raises(ValueError, match="bounds out of range"):
        ranked_by_key_0(LOCAL, np.array([1, 0], dtype=np.int64))


def test_refuses_arrays_of_another_type() -> None:
    with pytest.raises(ValueError, match="local ids: expected"):
        ranked_by_key_0(LOCAL.astype(np.int32), BOUNDS)
    with pytest.raises(ValueError, match="totals: expected"):
        walks.add_scores(
            LOCAL, BOUNDS, 1, *NO_SETS, LOCAL, NORMS, np.array([0]), np.ones(1), np.ones(1), 1.2,
            np.array([1]), np.zeros(1, dtype=np.float32),
        )  # fmt: skip


def word_postings(local: list[int], bounds: list[int], sets: Sets | None = None) -> Walked:
    """Chunk word postings over one segment (`ChunkWords.chunk_ids`), by default with no
    dense sets."""
    no_sets: Sets = (
        np.full(len(bounds) - 1, -1, dtype=np.int64),
        np.zeros(0, dtype=np.uint64),
        np.zeros(0, dtype=np.uint16),
    )
    at, bits, ranks = sets or no_sets
    return (np.array(local, dtype=np.uint16), np.array(bounds, dtype=np.int64), 1, at, bits, ranks)


def test_chunks_holding_refuses_words_and_chunks_out_of_range() -> None:
    # Word 0 is in chunks 0 and 2, word 1 in chunk 5.
    postings = word_postings([0, 2, 5], [0, 2, 3])
    visible = np.ones(4, dtype=bool)
    ends = np.array([1], dtype=np.int64)
    every, _ = walks.chunks_holding(*postings, np.array([0]), ends, visible)
    assert np.frombuffer(every, dtype=np.int64).tolist() == [0, 2]
    # Word 1's chunk 5 is past the 4 chunks: refused whether it is met in the last
    # group, an earlier one, or only by the any-word walk (the second group is empty).
    for words, group_ends in (([1], [1]), ([1, 0], [1, 2]), ([1], [1, 1])):
        with pytest.raises(ValueError, match="chunk id is out of range"):
            walks.chunks_holding(*postings, np.array(words), np.array(group_ends), visible)
    for word in (2, -1):
        with pytest.raises(ValueError, match=r"posting key -?[0-9]+ out of range"):
            walks.chunks_holding(*postings, np.array([word]), ends, visible)
    past_the_ids = word_postings([0, 2, 5], [0, 2, 4])
    with pytest.raises(ValueError, match="id bounds out of range"):
        walks.chunks_holding(*past_the_ids, np.array([1]), ends, visible)
    with pytest.raises(ValueError, match="group ends"):
        walks.chunks_holding(*postings, np.array([0]), np.array([2]), visible)
    with pytest.raises(ValueError, match="longer than the postings' segments"):
        walks.chunks_holding(*postings, np.array([0]), ends, np.ones(70_000, dtype=bool))


def test_chunks_holding_refuses_a_dense_set_holding_a_chunk_past_the_chunks() -> None:
    # Word 0's set holds chunks 1 and 3 of 3: bit 3 lies past the chunks.
    postings = word_postings([1, 3], [0, 2], SETS)
    with pytest.raises(ValueError, match="chunk id is out of range"):
        walks.chunks_holding(*postings, np.array([0]), np.array([1]), np.ones(3, dtype=bool))
    every, _ = walks.chunks_holding(*postings, np.array([0]), np.array([1]), np.ones(4, dtype=bool))
    assert np.frombuffer(every, dtype=np.int64).tolist() == [1, 3]


@pytest.mark.parametrize("kernel", KERNEL_PARAMS)
def test_totals_may_share_the_candidates_buffer(kernel: Any) -> None:
    # The candidate ids are copied before any total is written over them.
    shared = np.array([1, 3], dtype=np.int64)
    kernel.add_scores(
        LOCAL, BOUNDS, 1, *NO_SETS, np.array([2, 1], dtype=np.uint8), NORMS, np.array([0, 0]),
        np.ones(2), np.ones(2), 1.2, shared, shared.view(np.float64),
    )  # fmt: skip
    share_1, share_3 = 2 * 2.2 / (1 + 2), 2.2 / 2
    assert shared.view(np.float64).tolist() == [2 * share_1, 2 * share_3]


@pytest.mark.parametrize("kernel", KERNEL_PARAMS)
def test_refuses_a_misaligned_array(kernel: Any) -> None:
    raw = np.zeros(3 * 8 + 1, dtype=np.uint8)
    misaligned = raw[1:].view(np.int64)
    with pytest.raises(ValueError, match="not aligned"):
        kernel.best_of(
            LOCAL, misaligned, 1, *NO_SETS, np.ones(2, dtype=np.uint8), NORMS, np.array([0]),
            np.ones(1), np.ones(1), 1.2, np.array([1]), 1, True,
        )  # fmt: skip


def test_refuses_a_segment_count_the_norms_do_not_have() -> None:
    with pytest.raises(ValueError, match="segment count"):
        walks.add_scores(
            LOCAL, np.array([0, 2, 2], dtype=np.int64), 2, *NO_SETS, np.array([2, 1], dtype=np.uint8),
            NORMS, np.array([0]), np.ones(1), np.ones(1), 1.2, np.array([1]), np.zeros(1),
        )  # fmt: skip


def test_a_visible_flag_of_any_nonzero_byte_counts_once() -> None:
    visible = np.array([200, 0, 7, 0], dtype=np.uint8).view(bool)
    _, any_ = walks.chunks_holding(
        *word_postings([0, 2], [0, 2]), np.array([0]), np.array([0, 1], dtype=np.int64), visible
    )
    assert np.frombuffer(any_, dtype=np.int64).tolist() == [0, 2]


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(st.integers(0, 10**6), min_size=1, max_size=40),
    extra=st.integers(0, 10**7),
    data=st.data(),
)
def test_known_terms_gives_the_idf_bm25_computes_to_the_bit(
    rows: list[int], extra: int, data: st.DataObject
) -> None:
    # One segment; key k has rows[k] rows. The corpus holds at least the longest posting.
    bounds = np.cumsum([0, *rows]).astype(np.int64)
    size = max(rows) + extra
    terms = data.draw(st.lists(st.integers(-3, len(rows) - 1), max_size=50))
    weights = [float(at + 1) for at in range(len(terms))]
    known, idfs, query_weights = walks.known_terms(bounds, 1, terms, weights, size)
    expected = [
        (term, idf(size, rows[term]), weight)
        for term, weight in zip(terms, weights, strict=True)
        if term >= 0 and rows[term]
    ]
    found = zip(
        np.frombuffer(known, dtype=np.int64).tolist(),
        np.frombuffer(idfs, dtype=np.float64).tolist(),
        np.frombuffer(query_weights, dtype=np.float64).tolist(),
        strict=True,
    )
    assert list(found) == expected


def test_known_terms_refuses_keys_past_the_postings_and_unequal_lists() -> None:
    with pytest.raises(ValueError, match="key 1 out of range"):
        walks.known_terms(BOUNDS, 1, [1], [1.0], 4)
    with pytest.raises(ValueError, match="differ in length"):
        walks.known_terms(BOUNDS, 1, [0], [], 4)
    with pytest.raises(TypeError):
        walks.known_terms(BOUNDS, 1, cast(list[int], ["0"]), [1.0], 4)
