"""Dense keys' bit sets: which keys get one, their bits and ranks, and refusing damage."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_qualbench.engine.dense_sets import DENSE_SHARE, DenseSets, checked_dense_sets
from pytest_qualbench.engine.segmented_ids import SEGMENT_DOCS, SegmentedIds


def segmented(postings: list[list[int]], size: int) -> SegmentedIds:
    offsets = np.cumsum([0, *map(len, postings)]).astype(np.int64)
    docs = np.array([doc for posting in postings for doc in posting], dtype=np.int64)
    return SegmentedIds.of(offsets, docs, size)


def row_by_rank(ids: SegmentedIds, key: int, doc: int) -> int | None:
    """The row of `doc` in key's posting as the compiled walks find it by the set."""
    dense = ids.dense
    segment, local = divmod(doc, SEGMENT_DOCS)
    word = int(dense.at[key]) + segment * (SEGMENT_DOCS // 64) + local // 64
    bits, bit = int(dense.bits[word]), 1 << (local % 64)
    if not bits & bit:
        return None
    start = int(ids.bounds[key * ids.segments + segment])
    return start + int(dense.ranks[word]) + (bits & (bit - 1)).bit_count()


def test_a_key_holding_a_sixteenth_of_the_ids_gets_a_set() -> None:
    # 32 ids: key 0 holds 3 (more than a sixteenth), key 1 holds 1 (less).
    assert DENSE_SHARE == 16
    ids = segmented([[0, 1, 5], [2]], 32)
    assert ids.dense.at.tolist() == [0, -1]
    assert ids.dense.bits.tolist() == [0b100011]
    assert ids.dense.ranks.tolist() == [0]


def test_ranks_count_the_rows_before_each_word() -> None:
    # Every 8th of 200 ids: 8 in each of the first three words, 1 in the fourth.
    ids = segmented([list(range(0, 200, 8))], 200)
    assert ids.dense.ranks.tolist() == [0, 8, 16, 24]
    assert [row_by_rank(ids, 0, doc) for doc in (0, 64, 192, 193)] == [0, 8, 24, None]


def test_ranks_start_again_at_each_segment() -> None:
    size = SEGMENT_DOCS + 64
    posting = list(range(0, size, 4))
    ids = segmented([posting], size)
    first_of_second = SEGMENT_DOCS // 4
    assert row_by_rank(ids, 0, SEGMENT_DOCS) == first_of_second
    # The second segment's only word counts no rows before it: its run starts there.
    assert int(ids.dense.ranks[-1]) == 0


@settings(max_examples=60, deadline=None)
@given(
    postings=st.lists(st.sets(st.integers(0, 2 * SEGMENT_DOCS + 9)), min_size=1, max_size=4),
    size=st.sampled_from([2 * SEGMENT_DOCS + 10, 40]),
)
def test_every_row_found_by_rank_is_the_row_of_the_id(postings: list[set[int]], size: int) -> None:
    ordered = [sorted(doc for doc in posting if doc < size) for posting in postings]
    # A small corpus's keys are dense from 3 ids of 40.
    ids = segmented(ordered, size)
    for key, posting in enumerate(ordered):
        if ids.dense.at[key] < 0:
            assert len(posting) * DENSE_SHARE < size
            continue
        for row, doc in enumerate(posting):
            assert row_by_rank(ids, key, doc) == int(ids.bounds[key * ids.segments]) + row
        held = set(posting)
        assert all(row_by_rank(ids, key, doc) is None for doc in range(size) if doc not in held)


def checked(ids: SegmentedIds, dense: DenseSets) -> DenseSets:
    return checked_dense_sets(dense.at, dense.bits, dense.ranks, ids.bounds, ids.segments, ids.size)


def test_checked_takes_back_what_a_build_gives() -> None:
    ids = segmented([list(range(0, 200, 8)), [3], list(range(1, 200, 2))], 200)
    again = checked(ids, ids.dense)
    assert again.at.tolist() == [0, -1, 4]


def damaged(dense: DenseSets, what: str) -> DenseSets:
    at, bits, ranks = dense.at.copy(), dense.bits.copy(), dense.ranks.copy()
    if what == "flipped bit":
        # In the set's last word: no rank counts it, but the set holds an id too many.
        bits[3] ^= np.uint64(1 << 5)
    elif what == "moved bit":
        # The same count, another word: the ranks no longer count the bits before them.
        bits[0] ^= np.uint64(1)
        bits[1] |= np.uint64(1 << 1)
    elif what == "rank":
        ranks[1] += 1
    elif what == "overlapping sets":
        at[2] = 0
    elif what == "set words missing":
        bits, ranks = bits[:-1], ranks[:-1]
    elif what == "wide ranks":
        return DenseSets(at, bits, ranks.astype(np.int32))
    return DenseSets(at, bits, ranks)


@pytest.mark.parametrize(
    ("what", "message"),
    [
        ("flipped bit", "hold their postings"),
        ("moved bit", "ranks do not count"),
        ("rank", "ranks do not count"),
        ("overlapping sets", "tile"),
        ("set words missing", "shape|tile"),
        ("wide ranks", "wrong types"),
    ],
)
def test_checked_refuses_damaged_sets(what: str, message: str) -> None:
    ids = segmented([list(range(0, 200, 8)), [3], list(range(1, 200, 2))], 200)
    with pytest.raises(ValueError, match=message):
        checked(ids, damaged(ids.dense, what))
