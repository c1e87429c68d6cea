"""BM25 scores against rank_bm25, the oracle (BM25Plus with delta=0 has our IDF)."""

from __future__ import annotations

import math
from functools import reduce

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Plus

from pytest_qualbench.engine.analysis import index_terms, query_terms
from pytest_qualbench.engine.arrays import Floats
from pytest_qualbench.engine.bm25 import (
    UNKNOWN_TERM,
    PostingIndex,
    concatenated_ranges,
    idf,
    query_term_weight,
)
from pytest_qualbench.engine.porter import PorterLayer
from pytest_qualbench.engine.split import split_chunks
from pytest_qualbench.engine.types import Chunk

DOCS = [
    "Connection pooling keeps idle connections open; maxIdleConns defaults to 10.",
    "The pool size grows under load and connections are recycled after timeouts.",
    "Retry the request with exponential backoff when the database connection drops.",
    "Logging configuration: set the level to debug to see every pooled connection.",
    "",
    "Unrelated text about caching layers and eviction policies for hot keys.",
]
TITLES = ["Pool", "Pool > Sizing", "Retries", "Logging", "Empty", "Cache eviction pool"]


def oracle(corpus: list[list[str]]) -> BM25Plus:
    return BM25Plus(corpus, k1=1.2, b=0.75, delta=0)


def posting_index(
    corpus: list[list[str]], scale: float = 1.0
) -> tuple[PostingIndex, dict[str, int]]:
    """Index token lists the way a layer does: one (term, doc, scale * count) row per pair."""
    ids: dict[str, int] = {}
    rows = [
        (ids.setdefault(term, len(ids)), doc, scale * tokens.count(term))
        for doc, tokens in enumerate(corpus)
        for term in dict.fromkeys(tokens)
    ]
    terms, docs, weights = zip(*rows, strict=True)
    lengths = [len(tokens) for tokens in corpus]
    index = PostingIndex(
        terms, docs, weights, term_count=len(ids), doc_lengths=lengths, k1=1.2, b=0.75
    )
    return index, ids


def test_idf_is_log_of_n_plus_one_over_df() -> None:
    assert idf(5, 2) == math.log((5 + 1) / 2)


def test_term_score_written_out() -> None:
    # One doc of length 4 holding the term twice, one of length 6 without it: avgdl 5,
    # N 2, df 1. tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)) * log(3 / 1).
    index = PostingIndex([0], [0], [2], term_count=1, doc_lengths=[4, 6], k1=1.2, b=0.75)
    expected = 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 4 / 5)) * math.log(3)
    assert index.norms[0] == pytest.approx(1.2 * (0.25 + 0.75 * 4 / 5), abs=1e-12)
    scores = index.scores([0], np.array([0, 1]))
    assert scores[0] == pytest.approx(expected, abs=1e-12)
    assert scores[1] == 0.0


@pytest.mark.parametrize(
    ("weights", "stored"),
    [([3.0, 1.0], np.uint8), ([3.0, 1.5], np.float32), ([3.0, 1.1], np.float64)],
)
def test_term_scores_of_every_stored_weight_type_are_computed_in_float64(
    weights: list[float], stored: type[np.generic]
) -> None:
    # Counts are stored as uint8, weighted counts as float32 when exact, else float64;
    # each is read as the float64 of its stored value.
    index = PostingIndex(
        [0, 0], [0, 1], weights, term_count=1, doc_lengths=[2.0, 3.0], k1=1.2, b=0.75
    )
    assert index.weights.dtype == stored
    scores = index.scores([0], np.array([0, 1]))
    for doc in (0, 1):
        tf, norm = float(index.weights[doc]), float(index.norms[doc])
        assert scores[doc] == tf * (1.2 + 1) / (norm + tf) * idf(2, 2)


