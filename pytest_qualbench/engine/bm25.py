"""BM25 over compact postings: the scoring core both layers share.

Postings are stored CSR-style (one offsets array, one doc-id array, one weight
array, grouped by term, doc ids ascending), so a query touches only the slices
of its own terms and the documents in them.

IDF variant: log((N + 1) / df), the IDF of rank_bm25's `BM25Plus`; with
delta = 0 that class scores exactly like this module. Unlike the Okapi IDF it is
never negative, so a term that occurs in most chunks of a small corpus still
counts for, not against, the chunks that contain it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

DocIds = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


def idf(corpus_size: int, document_frequency: int) -> float:
    """BM25 IDF log((N + 1) / df), as rank_bm25's BM25Plus computes it."""
    return math.log((corpus_size + 1) / document_frequency)


def term_scores(
    term_idf: float, tf: Floats, doc_len: Floats, avgdl: float, k1: float, b: float
) -> Floats:
    """BM25 term weight idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)) (Robertson)."""
    norm = k1 * (1 - b + b * doc_len / avgdl)
    result: Floats = term_idf * (tf * (k1 + 1) / (norm + tf))
    return result


class PostingIndex:
    """Weighted term frequencies per document, grouped by term, with BM25 scoring."""

    def __init__(
        self, documents: Sequence[Mapping[str, float]], doc_lengths: Sequence[float],
        *, k1: float, b: float,
    ) -> None:
        self.k1 = k1
        self.b = b
        self.size = len(documents)
        self.doc_len: Floats = np.asarray(doc_lengths, dtype=np.float64)
        total = float(self.doc_len.sum())
        # An all-empty corpus has no length to normalise by; 1.0 keeps the formula defined.
        self.avgdl = total / self.size if self.size and total > 0 else 1.0
        self.term_ids: dict[str, int] = {}
        term_column: list[int] = []
        doc_column: list[int] = []
        weight_column: list[float] = []
        for doc_id, counts in enumerate(documents):
            for term, weight in counts.items():
                term_column.append(self.term_ids.setdefault(term, len(self.term_ids)))
                doc_column.append(doc_id)
                weight_column.append(weight)
        terms = np.asarray(term_column, dtype=np.int64)
        order = np.argsort(terms, kind="stable")
        self.docs: DocIds = np.asarray(doc_column, dtype=np.int64)[order]
        self.weights: Floats = np.asarray(weight_column, dtype=np.float64)[order]
        counts_per_term = np.bincount(terms, minlength=len(self.term_ids))
        self.offsets: DocIds = np.concatenate(([0], np.cumsum(counts_per_term))).astype(np.int64)

    def __contains__(self, term: str) -> bool:
        return term in self.term_ids

    def document_frequency(self, term: str) -> int:
        term_id = self.term_ids.get(term)
        if term_id is None:
            return 0
        return int(self.offsets[term_id + 1] - self.offsets[term_id])

    def postings(self, term: str) -> tuple[DocIds, Floats]:
        """The ascending doc ids holding the term and its weighted frequency in each."""
        term_id = self.term_ids.get(term)
        if term_id is None:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
        start, end = self.offsets[term_id], self.offsets[term_id + 1]
        return self.docs[start:end], self.weights[start:end]

    def docs_with_all(self, terms: Sequence[str]) -> DocIds:
        """Documents holding every term, intersecting the shortest postings first."""
        if not terms or any(term not in self.term_ids for term in terms):
            return np.empty(0, dtype=np.int64)
        ordered = sorted(terms, key=lambda term: (self.document_frequency(term), term))
        found = self.postings(ordered[0])[0]
        for term in ordered[1:]:
            if not len(found):
                break
            found = np.intersect1d(found, self.postings(term)[0], assume_unique=True)
        return found

    def docs_with_any(self, terms: Sequence[str]) -> DocIds:
        """Documents holding at least one of the terms."""
        lists = [self.postings(term)[0] for term in terms]
        if not lists:
            return np.empty(0, dtype=np.int64)
        return np.unique(np.concatenate(lists))

    def scores(self, terms: Sequence[str], candidates: DocIds) -> Floats:
        """BM25 of each candidate (ascending ids) for the terms, summed in term order."""
        total: Floats = np.zeros(len(candidates), dtype=np.float64)
        if not len(candidates):
            return total
        candidate_len = self.doc_len[candidates]
        for term in terms:
            docs, weights = self.postings(term)
            if not len(docs):
                continue
            slots = np.minimum(np.searchsorted(docs, candidates), len(docs) - 1)
            tf = np.where(docs[slots] == candidates, weights[slots], 0.0)
            term_idf = idf(self.size, len(docs))
            total += term_scores(term_idf, tf, candidate_len, self.avgdl, self.k1, self.b)
        return total
