"""Two-byte doc ids: segment runs, decoding, finding candidates, and refusing damage."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_qualbench.engine.bm25 import PostingIndex, idf
from pytest_qualbench.engine.segmented_ids import (
    SEGMENT_DOCS,
    SegmentedIds,
    rows_below,
    segment_count,
)

# Three keys over 3 segments: key 0 in segments 0 and 2, key 1 empty, key 2 in all three.
SIZE = 2 * SEGMENT_DOCS + 10
POSTINGS = [[3, 70000, 131075], [], [0, 65535, 65536, 131081]]


def plain_csr(postings: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.cumsum([0, *map(len, postings)]).astype(np.int64)
    docs = np.array([doc for posting in postings for doc in posting], dtype=np.int64)
    return offsets, docs


def test_segment_count_is_at_least_one() -> None:
    assert segment_count(0) == 1
    assert segment_count(SEGMENT_DOCS) == 1
    assert segment_count(SEGMENT_DOCS + 1) == 2


def test_rows_below_is_each_keys_first_row_at_the_bound() -> None:
    offsets, docs = plain_csr(POSTINGS)
    # Rows: key 0 is 0-2, key 1 none (at 3), key 2 is 3-6.
    assert rows_below(offsets, docs, SEGMENT_DOCS).tolist() == [1, 3, 5]
    assert rows_below(offsets, docs, 2 * SEGMENT_DOCS).tolist() == [2, 3, 6]
    assert rows_below(offsets, docs, 0).tolist() == [0, 3, 3]


def test_runs_split_each_key_at_the_segment_edges() -> None:
    ids = SegmentedIds.of(*plain_csr(POSTINGS), SIZE)
    assert (ids.segments, ids.key_count) == (3, 3)
    assert ids.bounds.tolist() == [0, 1, 2, 3, 3, 3, 3, 5, 6, 7]
    assert ids.local.tolist() == [3, 70000 - SEGMENT_DOCS, 3, 0, 65535, 0, 9]
    for key, posting in enumerate(POSTINGS):
        assert ids.ids(key).tolist() == posting


@settings(max_examples=60, deadline=None)
@given(postings=st.lists(st.sets(st.integers(0, 3 * SEGMENT_DOCS - 1), max_size=8), max_size=5))
def test_ids_agree_with_the_plain_postings(postings: list[set[int]]) -> None:
    ordered = [sorted(posting) for posting in postings]
    ids = SegmentedIds.of(*plain_csr(ordered), 3 * SEGMENT_DOCS)
    for key, posting in enumerate(ordered):
        assert ids.ids(key).tolist() == posting


def stored(local: np.ndarray, bounds: np.ndarray, size: int) -> SegmentedIds:
    """`SegmentedIds.stored` of these ids, no key with a dense set."""
    keys = max(0, (len(bounds) - 1) // segment_count(size))
    return SegmentedIds.stored(
        {
            "local_ids": local,
            "id_bounds": bounds,
            "dense_at": np.full(keys, -1, dtype=np.int64),
            "dense_bits": np.zeros(0, dtype=np.uint64),
            "dense_ranks": np.zeros(0, dtype=np.uint16),
        },
        size,
    )


def test_stored_takes_back_what_it_gave() -> None:
    ids = SegmentedIds.of(*plain_csr(POSTINGS), SIZE)
    again = SegmentedIds.stored(ids.arrays(), SIZE)
    assert [again.ids(key).tolist() for key in range(3)] == POSTINGS
    # Key 2 holds 4 of the 131,082 ids: too few for a set.
    assert again.dense.at.tolist() == [-1, -1, -1]


@pytest.mark.parametrize(
    ("local", "bounds", "size"),
    [
        pytest.param([3, 4], [0, 2], 4, id="id past the corpus"),
        pytest.param([3, 70000 % SEGMENT_DOCS], [0, 1, 2], 65540, id="id past it, last segment"),
        pytest.param([1, 2], [0, 1, 2, 2], 65540, id="bounds not a run per segment"),
        pytest.param([1, 2], [0, 3], 4, id="bounds past the ids"),
        pytest.param([1, 2], [0, 2, 1, 2], 4, id="bounds going back"),
        pytest.param([2, 1], [0, 2], 4, id="a run going back"),
        pytest.param([1, 1], [0, 2], 4, id="a run repeating an id"),
    ],
)
def test_stored_refuses_what_no_build_gives(local: list[int], bounds: list[int], size: int) -> None:
    with pytest.raises(ValueError, match="posting"):
        stored(np.array(local, dtype=np.uint16), np.array(bounds, dtype=np.int64), size)


def test_stored_takes_runs_that_start_below_the_last_one() -> None:
    # Key 0 holds 2 and 3, key 1 holds 1: a run may begin at or below the previous end.
    again = stored(np.array([2, 3, 1], dtype=np.uint16), np.array([0, 2, 3], dtype=np.int64), 4)
    assert [again.ids(key).tolist() for key in range(2)] == [[2, 3], [1]]


def every_key(postings: list[list[int]], size: int, keys: list[int]) -> list[int]:
    """The ids an index over the postings ranks as holding every one of the keys."""
    rows = [(key, doc) for key, posting in enumerate(postings) for doc in posting]
    index = PostingIndex(
        [key for key, _ in rows],
        [doc for _, doc in rows],
        [1] * len(rows),
        term_count=len(postings),
        doc_lengths=np.ones(size),
        k1=1.2,
        b=0.75,
    )
    docs, every, _ = index.every_then_any(keys, np.ones(size, dtype=bool), size, 0)
    return sorted(docs[:every].tolist())


def test_the_intersection_runs_from_the_rarest_posting_up() -> None:
    assert every_key(POSTINGS, SIZE, [0, 2]) == []
    assert every_key(POSTINGS, SIZE, [2]) == POSTINGS[2]
    assert every_key(POSTINGS, SIZE, [2, 0]) == sorted(set(POSTINGS[0]) & set(POSTINGS[2]))
    assert every_key(POSTINGS, SIZE, [0, -1]) == []
    assert every_key(POSTINGS, SIZE, []) == []


@settings(max_examples=80, deadline=None)
@given(
    postings=st.lists(st.sets(st.integers(0, 199)), min_size=1, max_size=5),
    size=st.sampled_from([200, 10**6]),
    data=st.data(),
)
def test_the_intersection_holds_the_common_ids(
    postings: list[set[int]], size: int, data: st.DataObject
) -> None:
    # One segment, or sixteen of which all but the first are empty.
    keys = data.draw(st.lists(st.integers(0, len(postings) - 1), min_size=1))
    common = sorted(set.intersection(*(postings[key] for key in keys)))
    assert every_key([sorted(posting) for posting in postings], size, keys) == common


def test_stored_refuses_wide_ids() -> None:
    with pytest.raises(ValueError, match="wrong types"):
        stored(np.array([1], dtype=np.int32), np.array([0, 1], dtype=np.int64), 4)


def test_an_index_past_one_segment_scores_as_its_ids_say() -> None:
    # The same posting at docs 5 and 65541 (one segment apart): the same lengths, the same score.
    size = SEGMENT_DOCS + 100
    lengths = np.ones(size)
    index = PostingIndex(
        [0, 0, 1],
        [5, SEGMENT_DOCS + 5, SEGMENT_DOCS + 7],
        [2, 2, 1],
        term_count=2,
        doc_lengths=lengths,
        k1=1.2,
        b=0.75,
    )
    candidates = np.array([5, 6, SEGMENT_DOCS + 5, SEGMENT_DOCS + 7], dtype=np.int64)
    scores = index.scores([0, 1], candidates)
    assert scores[0] == scores[2] > 0
    assert scores[1] == 0
    assert scores[3] > 0
    everywhere = np.ones(size, dtype=bool)
    docs, holding_both, best = index.every_then_any([0, 1], everywhere, 3, 3)
    assert holding_both == 0
    assert sorted(docs.tolist()) == [5, SEGMENT_DOCS + 5, SEGMENT_DOCS + 7]
    assert dict(zip(docs.tolist(), best.tolist(), strict=True)) == {
        5: scores[0],
        SEGMENT_DOCS + 5: scores[2],
        SEGMENT_DOCS + 7: scores[3],
    }
    # The pass over postings (every doc a candidate) gives the same bits.
    every = np.arange(size, dtype=np.int64)
    assert index.scores([0, 1], every)[candidates].tobytes() == scores.tobytes()


@settings(max_examples=60, deadline=None)
@given(
    start=st.integers(0, 2 * SEGMENT_DOCS),
    length=st.integers(1, 3000),
    stride=st.integers(1, 3),
    extra=st.sets(st.integers(0, 3 * SEGMENT_DOCS - 1), max_size=20),
    picked=st.sets(st.integers(0, 3 * SEGMENT_DOCS - 1), max_size=6),
)
def test_long_postings_walked_sparsely_or_densely_give_the_plain_answers(
    start: int, length: int, stride: int, extra: set[int], picked: set[int]
) -> None:
    # A run of up to 3000 ids (across a segment edge when it starts near one) and a
    # few scattered ones: a few candidates walk it by interpolation, every doc by
    # galloping, and both must find what a set lookup finds.
    size = 3 * SEGMENT_DOCS
    run = set(range(start, start + length * stride, stride))
    postings = [sorted(run | extra), sorted(extra | set(list(run)[::2]))]
    terms = [term for term, posting in enumerate(postings) for _ in posting]
    docs = [doc for posting in postings for doc in posting]
    weights = [doc % 5 + 1 for doc in docs]
    index = PostingIndex(
        terms, docs, weights, term_count=2, doc_lengths=np.ones(size), k1=1.2, b=0.75
    )
    few = sorted(picked | set(postings[0][:: max(1, len(postings[0]) // 4)]))
    scores = index.scores([0, 1], np.array(few, dtype=np.int64)).tolist()
    for doc, score in zip(few, scores, strict=True):
        expected = 0.0
        for posting in postings:
            if doc in posting:
                tf, norm = float(doc % 5 + 1), float(index.norms[doc])
                expected += tf * 2.2 / (norm + tf) * idf(size, len(posting))
        assert score == expected
    every = index.scores([0, 1], np.arange(size, dtype=np.int64))
    assert every[few].tolist() == scores
    common = sorted(set(postings[0]) & set(postings[1]))
    ranked, holding_both, _ = index.every_then_any([0, 1], np.ones(size, dtype=bool), size, 0)
    assert sorted(ranked[:holding_both].tolist()) == common


def test_many_candidates_mixing_every_walk_sum_each_term_in_order() -> None:
    # 5000 candidates find a 2000-doc posting by a slot per doc, and walk an every-doc
    # posting (more than 8 rows a candidate in its segment) along it; each candidate's
    # shares must still be added term by term, in query order.
    size = 2 * SEGMENT_DOCS
    rng = np.random.default_rng(7)
    candidates = np.sort(rng.choice(size, 5000, replace=False))
    postings = [list(range(size)), sorted(rng.choice(size, 2000, replace=False).tolist())]
    terms = [term for term, posting in enumerate(postings) for _ in posting]
    docs = [doc for posting in postings for doc in posting]
    index = PostingIndex(
        terms, docs, [doc % 5 + 1 for doc in docs], term_count=2,
        doc_lengths=np.arange(size) % 40 + 1, k1=1.2, b=0.75,
    )  # fmt: skip
    held = [set(posting) for posting in postings]
    for order in ([0, 1], [1, 0]):
        scores = index.scores(order, candidates).tolist()
        for doc, score in zip(candidates.tolist(), scores, strict=True):
            expected = 0.0
            for term in order:
                if doc in held[term]:
                    tf, norm = float(doc % 5 + 1), float(index.norms[doc])
                    expected += tf * 2.2 / (norm + tf) * idf(size, len(postings[term]))
            assert score == expected


def test_the_intersection_takes_keys_in_any_order_and_number() -> None:
    # Repeats and order do not matter; 200,000 keys (a hostile query's) are sorted,
    # not inserted one by one.
    postings = [[3, 70000, 131075], [], [0, 3, 65536, 131075]]
    assert every_key(postings, SIZE, [2, 0, 2, 0]) == [3, 131075]
    assert every_key(postings, SIZE, [0, 2] * 100_000) == [3, 131075]
    assert every_key(postings, SIZE, [2, 0] * 100_000 + [-1]) == []
