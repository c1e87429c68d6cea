"""The posting walks of `_postings.c` in Python and numpy: the same functions, the same results.

Every function here takes the arguments its compiled namesake takes and returns what
it returns, bit for bit (tests/engine/test_kernel_differential.py calls both on
generated inputs). Where the compiled code takes shortcuts (dense bit sets instead of
searches, MaxScore bounds instead of scoring every candidate, early stops once few ids
are left) this module does the plain thing the shortcut must equal: it scores every
candidate and sorts. So it checks the compiled kernel, and it runs where the extension
could not be built (`kernel`).

Scores are the compiled kernel's: each term's share is tf * (k1 + 1) / (norm + tf) *
idf * query_weight, one IEEE float64 operation at a time in that order, added to the
candidate's total term by term; numpy's elementwise float64 operations round exactly
as C's do without fused multiply-add.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

SEGMENT_BITS = 16
# Fusion keeps which rankings found a doc as bits of a 64-bit word.
MOST_RANKINGS = 63
# Ranks and the RRF constant are summed as C's Py_ssize_t: bounded far below overflow.
MOST_RRF_K = 1 << 40
# Positions of a segment count beyond which ids would not fit int64 arithmetic safely.
MOST_SEGMENTS = 1 << 31
WEIGHT_TYPES = (np.uint8, np.uint16, np.float32, np.float64)

Ids = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


def _array(value: object, dtype: type[np.generic], name: str, *, writable: bool = False) -> Any:
    """`value` as the 1-d, C-contiguous array of `dtype` a compiled walk reads; TypeError for
    an object that is no array, ValueError for one of another type or shape."""
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name}: expected a numpy array, got {type(value).__name__}")
    if value.ndim != 1 or value.dtype != np.dtype(dtype) or not value.flags.c_contiguous:
        raise ValueError(f"{name}: expected a 1-d contiguous array of {np.dtype(dtype)}")
    if writable and not value.flags.writeable:
        raise ValueError(f"{name}: the array is read-only")
    return value


class _Postings:
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
        self.local = _array(local, np.uint16, "local ids")
        self.bounds = _array(bounds, np.int64, "id bounds")
        at = _array(dense_at, np.int64, "dense set starts")
        bits = _array(dense_bits, np.uint64, "dense set bits")
        ranks = _array(dense_ranks, np.uint16, "dense set ranks")
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


class _Scoring:
    """A query's BM25 scoring over `_Postings`: the postings' weights, the docs' length
    norms, and per term its key, IDF and query weight."""

    def __init__(
        self,
        postings: _Postings,
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
        self.norms: Floats = _array(norms, np.float64, "norms")
        self.terms: Ids = _array(terms, np.int64, "terms")
        self.idfs: Floats = _array(idfs, np.float64, "idfs")
        self.query_weights: Floats = _array(query_weights, np.float64, "query weights")
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


def _candidates(values: object, doc_count: int) -> Ids:
    """Candidate doc ids: strictly ascending, each a doc of the corpus."""
    docs: Ids = _array(values, np.int64, "candidates")
    if len(docs) >= 2**31 - 1:
        raise ValueError("too many candidates")
    if len(docs) and (docs.min() < 0 or docs.max() >= doc_count):
        raise ValueError("a candidate is not a doc id of the corpus")
    if np.any(docs[1:] <= docs[:-1]):
        raise ValueError("doc ids are not ascending")
    return docs


def _order(score: float, doc: int) -> tuple[bool, float, int]:
    """The sort key of a scored doc: higher scores first, equal scores by the lower doc id,
    NaN after every number (the compiled kernel's total order, `better`)."""
    nan = math.isnan(score)
    return (nan, 0.0 if nan else -score, doc)


def _best(docs: Sequence[int], scores: Sequence[float], depth: int) -> list[tuple[int, float]]:
    """The `depth` best docs by score, best first, equal scores by doc id."""
    ranked = sorted(zip(docs, scores, strict=True), key=lambda pair: _order(pair[1], pair[0]))
    return ranked[:depth]


def _int64_bytes(values: Sequence[int]) -> bytearray:
    return bytearray(np.array(values, dtype=np.int64).tobytes())


def _float64_bytes(values: Sequence[float]) -> bytearray:
    return bytearray(np.array(values, dtype=np.float64).tobytes())


def add_scores(
    local: object,
    bounds: object,
    segments: int,
    dense_at: object,
    dense_bits: object,
    dense_ranks: object,
    weights: object,
    norms: object,
    terms: object,
    idfs: object,
    query_weights: object,
    k1: float,
    candidates: object,
    totals: object,
    /,
) -> None:
    """Each term's BM25 share added to the totals of the candidates its posting holds."""
    postings = _Postings(local, bounds, segments, dense_at, dense_bits, dense_ranks)
    scoring = _Scoring(postings, weights, norms, terms, idfs, query_weights, k1)
    sums: Floats = _array(totals, np.float64, "totals", writable=True)
    docs = _array(candidates, np.int64, "candidates")
    if len(sums) != len(docs):
        raise ValueError("candidates and totals differ in length")
    scoring.add(_candidates(docs, scoring.doc_count), sums)


def best_of(
    local: object,
    bounds: object,
    segments: int,
    dense_at: object,
    dense_bits: object,
    dense_ranks: object,
    weights: object,
    norms: object,
    terms: object,
    idfs: object,
    query_weights: object,
    k1: float,
    candidates: object,
    depth: int,
    bounded: bool,
    /,
) -> tuple[bytearray, bytearray]:
    """The `depth` best candidates by exact BM25, best first: every candidate is scored
    (`bounded` only lets the compiled kernel skip some; the result is the same)."""
    postings = _Postings(local, bounds, segments, dense_at, dense_bits, dense_ranks)
    scoring = _Scoring(postings, weights, norms, terms, idfs, query_weights, k1)
    docs = _array(candidates, np.int64, "candidates")
    if operator.index(depth) < 0:
        raise ValueError("a negative depth")
    docs = _candidates(docs, scoring.doc_count)
    best = _best(docs.tolist(), scoring.exact(docs).tolist(), depth)
    return _int64_bytes([doc for doc, _ in best]), _float64_bytes([score for _, score in best])


def _intersection(postings: _Postings, keys: Sequence[int], few: int) -> Ids:
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


def every_then_any(
    local: object,
    bounds: object,
    segments: int,
    dense_at: object,
    dense_bits: object,
    dense_ranks: object,
    weights: object,
    norms: object,
    terms: object,
    idfs: object,
    query_weights: object,
    k1: float,
    keys: object,
    visible: object,
    depth: int,
    fill_below: int,
    bounded: bool,
    /,
) -> tuple[bytearray, bytearray, int]:
    """The best visible docs holding every key, then (when fewer than `fill_below`) the
    best other visible docs holding any term, up to `depth` in all; and how many came first."""
    postings = _Postings(local, bounds, segments, dense_at, dense_bits, dense_ranks)
    scoring = _Scoring(postings, weights, norms, terms, idfs, query_weights, k1)
    every_key = _array(keys, np.int64, "keys")
    shown = _array(visible, np.bool_, "visible")
    if len(shown) != scoring.doc_count:
        raise ValueError("visible differs from the norms in length")
    depth = operator.index(depth)
    if depth < 0:
        raise ValueError("a negative depth")
    every = _intersection(postings, every_key.tolist(), 0)
    if len(every) and every.max() >= scoring.doc_count:
        raise ValueError("posting ids out of range")
    every = every[shown[every]]
    best = _best(every.tolist(), scoring.exact(every).tolist(), depth)
    rest: list[tuple[int, float]] = []
    if len(best) < operator.index(fill_below) and len(scoring.terms) and depth > len(best):
        held = [postings.posting(key)[0] for key in scoring.terms.tolist()]
        docs = np.unique(np.concatenate(held))
        if len(docs) and docs.max() >= scoring.doc_count:
            raise ValueError("a posting id lies past the corpus")
        docs = docs[shown[docs] & ~np.isin(docs, every)]
        rest = _best(docs.tolist(), scoring.exact(docs).tolist(), depth - len(best))
    ranked = best + rest
    return (
        _int64_bytes([doc for doc, _ in ranked]),
        _float64_bytes([score for _, score in ranked]),
        len(best),
    )


def _group_ends(words: Ids, ends: Ids) -> list[tuple[int, int]]:
    """The groups' word ranges; ValueError unless the ends ascend within the words."""
    groups, start = [], 0
    for end in ends.tolist():
        if end < start or end > len(words):
            raise ValueError("group ends are not ascending ends of the words")
        groups.append((start, end))
        start = end
    return groups


def _chunks_of(postings: _Postings, words: Ids, chunk_count: int) -> npt.NDArray[np.bool_]:
    """One flag a chunk: whether any of `words`' postings holds it."""
    held = np.zeros(chunk_count, dtype=bool)
    for word in words.tolist():
        chunks, _ = postings.posting(word)
        if len(chunks) and chunks.max() >= chunk_count:
            raise ValueError("a chunk id is out of range")
        held[chunks] = True
    return held


def chunks_holding(
    local: object,
    bounds: object,
    segments: int,
    dense_at: object,
    dense_bits: object,
    dense_ranks: object,
    words: object,
    group_ends: object,
    visible: object,
    /,
) -> tuple[bytearray, bytearray]:
    """The visible chunks holding a word of every group, ascending; when there are none,
    those holding a word of any group (else an empty second list)."""
    postings = _Postings(local, bounds, segments, dense_at, dense_bits, dense_ranks)
    word_ids = _array(words, np.int64, "words")
    ends = _array(group_ends, np.int64, "group ends")
    shown = _array(visible, np.bool_, "visible")
    if len(shown) > postings.segments << SEGMENT_BITS:
        raise ValueError("visible is longer than the postings' segments")
    groups = _group_ends(word_ids, ends)
    grouped = word_ids[: groups[-1][1] if groups else 0]
    for word in grouped.tolist():
        postings.rows(word)
    every: Ids = np.empty(0, dtype=np.int64)
    if groups and all(end > start for start, end in groups):
        in_every = shown.copy()
        for start, end in groups:
            in_every &= _chunks_of(postings, word_ids[start:end], len(shown))
            if not in_every.any():
                break
        every = np.flatnonzero(in_every).astype(np.int64)
    if len(every):
        return _int64_bytes(every.tolist()), bytearray()
    in_any = _chunks_of(postings, grouped, len(shown)) & shown
    return bytearray(), _int64_bytes(np.flatnonzero(in_any).tolist())


def words_first(
    local: object,
    bounds: object,
    segments: int,
    dense_at: object,
    dense_bits: object,
    dense_ranks: object,
    words: object,
    docs: object,
    scores: object,
    /,
) -> tuple[bytearray, bytearray]:
    """The ranking `docs` with its `scores`, the docs in the chunks of every one of
    `words` moved before the others, each part in its order."""
    postings = _Postings(local, bounds, segments, dense_at, dense_bits, dense_ranks)
    word_ids = _array(words, np.int64, "words")
    ranked: Ids = _array(docs, np.int64, "docs")
    ranked_scores: Floats = _array(scores, np.float64, "scores")
    if len(ranked_scores) != len(ranked):
        raise ValueError("scores differ from the docs in length")
    for word in word_ids.tolist():
        postings.rows(word)
    if len(ranked) and (ranked.min() < 0 or ranked.max() >= postings.segments << SEGMENT_BITS):
        raise ValueError("a doc id is out of range")
    ascending = np.sort(ranked)
    if np.any(ascending[1:] <= ascending[:-1]):
        raise ValueError("doc ids are not ascending")
    held = np.ones(len(ranked), dtype=bool)
    for word in word_ids.tolist():
        chunks, _ = postings.posting(word)
        held &= np.isin(ranked, chunks)
    order = np.concatenate((np.flatnonzero(held), np.flatnonzero(~held)))
    return _int64_bytes(ranked[order].tolist()), _float64_bytes(ranked_scores[order].tolist())


def fused(
    rankings: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], float, int]],
    k: int,
    gap_weight: float,
    limit: int,
    /,
) -> tuple[list[int], list[float], list[int]]:
    """Weighted RRF of the rankings, each share plus its score gap (`fusion.fused`): the
    best `limit` docs (all when negative), their fused scores and the rankings that found
    each, bit i for ranking i (those matching it in full when any does)."""
    layers = list(rankings)
    k, limit, gap_weight = operator.index(k), operator.index(limit), float(gap_weight)
    if len(layers) > MOST_RANKINGS:
        raise ValueError("more than 63 rankings")
    if not 0 <= k <= MOST_RRF_K:
        raise ValueError("the RRF constant is negative or too large")
    if not math.isfinite(gap_weight):
        raise ValueError("the gap weight is not finite")
    score: dict[int, float] = {}
    ranked: dict[int, int] = {}
    matched: dict[int, int] = {}
    for layer, ranking in enumerate(layers):
        if not isinstance(ranking, tuple) or len(ranking) != 4:
            raise TypeError("a ranking: expected a tuple (docs, scores, weight, full)")
        docs_object, scores_object, weight_object, full_object = ranking
        docs = _array(docs_object, np.int64, "docs")
        scores = _array(scores_object, np.float64, "scores")
        weight, full = float(weight_object), operator.index(full_object)
        if not math.isfinite(weight):
            raise ValueError("a ranking's weight is not finite")
        if full < 0:
            raise ValueError("a negative full-match count")
        shares = [1.0 / (k + rank) for rank in range(1, len(docs) + 1)]
        if gap_weight != 0.0:
            if len(scores) != len(docs):
                raise ValueError("scores differ from the docs in length")
            if not np.isfinite(scores).all():
                raise ValueError("a ranking's scores are not finite")
            if len(scores):
                lowest, spread = float(scores.min()), float(np.std(scores))
                gaps = [0.0 if spread <= 0.0 else (s - lowest) / spread for s in scores.tolist()]
                shares = [share + gap_weight * gap for share, gap in zip(shares, gaps, strict=True)]
        bit = 1 << layer
        for rank, (doc, share) in enumerate(zip(docs.tolist(), shares, strict=True)):
            if ranked.get(doc, 0) & bit:
                raise ValueError("a ranking lists a doc twice")
            score[doc] = score.get(doc, 0.0) + weight * share
            ranked[doc] = ranked.get(doc, 0) | bit
            matched[doc] = matched.get(doc, 0) | (bit if rank < full else 0)
    best = _best(list(score), list(score.values()), limit if limit >= 0 else len(score))
    return (
        [doc for doc, _ in best],
        [total for _, total in best],
        [matched[doc] or ranked[doc] for doc, _ in best],
    )


