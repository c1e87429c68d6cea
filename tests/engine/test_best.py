"""The best candidates of a posting index: best score first, ties in doc-id order.

`PostingIndex.best` ranks tens of thousands of candidates by first bounding their
scores with the terms of the largest shares; whatever it skips, its ranking must be
the one of scoring every candidate (`PostingIndex.scores`) and sorting, to the bit.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_qualbench.engine.arrays import DocIds, Floats
from pytest_qualbench.engine.bm25 import PostingIndex

# From this many candidates on, `best` bounds the scores first (_postings.c).
PRUNED_CANDIDATES = 1024


def ranked_by_every_score(
    index: PostingIndex,
    terms: list[int],
    candidates: DocIds,
    depth: int,
    query_weights: list[float],
) -> tuple[list[int], bytes]:
    """The reference: every candidate scored, then sorted by score, ties by doc id."""
    scores = index.scores(terms, candidates, query_weights)
    order = np.lexsort((candidates, -scores))[:depth]
    return candidates[order].tolist(), scores[order].tobytes()


def ranked(result: tuple[DocIds, Floats]) -> tuple[list[int], bytes]:
    docs, scores = result
    return docs.tolist(), scores.tobytes()


def index_of(
    term_docs: list[list[int]], doc_lengths: list[int], tfs: list[list[int]]
) -> PostingIndex:
    terms = [term for term, docs in enumerate(term_docs) for _ in docs]
    docs = [doc for posting in term_docs for doc in posting]
    weights = [tf for posting in tfs for tf in posting]
    return PostingIndex(
        terms, docs, weights, term_count=len(term_docs), doc_lengths=doc_lengths, k1=1.2, b=0.75
    )


def test_ties_keep_doc_order_across_the_depth_cut() -> None:
    # Docs 0, 2 and 4 hold the term once at one length: their scores tie below doc 3's.
    index = index_of([[0, 2, 3, 4], [1]], [1, 1, 1, 1, 1], [[1, 1, 2, 1], [1]])
    candidates = np.arange(5, dtype=np.int64)
    assert index.best([0], candidates, 2)[0].tolist() == [3, 0]
    assert index.best([0], candidates, 3)[0].tolist() == [3, 0, 2]
    assert index.best([0], candidates, 9)[0].tolist() == [3, 0, 2, 4, 1]
    assert index.best([0], candidates[1:], 0)[0].tolist() == []


def test_candidates_of_no_known_term_score_zero_in_doc_order() -> None:
    index = index_of([[0, 2], [1]], [1, 1, 1], [[1, 1], [1]])
    docs, scores = index.best([-1], np.array([1, 2], dtype=np.int64), 5)
    assert (docs.tolist(), scores.tolist()) == ([1, 2], [0.0, 0.0])


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    doc_count=st.sampled_from([PRUNED_CANDIDATES + 500, 6000, 70_000]),
    term_count=st.integers(1, 24),
    depth=st.sampled_from([1, 10, 100]),
    subset=st.booleans(),
    weighted=st.booleans(),
    high_counts=st.booleans(),
)
def test_best_is_every_candidate_scored_then_sorted(
    seed: int,
    doc_count: int,
    term_count: int,
    depth: int,
    subset: bool,
    weighted: bool,
    high_counts: bool,
) -> None:
    # Terms from rare to held by nearly every doc, so the rare ones bound the scores
    # and the common ones fall below the bound; counts up to 60 put shares near their
    # bound, counts of 1 at equal lengths tie across the depth cut. 70,000 docs span
    # two id segments.
    rng = np.random.default_rng(seed)
    shares = np.geomspace(0.0005, 0.95, term_count)
    term_docs = [np.flatnonzero(rng.random(doc_count) < share).tolist() for share in shares]
    top_count = 60 if high_counts else 1
    tfs = [rng.integers(1, top_count + 1, len(posting)).tolist() for posting in term_docs]
    lengths = rng.integers(1, 4, doc_count).tolist()
    index = index_of(term_docs, lengths, tfs)
    candidates = np.arange(doc_count, dtype=np.int64)
    if subset:
        candidates = np.sort(rng.choice(doc_count, PRUNED_CANDIDATES + 100, replace=False))
    terms = rng.permutation(term_count).tolist()
    weights = rng.uniform(0.25, 3.0, term_count).tolist() if weighted else [1.0] * term_count
    expected = ranked_by_every_score(index, terms, candidates, depth, weights)
    assert ranked(index.best(terms, candidates, depth, weights)) == expected


def test_a_negative_query_weight_ranks_without_the_bound() -> None:
    # A negative weight breaks the bound the pruning relies on (every share at most
    # (k1 + 1) * idf * weight), so every candidate is scored; the ranking is the same.
    rng = np.random.default_rng(11)
    doc_count = PRUNED_CANDIDATES + 900
    term_docs = [
        np.flatnonzero(rng.random(doc_count) < share).tolist() for share in (0.01, 0.3, 0.9)
    ]
    tfs = [rng.integers(1, 4, len(posting)).tolist() for posting in term_docs]
    index = index_of(term_docs, rng.integers(1, 4, doc_count).tolist(), tfs)
    candidates = np.arange(doc_count, dtype=np.int64)
    weights = [1.0, -0.5, 2.0]
    expected = ranked_by_every_score(index, [0, 1, 2], candidates, 100, weights)
    assert ranked(index.best([0, 1, 2], candidates, 100, weights)) == expected
