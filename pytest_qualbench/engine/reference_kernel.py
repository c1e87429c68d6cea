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

import numpy as np
import numpy.typing as npt

from pytest_qualbench.engine.reference_walks import (
    MOST_RANKINGS,
    MOST_RRF_K,
    MOST_SEGMENTS,
    Floats,
    Ids,
    Postings,
    Scoring,
    best_first,
    checked_array,
    checked_candidates,
    float64_bytes,
    int64_bytes,
    intersection,
)
from pytest_qualbench.engine.segmented_ids import SEGMENT_BITS


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
    postings = Postings(local, bounds, segments, dense_at, dense_bits, dense_ranks)
    scoring = Scoring(postings, weights, norms, terms, idfs, query_weights, k1)
    sums: Floats = checked_array(totals, np.float64, "totals", writable=True)
    # Copied before a total is written, as the compiled kernel copies them: the totals may
    # be the candidates' own buffer.
    docs = checked_array(candidates, np.int64, "candidates").copy()
    if len(sums) != len(docs):
        raise ValueError("candidates and totals differ in length")
    scoring.add(checked_candidates(docs, scoring.doc_count), sums)


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
    postings = Postings(local, bounds, segments, dense_at, dense_bits, dense_ranks)
    scoring = Scoring(postings, weights, norms, terms, idfs, query_weights, k1)
    docs = checked_array(candidates, np.int64, "candidates")
    if operator.index(depth) < 0:
        raise ValueError("a negative depth")
    docs = checked_candidates(docs, scoring.doc_count)
    best = best_first(docs.tolist(), scoring.exact(docs).tolist(), depth)
    return int64_bytes([doc for doc, _ in best]), float64_bytes([score for _, score in best])


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
    postings = Postings(local, bounds, segments, dense_at, dense_bits, dense_ranks)
    scoring = Scoring(postings, weights, norms, terms, idfs, query_weights, k1)
    every_key = checked_array(keys, np.int64, "keys")
    shown = checked_array(visible, np.bool_, "visible")
    if len(shown) != scoring.doc_count:
        raise ValueError("visible differs from the norms in length")
    depth = operator.index(depth)
    if depth < 0:
        raise ValueError("a negative depth")
    every = intersection(postings, every_key.tolist(), 0)
    if len(every) and every.max() >= scoring.doc_count:
        raise ValueError("posting ids out of range")
    every = every[shown[every]]
    best = best_first(every.tolist(), scoring.exact(every).tolist(), depth)
    rest: list[tuple[int, float]] = []
    if len(best) < operator.index(fill_below) and len(scoring.terms) and depth > len(best):
        held = [postings.posting(key)[0] for key in scoring.terms.tolist()]
        docs = np.unique(np.concatenate(held))
        if len(docs) and docs.max() >= scoring.doc_count:
            raise ValueError("a posting id lies past the corpus")
        docs = docs[shown[docs] & ~np.isin(docs, every)]
        rest = best_first(docs.tolist(), scoring.exact(docs).tolist(), depth - len(best))
    ranked = best + rest
    return (
        int64_bytes([doc for doc, _ in ranked]),
        float64_bytes([score for _, score in ranked]),
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


def _chunks_of(postings: Postings, words: Ids, chunk_count: int) -> npt.NDArray[np.bool_]:
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
    postings = Postings(local, bounds, segments, dense_at, dense_bits, dense_ranks)
    word_ids = checked_array(words, np.int64, "words")
    ends = checked_array(group_ends, np.int64, "group ends")
    shown = checked_array(visible, np.bool_, "visible")
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
        return int64_bytes(every.tolist()), bytearray()
    in_any = _chunks_of(postings, grouped, len(shown)) & shown
    return bytearray(), int64_bytes(np.flatnonzero(in_any).tolist())


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
    postings = Postings(local, bounds, segments, dense_at, dense_bits, dense_ranks)
    word_ids = checked_array(words, np.int64, "words")
    ranked: Ids = checked_array(docs, np.int64, "docs")
    ranked_scores: Floats = checked_array(scores, np.float64, "scores")
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
    return int64_bytes(ranked[order].tolist()), float64_bytes(ranked_scores[order].tolist())


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
        docs = checked_array(docs_object, np.int64, "docs")
        scores = checked_array(scores_object, np.float64, "scores")
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
    best = best_first(list(score), list(score.values()), limit if limit >= 0 else len(score))
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
    known = checked_array(keys, np.int64, "keys")
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
    postings = Postings(local, bounds, segments, dense_at, dense_bits, dense_ranks)
    known = checked_array(keys, np.int64, "keys")
    if not isinstance(words, list):
        raise TypeError("words: expected a list")
    if not isinstance(word, str):
        raise TypeError("word: expected a str")
    found = intersection(postings, _positions(known, _trigram_keys(word)), operator.index(few))
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
    return int64_bytes(kept), own


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
    runs = checked_array(bounds, np.int64, "id bounds")
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
    return int64_bytes(known), float64_bytes(idfs), float64_bytes(weights)