def _trigram_keys(word: str) -> list[int]:
    """The word's distinct trigram keys, three code points packed as c0 << 42 | c1 << 21 | c2,
    ascending."""
    points = [ord(character) for character in word]
    return sorted(
        {points[at] << 42 | points[at + 1] << 21 | points[at + 2] for at in range(len(points) - 2)}
    )


def _positions(keys: Ids, wanted: list[int]) -> list[int]:
    """Each wanted key's position in `keys` (ascending), -1 for one it does not hold."""
    at = np.searchsorted(keys, np.array(wanted, dtype=np.int64)).tolist()
    return [
        place if place < len(keys) and int(keys[place]) == key else -1
        for place, key in zip(at, wanted, strict=True)
    ]


def trigram_ids(keys: object, word: str, /) -> list[int]:
    """The positions in `keys` (ascending) of the word's distinct trigram keys, ascending
    by key; -1 for a key `keys` does not hold."""
    known = _array(keys, np.int64, "keys")
    if not isinstance(word, str):
        raise TypeError("word: expected a str")
    return _positions(known, _trigram_keys(word))


def words_containing(
    keys: object,
    local: object,
    bounds: object,
    segments: int,
    dense_at: object,
    dense_bits: object,
    dense_ranks: object,
    words: list[str],
    word: str,
    few: int,
    /,
) -> tuple[bytearray, int]:
    """The ids of the `words` holding `word` as a substring, among those in the postings
    of all its trigrams (intersected until at most `few` are left), and `word`'s own id (-1)."""
    postings = _Postings(local, bounds, segments, dense_at, dense_bits, dense_ranks)
    known = _array(keys, np.int64, "keys")
    if not isinstance(words, list):
        raise TypeError("words: expected a list")
    if not isinstance(word, str):
        raise TypeError("word: expected a str")
    found = _intersection(postings, _positions(known, _trigram_keys(word)), operator.index(few))
    kept, own = [], -1
    for word_id in found.tolist():
        if word_id >= len(words):
            raise ValueError("a word id is out of range")
        candidate = words[word_id]
        if not isinstance(candidate, str):
            raise TypeError("the words must be str")
        if word in candidate:
            kept.append(word_id)
            if len(candidate) == len(word):
                own = word_id
    return _int64_bytes(kept), own