def test_sparse_and_dense_walks_give_the_same_bits() -> None:
    # Two candidates in a posting of 2000 docs are found by interpolation, every doc
    # by galloping along the posting.
    size = 2000
    docs = np.arange(size, dtype=np.int64)
    index = PostingIndex(
        np.zeros(size, dtype=np.int64),
        docs,
        (docs % 7 + 1).astype(np.float64),
        term_count=1,
        doc_lengths=docs % 50 + 1,
        k1=1.2,
        b=0.75,
    )
    few = np.array([3, 1500], dtype=np.int64)
    assert index.scores([0], few).tobytes() == index.scores([0], docs)[few].tobytes()


@pytest.mark.parametrize(
    "query", ["connection pool", "connections timeouts", "debug", "eviction hot keys", "nothing"]
)
def test_posting_index_equals_rank_bm25(query: str) -> None:
    corpus = [index_terms(doc) for doc in DOCS]
    index, ids = posting_index(corpus)
    terms = list(dict.fromkeys(query_terms(query)))
    everything = np.arange(len(DOCS), dtype=np.int64)
    expected = oracle(corpus).get_scores(terms)
    actual = index.scores([ids.get(term, UNKNOWN_TERM) for term in terms], everything)
    np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-9)


@pytest.mark.parametrize("query", ["pool connection", "eviction", "logging level debug"])
def test_porter_layer_with_title_weight_two_equals_rank_bm25_with_title_twice(query: str) -> None:
    chunks = [
        Chunk(text=text, title=title, source="s", kind="durable", position=position)
        for position, (text, title) in enumerate(zip(DOCS, TITLES, strict=True))
    ]
    layer = PorterLayer(split_chunks(chunks), k1=1.2, b=0.75, k3=8.0, title_weight=2.0)
    # A title weight of 2 is the title's terms counted twice, in tf and in length.
    corpus = [
        index_terms(text) + 2 * index_terms(title) for text, title in zip(DOCS, TITLES, strict=True)
    ]
    terms = list(dict.fromkeys(query_terms(query)))
    everything = np.arange(len(DOCS), dtype=np.int64)
    expected = oracle(corpus).get_scores(terms)
    actual = layer.index.scores([layer.term_ids.get(t, UNKNOWN_TERM) for t in terms], everything)
    np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-9)


@pytest.mark.parametrize("query", ["pool connection", "connection timeouts pool"])
def test_porter_search_gives_each_ranked_doc_its_rank_bm25_score(query: str) -> None:
    chunks = [
        Chunk(text=text, title=title, source="s", kind="durable", position=position)
        for position, (text, title) in enumerate(zip(DOCS, TITLES, strict=True))
    ]
    layer = PorterLayer(split_chunks(chunks), k1=1.2, b=0.75, k3=8.0, title_weight=2.0)
    corpus = [
        index_terms(text) + 2 * index_terms(title) for text, title in zip(DOCS, TITLES, strict=True)
    ]
    # Every doc holding all terms first, then the any-term fill: fusion reads each one's score.
    ranking = layer.search(query, np.ones(len(DOCS), dtype=bool), 10, fill_below=10)
    expected = oracle(corpus).get_scores(list(dict.fromkeys(query_terms(query))))
    np.testing.assert_allclose(ranking.scores, expected[ranking.docs], rtol=0, atol=1e-9)
    assert 0 < ranking.matched_in_full < len(ranking.docs)


def test_scores_only_for_candidates_match_full_scores() -> None:
    corpus = [index_terms(doc) for doc in DOCS]
    index, ids = posting_index(corpus)
    terms = ["connect", "pool"]
    full = oracle(corpus).get_scores(terms)
    subset = np.array([1, 3], dtype=np.int64)
    actual = index.scores([ids[term] for term in terms], subset)
    np.testing.assert_allclose(actual, full[[1, 3]], rtol=0, atol=1e-9)


