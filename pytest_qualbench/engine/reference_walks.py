"""What the reference kernel (`reference_kernel`) is built of: segmented postings and BM25
scoring in numpy, the compiled kernel's argument checks, and its order of scored docs.

`Postings` reads `segmented_ids` arrays as `_postings.c` does, checking every bound
against the ids it indexes; `Scoring` adds each term's BM25 share one IEEE float64
operation at a time in the compiled kernel's order, so the sums are its sums to the bit.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from pytest_qualbench.engine.segmented_ids import SEGMENT_BITS

# Fusion keeps which rankings found a doc as bits of a 64-bit word.
MOST_RANKINGS = 63
# Ranks and the RRF constant are summed as C's Py_ssize_t: bounded far below overflow.
MOST_RRF_K = 1 << 40
# Positions of a segment count beyond which ids would not fit int64 arithmetic safely.
MOST_SEGMENTS = 1 << 31
WEIGHT_TYPES = (np.uint8, np.uint16, np.float32, np.float64)

Ids = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


def checked_array(
    value: object, dtype: type[np.generic], name: str, *, writable: bool = False
) -> Any:
    """`value` as the 1-d, C-contiguous, aligned array of `dtype` a compiled walk reads;
    TypeError for an object that is no array, ValueError for one of another type or shape."""
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name}: expected a numpy array, got {type(value).__name__}")
    if value.ndim != 1 or value.dtype != np.dtype(dtype) or not value.flags.c_contiguous:
        raise ValueError(f"{name}: expected a 1-d contiguous array of {np.dtype(dtype)}")
    if writable and not value.flags.writeable:
        raise ValueError(f"{name}: the array is read-only")
    # As the compiled kernel refuses it: a misaligned view (numpy maps at any file offset).
    if value.ctypes.data % value.itemsize:
        raise ValueError(f"{name}: the array is not aligned")
    return value


class Postings:
    """Segmented postings (`segmented_ids`): key k's ids in segment s are
    local[bounds[k * S + s]:bounds[k * S + s + 1]] plus s << 16. The dense sets are
    checked for shape and otherwise not read: they only speed up finding rows."""

    def __init__(
        self,
        local: object,
        bounds: object,
        segments: int,
        dense_at: object,
        dense_bits: object,
        dense_ranks: object,
    ) -> None:
        self.local = checked_array(local, np.uint16, "local ids")
        self.bounds = checked_array(bounds, np.int64, "id bounds")
        at = checked_array(dense_at, np.int64, "dense set starts")
        bits = checked_array(dense_bits, np.uint64, "dense set bits")
        ranks = checked_array(dense_ranks, np.uint16, "dense set ranks")
        segments = operator.index(segments)
        runs = len(self.bounds) - 1
        if not 1 <= segments <= MOST_SEGMENTS or runs < 0 or runs % segments:
            raise ValueError("id bounds do not match the segment count")
        self.segments = segments
        self.keys = runs // segments
        if len(at) != self.keys or len(ranks) != len(bits):
            raise ValueError("dense sets do not match the postings")

    def run(self, key: int, segment: int) -> tuple[int, int]:
        """The rows [start, end) of key's run in segment; ValueError for a key out of range
        or bounds outside the ids."""
        if not 0 <= key < self.keys:
            raise ValueError(f"posting key {key} out of range")
        at = key * self.segments + segment
        start, end = int(self.bounds[at]), int(self.bounds[at + 1])
        if start < 0 or start > end or end > len(self.local):
            raise ValueError("id bounds out of range")
        return start, end

    def rows(self, key: int) -> int:
        """How many rows key's posting has, all segments."""
        start, _ = self.run(key, 0)
        _, end = self.run(key, self.segments - 1)
        if end < start:
            raise ValueError("id bounds are not ascending")
        return end - start

    def posting(self, key: int) -> tuple[Ids, Ids]:
        """Key's ids, ascending, and the row of each."""
        ids, rows = [], []
        for segment in range(self.segments):
            start, end = self.run(key, segment)
            ids.append(self.local[start:end].astype(np.int64) + (segment << SEGMENT_BITS))
            rows.append(np.arange(start, end, dtype=np.int64))
        return np.concatenate(ids), np.concatenate(rows)

    def found(self, key: int, wanted: Ids) -> Ids:
        """The row of each of the ascending ids `wanted` in key's posting, -1 where it has none."""
        ids, rows = self.posting(key)
        at = np.searchsorted(ids, wanted)
        held = at < len(ids)
        held[held] = ids[at[held]] == wanted[held]
        found: Ids = np.full(len(wanted), -1, dtype=np.int64)
        found[held] = rows[at[held]]
        return found


