"""BM25 scores against rank_bm25, the oracle (BM25Plus with delta=0 has our IDF)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rank_bm25 import BM25Plus

from pytest_qualbench.engine.analysis import index_terms, query_terms
from pytest_qualbench.engine.bm25 import PostingIndex, idf, term_scores
from pytest_qualbench.engine.porter import PorterLayer
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


def test_idf_is_log_of_n_plus_one_over_df() -> None:
    assert idf(5, 2) == math.log((5 + 1) / 2)


def test_term_score_written_out() -> None:
    # tf=2, dl=4, avgdl=5: 1.5 * 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 4 / 5))
    expected = 1.5 * 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 4 / 5))
    result = term_scores(1.5, np.array([2.0]), np.array([4.0]), 5.0, 1.2, 0.75)
    assert result[0] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    "query", ["connection pool", "connections timeouts", "debug", "eviction hot keys", "nothing"]
)
def test_posting_index_equals_rank_bm25(query: str) -> None:
    corpus = [index_terms(doc) for doc in DOCS]
    documents = [{t: float(corpus_doc.count(t)) for t in corpus_doc} for corpus_doc in corpus]
    index = PostingIndex(documents, [len(doc) for doc in corpus], k1=1.2, b=0.75)
    terms = list(dict.fromkeys(query_terms(query)))
    everything = np.arange(len(DOCS), dtype=np.int64)
    expected = oracle(corpus).get_scores(terms)
    np.testing.assert_allclose(index.scores(terms, everything), expected, rtol=0, atol=1e-9)


@pytest.mark.parametrize("query", ["pool connection", "eviction", "logging level debug"])
def test_porter_layer_with_title_weight_two_equals_rank_bm25_with_title_twice(query: str) -> None:
    chunks = [
        Chunk(text=text, title=title, source="s", kind="durable", position=position)
        for position, (text, title) in enumerate(zip(DOCS, TITLES, strict=True))
    ]
    layer = PorterLayer(chunks, k1=1.2, b=0.75, title_weight=2.0)
    # A title weight of 2 is the title's terms counted twice, in tf and in length.
    corpus = [
        index_terms(text) + 2 * index_terms(title)
        for text, title in zip(DOCS, TITLES, strict=True)
    ]
    terms = list(dict.fromkeys(query_terms(query)))
    everything = np.arange(len(DOCS), dtype=np.int64)
    expected = oracle(corpus).get_scores(terms)
    np.testing.assert_allclose(layer.index.scores(terms, everything), expected, rtol=0, atol=1e-9)


def test_scores_only_for_candidates_match_full_scores() -> None:
    corpus = [index_terms(doc) for doc in DOCS]
    documents = [{t: float(doc.count(t)) for t in doc} for doc in corpus]
    index = PostingIndex(documents, [len(doc) for doc in corpus], k1=1.2, b=0.75)
    terms = ["connect", "pool"]
    full = oracle(corpus).get_scores(terms)
    subset = np.array([1, 3], dtype=np.int64)
    np.testing.assert_allclose(index.scores(terms, subset), full[[1, 3]], rtol=0, atol=1e-9)


def test_all_terms_then_any_term_candidates() -> None:
    documents = [{"a": 1.0, "b": 1.0}, {"a": 1.0}, {"c": 1.0}]
    index = PostingIndex(documents, [2, 1, 1], k1=1.2, b=0.75)
    assert index.docs_with_all(["a", "b"]).tolist() == [0]
    assert index.docs_with_all(["a", "zzz"]).tolist() == []
    assert index.docs_with_any(["b", "c", "zzz"]).tolist() == [0, 2]