def test_all_terms_then_any_term_candidates() -> None:
    index, ids = posting_index([["a", "b"], ["a"], ["c"]])
    everywhere = np.ones(3, dtype=bool)
    docs, every, _ = index.every_then_any([ids["a"], ids["b"]], everywhere, 10, 0)
    assert (docs.tolist(), every) == ([0], 1)
    docs, every, _ = index.every_then_any([ids["a"], ids["b"]], everywhere, 10, 2)
    assert (docs.tolist(), every) == ([0, 1], 1)
    docs, every, _ = index.every_then_any([ids["a"], UNKNOWN_TERM], everywhere, 10, 2)
    assert (docs.tolist(), every) == ([1, 0], 0)


@settings(max_examples=60, deadline=None)
@given(
    corpus=st.lists(st.lists(st.sampled_from("abcdefg"), max_size=12), min_size=1, max_size=8),
    query=st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=4, unique=True),
)
def test_posting_index_equals_rank_bm25_on_random_corpora(
    corpus: list[list[str]], query: list[str]
) -> None:
    assume(any(corpus))  # rank_bm25 divides by a zero average length; we do not.
    index, ids = posting_index(corpus)
    everything = np.arange(len(corpus), dtype=np.int64)
    actual = index.scores([ids.get(term, UNKNOWN_TERM) for term in query], everything)
    np.testing.assert_allclose(actual, oracle(corpus).get_scores(query), rtol=0, atol=1e-9)


def every_then_any_written_out(
    index: PostingIndex, terms: list[int], holding: list[set[int]], depth: int, fill_below: int
) -> list[tuple[int, float]]:
    """`every_then_any` written out: the visible docs holding every term (`holding[doc]` are
    a doc's terms, the hidden ones holding none), each scored term by term and ranked;
    when fewer than `fill_below`, then those holding any other, up to `depth` in all."""

    def ranked(docs: list[int]) -> list[tuple[int, float]]:
        scores = summed_one_at_a_time(index, terms, docs, [1.0] * len(terms))
        return sorted(zip(docs, scores, strict=True), key=lambda pair: (-pair[1], pair[0]))

    wanted = set(terms)
    every = [doc for doc, held in enumerate(holding) if held and wanted <= held]
    best = ranked(every)[:depth]
    if len(best) >= fill_below:
        return best
    others = [doc for doc, held in enumerate(holding) if held & wanted and doc not in every]
    return best + ranked(others)[: depth - len(best)]


@settings(max_examples=80, deadline=None)
@given(
    corpus=st.lists(
        st.lists(st.sampled_from("abcdef"), min_size=1, max_size=12), min_size=1, max_size=40
    ),
    query=st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=4, unique=True),
    hidden=st.sets(st.integers(0, 39)),
    depth=st.integers(0, 45),
    fill_below=st.integers(0, 46),
)
def test_every_then_any_is_every_doc_with_a_term_scored_then_ranked(
    corpus: list[list[str]], query: list[str], hidden: set[int], depth: int, fill_below: int
) -> None:
    # Six letters over short docs: many docs tie, which the heap must break by doc id.
    index, ids = posting_index(corpus)
    terms = [ids.get(term, UNKNOWN_TERM) for term in query]
    visible = np.array([doc not in hidden for doc in range(len(corpus))])
    docs, every, scores = index.every_then_any(terms, visible, depth, fill_below)
    holding = [
        {ids[word] for word in words} if visible[doc] else set() for doc, words in enumerate(corpus)
    ]
    expected = every_then_any_written_out(index, terms, holding, depth, fill_below)
    assert list(zip(docs.tolist(), scores.tolist(), strict=True)) == expected
    assert every == sum(1 for doc in docs.tolist() if set(terms) <= holding[doc])


def test_query_term_weight_saturates_with_k3() -> None:
    assert query_term_weight(1, 8.0) == 1.0
    assert query_term_weight(2, 8.0) == 9 * 2 / 10
    assert query_term_weight(3, 0.0) == 1.0