class Scoring:
    """A query's BM25 scoring over `Postings`: the postings' weights, the docs' length
    norms, and per term its key, IDF and query weight."""

    def __init__(
        self,
        postings: Postings,
        weights: object,
        norms: object,
        terms: object,
        idfs: object,
        query_weights: object,
        k1: float,
    ) -> None:
        if not isinstance(weights, np.ndarray):
            raise TypeError("posting weights: expected a numpy array")
        if (
            weights.ndim != 1
            or weights.dtype not in [np.dtype(kind) for kind in WEIGHT_TYPES]
            or len(weights) != len(postings.local)
            or not weights.flags.c_contiguous
        ):
            raise ValueError("posting weights do not match the doc ids")
        self.weights = weights
        self.norms: Floats = checked_array(norms, np.float64, "norms")
        self.terms: Ids = checked_array(terms, np.int64, "terms")
        self.idfs: Floats = checked_array(idfs, np.float64, "idfs")
        self.query_weights: Floats = checked_array(query_weights, np.float64, "query weights")
        if len(self.idfs) != len(self.terms) or len(self.query_weights) != len(self.terms):
            raise ValueError("terms, idfs and query weights differ in length")
        self.k1 = float(k1)
        if not math.isfinite(self.k1):
            raise ValueError("k1 is not finite")
        self.doc_count = len(self.norms)
        segments = (self.doc_count - 1 >> SEGMENT_BITS) + 1 if self.doc_count else 1
        if postings.segments != segments:
            raise ValueError("the segment count does not match the norms")
        for term in self.terms.tolist():
            if not 0 <= term < postings.keys:
                raise ValueError(f"posting key {term} out of range")
        self.postings = postings

    def shares(self, term: int, rows: Ids, docs: Ids) -> Floats:
        """Term `term`'s share at each of `rows`, for the docs `docs`:
        tf * (k1 + 1) / (norm + tf) * idf * query weight, in that order (Robertson's BM25)."""
        tf = self.weights[rows].astype(np.float64)
        # As in C, an overflow or 0/0 gives inf or NaN silently: no warning to raise under -W error.
        with np.errstate(all="ignore"):
            share: Floats = tf * (self.k1 + 1)
            share /= self.norms[docs] + tf
            share *= self.idfs[term]
            share *= self.query_weights[term]
        return share

    def add(self, docs: Ids, totals: Floats) -> None:
        """Every term's share added to the totals of the docs (ascending) its posting holds,
        term after term."""
        for term, key in enumerate(self.terms.tolist()):
            rows = self.postings.found(key, docs)
            held = rows >= 0
            totals[held] += self.shares(term, rows[held], docs[held])

    def exact(self, docs: Ids) -> Floats:
        """BM25 of the docs (ascending), summed from +0.0 in term order."""
        totals: Floats = np.zeros(len(docs), dtype=np.float64)
        self.add(docs, totals)
        return totals


def checked_candidates(values: object, doc_count: int) -> Ids:
    """Candidate doc ids: strictly ascending, each a doc of the corpus."""
    docs: Ids = checked_array(values, np.int64, "candidates")
    if len(docs) >= 2**31 - 1:
        raise ValueError("too many candidates")
    if len(docs) and (docs.min() < 0 or docs.max() >= doc_count):
        raise ValueError("a candidate is not a doc id of the corpus")
    if np.any(docs[1:] <= docs[:-1]):
        raise ValueError("doc ids are not ascending")
    return docs


def sort_key(score: float, doc: int) -> tuple[bool, float, int]:
    """The sort key of a scored doc: higher scores first, equal scores by the lower doc id,
    NaN after every number (the compiled kernel's total order, `better`)."""
    nan = math.isnan(score)
    return (nan, 0.0 if nan else -score, doc)


def best_first(docs: Sequence[int], scores: Sequence[float], depth: int) -> list[tuple[int, float]]:
    """The `depth` best docs by score, best first, equal scores by doc id."""
    ranked = sorted(zip(docs, scores, strict=True), key=lambda pair: sort_key(pair[1], pair[0]))
    return ranked[:depth]


def int64_bytes(values: Sequence[int]) -> bytearray:
    return bytearray(np.array(values, dtype=np.int64).tobytes())


def float64_bytes(values: Sequence[float]) -> bytearray:
    return bytearray(np.array(values, dtype=np.float64).tobytes())


def intersection(postings: Postings, keys: Sequence[int], few: int) -> Ids:
    """The ids in the postings of the distinct `keys` (none when a key is negative or
    there are none), intersected from the shortest posting up (ties by key) until at
    most `few` are left."""
    if not keys or min(keys) < 0:
        return np.empty(0, dtype=np.int64)
    distinct = sorted(set(keys))
    by_size = sorted(distinct, key=lambda key: (postings.rows(key), key))
    found, _ = postings.posting(by_size[0])
    for key in by_size[1:]:
        if len(found) <= few:
            break
        found = found[postings.found(key, found) >= 0]
    return found
