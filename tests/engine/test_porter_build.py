"""The porter layer's postings, built a block of chunks at a time, are the chunks' stemmed counts."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_qualbench.engine import split
from pytest_qualbench.engine.analysis import STOPWORDS, stem, tokenize
from pytest_qualbench.engine.arrays import DocIds
from pytest_qualbench.engine.bm25 import UNKNOWN_TERM
from pytest_qualbench.engine.porter import PorterLayer, weighted_pairs
from pytest_qualbench.engine.split import split_chunks
from pytest_qualbench.engine.types import Chunk

TEXTS = [
    ("Running runs", "Run"),
    ("the DB_SSL_CERT path, running late", "Certs"),
    ("café Über straße 中文 1999", ""),
    ("", "only a title"),
    ("getUserName returns the user name", "Users"),
    ("runs and runs", "Running"),
    ("ﬁle ﬁles filing", "The File"),
]


def chunks() -> list[Chunk]:
    return [
        Chunk(text, title, "s", "durable", position) for position, (text, title) in enumerate(TEXTS)
    ]


def build(title_weight: float = 2.0) -> PorterLayer:
    return PorterLayer(split_chunks(chunks()), k1=1.2, b=0.75, k3=8.0, title_weight=title_weight)


def postings(layer: PorterLayer) -> dict[str, list[tuple[int, float]]]:
    """Stem -> [(doc, weight)], from the index's CSR arrays."""
    found = {}
    for term, term_id in layer.term_ids.items():
        docs, weights = layer.index.postings(term_id)
        found[term] = list(zip(docs.tolist(), weights.tolist(), strict=True))
    return found


def expected(title_weight: float) -> dict[str, list[tuple[int, float]]]:
    """What each chunk holds, counted by hand-written Python: body count + weight * title count."""
    rows: dict[str, list[tuple[int, float]]] = {}
    for doc, (text, title) in enumerate(TEXTS):
        body = Counter(stem(token) for token in tokenize(text) if token not in STOPWORDS)
        heading = Counter(stem(token) for token in tokenize(title) if token not in STOPWORDS)
        for term in sorted(body.keys() | heading.keys()):
            rows.setdefault(term, []).append((doc, body[term] + title_weight * heading[term]))
    return rows


@pytest.mark.parametrize("block_docs", [1, 2, 3, 1024])
def test_postings_hold_each_chunks_weighted_counts(
    monkeypatch: pytest.MonkeyPatch, block_docs: int
) -> None:
    monkeypatch.setattr(split, "BLOCK_DOCS", block_docs)
    layer = build(title_weight=2.5)
    assert postings(layer) == expected(2.5)
    assert layer.index.doc_len.tolist() == [
        sum(token not in STOPWORDS for token in tokenize(text))
        + 2.5 * sum(token not in STOPWORDS for token in tokenize(title))
        for text, title in TEXTS
    ]


@pytest.mark.parametrize("block_docs", [1, 3])
def test_blocks_change_nothing_a_query_sees(
    monkeypatch: pytest.MonkeyPatch, block_docs: int
) -> None:
    whole = build()
    monkeypatch.setattr(split, "BLOCK_DOCS", block_docs)
    blocked = build()
    assert blocked.word_frequency == whole.word_frequency
    assert blocked.word_terms.keys() == whole.word_terms.keys()
    assert blocked.identifier_parts == whole.identifier_parts
    assert postings(blocked) == postings(whole)
    assert blocked.index.weights.dtype == whole.index.weights.dtype


def test_document_frequency_counts_a_chunk_once() -> None:
    layer = build()
    # "runs" is in the bodies of chunks 0 and 5 (twice in 5), "running" in 1 and 5's title.
    assert layer.word_frequency["runs"] == 2
    assert layer.word_frequency["running"] == 3
    assert "cert" in layer.identifier_parts
    assert "certs" not in layer.identifier_parts


column = st.lists(st.tuples(st.integers(-1, 6), st.integers(0, 4)), max_size=40)


@settings(max_examples=300)
@given(column, column, st.sampled_from([1.0, 2.0, 2.5, 0.3]))
def test_weighted_pairs_are_body_plus_weighted_title_counts(
    body: list[tuple[int, int]], title: list[tuple[int, int]], title_weight: float
) -> None:
    def columns(rows: list[tuple[int, int]]) -> tuple[DocIds, DocIds]:
        terms, docs = zip(*rows, strict=True) if rows else ((), ())
        return np.array(terms, dtype=np.int64), np.array(docs, dtype=np.int64)

    pairs, weights = weighted_pairs(columns(body), columns(title), title_weight, 5)
    body_counts = Counter(term * 5 + doc for term, doc in body if term != UNKNOWN_TERM)
    title_counts = Counter(term * 5 + doc for term, doc in title if term != UNKNOWN_TERM)
    every = sorted(body_counts.keys() | title_counts.keys())
    assert pairs.tolist() == every
    assert weights.tolist() == [
        0.0 + 1.0 * body_counts[pair] + title_weight * title_counts[pair] for pair in every
    ]