def test_query_weights_scale_each_terms_share() -> None:
    index = PostingIndex(
        [0, 0, 1], [0, 1, 1], [1, 2, 1], term_count=2, doc_lengths=[1, 3], k1=1.2, b=0.75
    )
    candidates = np.array([0, 1])
    plain = index.scores([0, 1], candidates)
    doubled = index.scores([0, 1], candidates, [2.0, 1.0])
    only_second = index.scores([1], candidates)
    assert np.allclose(doubled, 2 * plain - only_second)


@settings(max_examples=150, deadline=None)
@given(
    counts=st.lists(
        st.dictionaries(st.sampled_from("abcd"), st.integers(1, 60), min_size=1),
        min_size=2,
        max_size=30,
    ),
    depth=st.integers(1, 4),
)
def test_every_then_any_fills_with_no_doc_left_out_that_belongs_in_the_best(
    counts: list[dict[str, int]], depth: int
) -> None:
    # Counts up to 60 put shares near their bound, (k1 + 1) * idf, and a small depth
    # fills the best early: a doc of the commonest term alone that ties the worst
    # of the best, or falls just short of it, must be ranked by score, then doc id.
    corpus = [[term for term, count in doc.items() for _ in range(count)] for doc in counts]
    index, ids = posting_index(corpus)
    terms = list(ids.values())
    everywhere = np.ones(len(corpus), dtype=bool)
    docs, _, scores = index.every_then_any(terms, everywhere, depth, depth)
    holding = [{ids[term] for term in doc} for doc in counts]
    expected = every_then_any_written_out(index, terms, holding, depth, depth)
    assert list(zip(docs.tolist(), scores.tolist(), strict=True)) == expected


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    doc_count=st.sampled_from([300, 3000, 70_000]),
    rare_terms=st.integers(1, 3),
    depth=st.sampled_from([1, 10, 100]),
    high_counts=st.booleans(),
)
def test_every_then_any_fills_from_the_rarer_terms_as_every_doc_scored_then_ranked(
    seed: int, doc_count: int, rare_terms: int, depth: int, high_counts: bool
) -> None:
    # One term in most docs and a few rare ones: the fill first ranks the rare terms'
    # docs, and skips the common term's posting when their best outscore all it can
    # give alone, else walks it for the docs holding it alone. Hidden docs and those
    # holding every term (ranked first) must count nowhere; 70,000 docs span two id
    # segments.
    rng = np.random.default_rng(seed)
    shares = [0.9, *rng.uniform(0.002, 0.05, rare_terms).tolist()]
    term_docs = [np.flatnonzero(rng.random(doc_count) < share) for share in shares]
    top_count = 60 if high_counts else 3
    rows = [
        (term, doc, int(count))
        for term, posting in enumerate(term_docs)
        for doc, count in zip(
            posting.tolist(), rng.integers(1, top_count + 1, len(posting)), strict=True
        )
    ]
    terms, docs, weights = zip(*rows, strict=True)
    lengths = rng.integers(1, 40, doc_count).tolist()
    index = PostingIndex(
        terms, docs, weights, term_count=len(shares), doc_lengths=lengths, k1=1.2, b=0.75
    )
    visible = rng.random(doc_count) < 0.9
    query = rng.permutation(len(shares)).tolist()

    found, every, scores = index.every_then_any(query, visible, depth, depth)

    def ranked(docs: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], Floats]:
        docs = docs[visible[docs]]
        doc_scores = index.scores(query, docs)
        order = np.lexsort((docs, -doc_scores))
        return docs[order], doc_scores[order]

    every_doc, every_score = ranked(reduce(np.intersect1d, term_docs))
    any_doc, any_score = ranked(np.setdiff1d(np.unique(np.concatenate(term_docs)), every_doc))
    expected_docs = np.concatenate((every_doc[:depth], any_doc))[:depth]
    expected_scores = np.concatenate((every_score[:depth], any_score))[:depth]
    assert every == min(len(every_doc), depth)
    assert found.tolist() == expected_docs.tolist()
    assert scores.tobytes() == expected_scores.tobytes()


