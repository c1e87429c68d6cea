"""BM25 over compact postings: the scoring core both layers share.

Postings are stored CSR-style (an offsets array, a doc-id array and a weight
array, grouped by term id, doc ids ascending), so a query touches only the
slices of its own terms and the documents in them. Term id -1 stands for a term
the corpus does not hold: its posting is empty.

IDF variant: log((N + 1) / df), the IDF of rank_bm25's `BM25Plus`; with
delta = 0 that class scores exactly like this module. Unlike the Okapi IDF it is
never negative, so a term that occurs in most chunks of a small corpus still
counts for, not against, the chunks that contain it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from pytest_qualbench.engine.arrays import DocIds, Floats, Mask, Weights
from pytest_qualbench.engine.kernel import walks
from pytest_qualbench.engine.segmented_ids import DENSE_ARRAY_NAMES, SegmentedIds

UNKNOWN_TERM = -1


class KnownTerms(NamedTuple):
    """A query's terms that have a posting, with the IDF and the query weight of each:
    the three arrays a compiled walk takes, in that order."""

    terms: DocIds
    idfs: Floats
    query_weights: Floats


def idf(corpus_size: int, document_frequency: int) -> float:
    """BM25 IDF log((N + 1) / df), as rank_bm25's BM25Plus computes it."""
    return math.log((corpus_size + 1) / document_frequency)


def length_norms(doc_len: Floats, avgdl: float, k1: float, b: float) -> Floats:
    """BM25's per-document denominator part k1 * (1 - b + b * dl / avgdl) (Robertson)."""
    norms: Floats = k1 * (1 - b + b * doc_len / avgdl)
    return norms


def query_term_weight(query_frequency: int, k3: float) -> float:
    """(k3 + 1) * qtf / (k3 + qtf): a term's weight by its count in the query (Robertson et al. 1994)."""
    return (k3 + 1) * query_frequency / (k3 + query_frequency)


def concatenated_ranges(starts: DocIds, lengths: DocIds) -> DocIds:
    """start, start + 1, ..., start + length - 1 for each pair, all in one array, in order.

    One repeat and one arange instead of a Python loop of aranges.
    """
    ranges: DocIds = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    ranges += np.arange(len(ranges), dtype=np.int64)
    return ranges


# The arrays `PostingIndex.arrays` gives and `PostingIndex.stored` takes.
ARRAY_NAMES = ("local_ids", "id_bounds", *DENSE_ARRAY_NAMES, "weights", "doc_len")
# Narrowest first: term frequencies are small integers, so most postings fit a byte.
EXACT_WEIGHT_TYPES: tuple[type[np.uint8 | np.uint16 | np.float32], ...] = (
    np.uint8,
    np.uint16,
    np.float32,
)


def narrowest_exact(values: Floats | Weights) -> Weights:
    """The first of EXACT_WEIGHT_TYPES every value survives a round trip through, else float64."""
    if values.dtype.kind == "u" and len(values):
        # Counts: the range decides, with no float64 copy of the column (620 MB at 10^5 chunks).
        largest = int(values.max())
        for weight_type in (np.uint8, np.uint16):
            if largest <= np.iinfo(weight_type).max:
                narrow_count: Weights = values.astype(weight_type)
                return narrow_count
    for weight_type in EXACT_WEIGHT_TYPES:
        narrow: Weights = values.astype(weight_type)
        if np.array_equal(narrow, values):
            return narrow
    return values