def known_terms(
    bounds: object,
    segments: int,
    terms: Sequence[int],
    query_weights: Sequence[float],
    size: int,
    /,
) -> tuple[bytearray, bytearray, bytearray]:
    """Of the `terms` (a negative one held nowhere), those whose postings hold a doc, in
    order, with each one's IDF log((size + 1) / df) and its query weight."""
    runs = _array(bounds, np.int64, "id bounds")
    terms, query_weights = list(terms), list(query_weights)
    if len(query_weights) != len(terms):
        raise ValueError("terms and query weights differ in length")
    segments, size = operator.index(segments), operator.index(size)
    if not 1 <= segments <= MOST_SEGMENTS or len(runs) < 1 or (len(runs) - 1) % segments:
        raise ValueError("id bounds do not match the segment count")
    if size < 0:
        raise ValueError("a negative corpus size")
    keys = (len(runs) - 1) // segments
    known, idfs, weights = [], [], []
    for term_object, weight_object in zip(terms, query_weights, strict=True):
        if isinstance(weight_object, str | bytes):
            raise TypeError("query weights: expected numbers")
        term, weight = operator.index(term_object), float(weight_object)
        if term < 0:
            continue
        if term >= keys:
            raise ValueError(f"posting key {term} out of range")
        start, end = int(runs[term * segments]), int(runs[(term + 1) * segments])
        if start < 0 or end < start:
            raise ValueError("id bounds are not ascending")
        rows = end - start
        # A term with an empty posting adds nothing (and has no IDF).
        if rows == 0:
            continue
        known.append(term)
        idfs.append(math.log((float(size) + 1.0) / float(rows)))
        weights.append(weight)
    return _int64_bytes(known), _float64_bytes(idfs), _float64_bytes(weights)