def summed_one_at_a_time(
    index: PostingIndex, terms: list[int], candidates: list[int], query_weights: list[float]
) -> list[float]:
    """BM25 of each candidate written out: Python floats added term by term from 0.0."""
    sums = []
    for doc in candidates:
        total = 0.0
        for term, weight in zip(terms, query_weights, strict=True):
            if term == UNKNOWN_TERM:
                continue
            docs, tfs = index.postings(term)
            held = dict(zip(docs.tolist(), tfs.tolist(), strict=True))
            tf = float(held.get(doc, 0.0))
            norm = float(index.norms[doc])
            total += weight * (idf(index.size, len(docs)) * (tf * (1.2 + 1) / (norm + tf)))
        sums.append(total)
    return sums


@settings(max_examples=80, deadline=None)
@given(
    corpus=st.lists(
        st.lists(st.sampled_from("abcdef"), min_size=1, max_size=30), min_size=1, max_size=40
    ),
    query=st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=5, unique=True),
    picked=st.sets(st.integers(0, 39)),
    query_weights=st.lists(st.floats(0.25, 3.0), min_size=5, max_size=5),
    scale=st.sampled_from([1.0, 1.5, 1.1]),
)
def test_scores_by_either_walk_are_the_sum_term_by_term_to_the_bit(
    corpus: list[list[str]],
    query: list[str],
    picked: set[int],
    query_weights: list[float],
    scale: float,
) -> None:
    # A few candidates and every doc, each summed term by term.
    # Counts are stored as uint8, times 1.5 as float32, times 1.1 as float64.
    index, ids = posting_index(corpus, scale)
    terms = [ids.get(term, UNKNOWN_TERM) for term in query]
    weights = query_weights[: len(terms)]
    for candidates in (sorted(picked & set(range(len(corpus)))), list(range(len(corpus)))):
        actual = index.scores(terms, np.array(candidates, dtype=np.int64), weights)
        expected = summed_one_at_a_time(index, terms, candidates, weights)
        assert actual.tolist() == expected


@given(
    corpus=st.lists(st.sets(st.sampled_from("abcde"), min_size=1), min_size=1, max_size=12),
    query=st.lists(st.sampled_from("abcde"), min_size=1, max_size=5, unique=True),
)
def test_every_then_any_ranks_first_every_doc_with_all_terms(
    corpus: list[set[str]], query: list[str]
) -> None:
    index, ids = posting_index([sorted(terms) for terms in corpus])
    terms = [ids.get(term, UNKNOWN_TERM) for term in query]
    docs, every, _ = index.every_then_any(terms, np.ones(len(corpus), dtype=bool), 20, 0)
    assert sorted(docs[:every].tolist()) == [
        doc for doc, held in enumerate(corpus) if set(query) <= held
    ]
    assert every == len(docs)


def test_concatenated_ranges_are_each_start_counted_up_by_its_length() -> None:
    starts = np.array([5, 0, 9, 2], dtype=np.int64)
    lengths = np.array([3, 0, 1, 2], dtype=np.int64)
    assert concatenated_ranges(starts, lengths).tolist() == [5, 6, 7, 9, 2, 3]
    empty = np.empty(0, dtype=np.int64)
    assert concatenated_ranges(empty, empty).tolist() == []


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("doc_len", -2.0, "lengths are negative"),
        ("doc_len", math.nan, "lengths are negative or not finite"),
        ("weights", math.inf, "weights are negative or not finite"),
        ("weights", -1.5, "weights are negative"),
    ],
)
def test_stored_refuses_lengths_and_weights_no_share_bound_holds_for(
    name: str, value: float, message: str
) -> None:
    # A negative length makes a negative norm, and a share past (k1 + 1) * idf: the
    # rankings that skip docs by that bound would skip the best one.
    index, _ = posting_index([["a", "b"], ["a"], ["b", "b"]], scale=1.5)
    arrays = {key: array.copy() for key, array in index.arrays().items()}
    arrays[name][1] = value
    with pytest.raises(ValueError, match=message):
        PostingIndex.stored(arrays, k1=1.2, b=0.75)