class PostingIndex:
    """Weighted term frequencies per (term, document) pair, with BM25 scoring.

    Rows are given one per (term, document) pair, in ascending document order or
    already sorted by (term, document); the layers give the latter, which makes
    the stable sort here a linear pass. Doc ids are stored two bytes each
    (`segmented_ids`), weights in the narrowest exact type.
    """

    def __init__(
        self,
        terms: npt.ArrayLike,
        docs: npt.ArrayLike,
        weights: npt.ArrayLike,
        *,
        term_count: int,
        doc_lengths: npt.ArrayLike,
        k1: float,
        b: float,
    ) -> None:
        doc_len = np.asarray(doc_lengths, dtype=np.float64)
        term_column = np.asarray(terms, dtype=np.int64)
        doc_column = np.asarray(docs, dtype=np.int64)
        # A stable sort by term keeps each posting's docs ascending; on rows already sorted by
        # term (what the layers give) it is a linear pass.
        order = np.argsort(term_column, kind="stable")
        per_term = np.bincount(term_column, minlength=term_count)
        offsets = np.concatenate(([0], np.cumsum(per_term))).astype(np.int64)
        self._hold(
            SegmentedIds.of(offsets, doc_column[order], len(doc_len)),
            narrowest_exact(np.asarray(weights, dtype=np.float64)[order]),
            doc_len,
            k1=k1,
            b=b,
        )

    @classmethod
    def grouped(
        cls,
        ids: SegmentedIds,
        counts: Weights,
        doc_lengths: npt.ArrayLike,
        *,
        k1: float,
        b: float,
    ) -> PostingIndex:
        """An index over rows already grouped by term (term t's are posting t of `ids`, and
        the same rows of `counts`): no term column and no sort, the build's largest
        temporaries at 10^5 chunks."""
        doc_len = np.asarray(doc_lengths, dtype=np.float64)
        index = cls.__new__(cls)
        index._hold(ids, narrowest_exact(counts), doc_len, k1=k1, b=b)
        return index

    def _hold(
        self,
        ids: SegmentedIds,
        weights: Weights,
        doc_len: Floats,
        *,
        k1: float,
        b: float,
    ) -> None:
        self.k1 = k1
        self.b = b
        self.ids = ids
        self.weights = weights
        self.doc_len = doc_len
        self.size = len(doc_len)
        self.term_count = ids.key_count
        total = float(doc_len.sum())
        # An all-empty corpus has no length to normalise by; 1.0 keeps the formula defined.
        self.avgdl = total / self.size if total > 0 else 1.0
        self.norms = length_norms(doc_len, self.avgdl, k1, b)

    def arrays(self) -> dict[str, npt.NDArray[Any]]:
        """What `stored` needs to make this index again: its arrays, nothing derived."""
        return {**self.ids.arrays(), "weights": self.weights, "doc_len": self.doc_len}

    @classmethod
    def stored(cls, arrays: Mapping[str, npt.NDArray[Any]], *, k1: float, b: float) -> PostingIndex:
        """The index whose `arrays()` these are; ValueError when they cannot be one.

        Arrays read from disk are checked for shape and range, so a damaged
        file fails here, not as a wrong answer or an IndexError mid-query.
        """
        weights, doc_len = arrays["weights"], arrays["doc_len"]
        if weights.ndim != 1 or doc_len.ndim != 1 or doc_len.dtype != np.float64:
            raise ValueError("posting arrays have the wrong types")
        ids = SegmentedIds.stored(arrays, len(doc_len))
        if weights.dtype not in (*EXACT_WEIGHT_TYPES, np.float64) or len(weights) != len(ids.local):
            raise ValueError("posting weights do not match the doc ids")
        # The compiled rankings skip docs by a bound on each share that holds only for
        # lengths and weights that are finite and not negative.
        if not (np.isfinite(doc_len).all() and (doc_len >= 0).all()):
            raise ValueError("document lengths are negative or not finite")
        if weights.dtype.kind == "f" and not (np.isfinite(weights).all() and (weights >= 0).all()):
            raise ValueError("posting weights are negative or not finite")
        index = cls.__new__(cls)
        index._hold(ids, weights, doc_len, k1=k1, b=b)
        return index

    def postings(self, term: int) -> tuple[DocIds, Weights]:
        """The ascending doc ids holding the term and its weighted frequency in each."""
        if term == UNKNOWN_TERM:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
        start, end = self.ids.span(term)
        return self.ids.ids(term), self.weights[start:end]

    def scores(
        self, terms: Sequence[int], candidates: DocIds, query_weights: Sequence[float] = ()
    ) -> Floats:
        """BM25 of each candidate (ascending ids) for the terms, summed in term order.

        `query_weights` scales each term's share (all 1 when not given). The postings
        are walked by the kernel (`walks.add_scores`): a numpy pass per term
        was most of a query's time.
        """
        total: Floats = np.zeros(len(candidates), dtype=np.float64)
        known = self._known(terms, query_weights)
        if not len(candidates) or not len(known.terms):
            return total
        walks.add_scores(
            *self._postings(),
            *known,
            self.k1,
            np.ascontiguousarray(candidates, dtype=np.int64),
            total,
        )
        return total

    def best(
        self,
        terms: Sequence[int],
        candidates: DocIds,
        depth: int,
        query_weights: Sequence[float] = (),
    ) -> tuple[DocIds, Floats]:
        """The `depth` best candidates (ascending ids) by `scores`, best first (equal
        scores by doc id), and their scores.

        Ranked by the kernel (`walks.best_of`): of tens of thousands of
        candidates, only those the terms of the largest shares leave within reach of
        the best are scored through every term.
        """
        known = self._known(terms, query_weights)
        docs, scores = walks.best_of(
            *self._postings(),
            *known,
            self.k1,
            np.ascontiguousarray(candidates, dtype=np.int64),
            depth,
            self._bounded(known),
        )
        return np.frombuffer(docs, dtype=np.int64), np.frombuffer(scores, dtype=np.float64)

    def every_then_any(
        self,
        terms: Sequence[int],
        visible: Mask,
        depth: int,
        fill_below: int,
        query_weights: Sequence[float] = (),
    ) -> tuple[DocIds, int, Floats]:
        """The `depth` best visible docs holding every term, as `best` ranks them; when
        fewer than `fill_below` do, then the best visible docs holding any of the terms,
        up to `depth` in all. Their ids, how many hold every term, and their scores.

        In one call of the kernel (`walks.every_then_any`): the intersection, the fill
        and their join were six calls from Python, each paying the interpreter's cold
        caches after the walk before it. The fill scores the docs of every term but the
        commonest, then walks the commonest term's posting for the docs holding it
        alone, one share each, unless even its largest share cannot reach the best: an
        any-term fill ranks tens of thousands of docs at 10^5 chunks for a hundred.
        """
        known = self._known(terms, query_weights)
        docs, scores, holding_every = walks.every_then_any(
            *self._postings(),
            *known,
            self.k1,
            np.array(terms, dtype=np.int64),
            visible,
            depth,
            fill_below,
            self._bounded(known),
        )
        ranked = np.frombuffer(docs, dtype=np.int64)
        return ranked, holding_every, np.frombuffer(scores, dtype=np.float64)

    def _bounded(self, known: KnownTerms) -> bool:
        """Whether no share exceeds (k1 + 1) * idf * query weight, the bound by which the
        compiled rankings skip docs and postings: so while every length norm is positive
        and no query weight negative."""
        return (
            self.k1 > 0
            and 0 <= self.b <= 1
            and all(weight >= 0 for weight in known.query_weights.tolist())
        )

    def _postings(
        self,
    ) -> tuple[
        npt.NDArray[np.uint16],
        DocIds,
        int,
        DocIds,
        npt.NDArray[np.uint64],
        npt.NDArray[np.uint16],
        Weights,
        Floats,
    ]:
        """The arrays every compiled walk reads: ids, runs, dense sets, weights and
        length norms."""
        return (*self.ids.walked(), self.weights, self.norms)

    def _known(self, terms: Sequence[int], query_weights: Sequence[float]) -> KnownTerms:
        """The terms with a posting, in query order, with their IDF (`idf`) and query
        weight, found by the kernel (`walks.known_terms`): in Python a term cost
        0.4 us, and a trigram query has 30-40."""
        known, idfs, weights = walks.known_terms(
            self.ids.bounds,
            self.ids.segments,
            terms,
            query_weights or [1.0] * len(terms),
            self.size,
        )
        return KnownTerms(
            np.frombuffer(known, dtype=np.int64),
            np.frombuffer(idfs, dtype=np.float64),
            np.frombuffer(weights, dtype=np.float64),
        )
