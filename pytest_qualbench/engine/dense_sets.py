"""Bit sets of the keys whose postings hold many ids: where a posting holds an id, and
at which row, found by a bit and a count, not by a search of the posting.

Scoring candidates reads, for each query term, the row of each candidate in the term's
posting. A trigram of a compound-identifier corpus lies in a third of the chunks, and
searching such postings (10^4-10^5 rows each) for a few thousand candidates was a
fifth of a query (docs/performance-history.md, round 8). A key held by at least
1/DENSE_SHARE of the ids gets a set of one bit an id, and per 64-bit word the count
of the posting's rows before it within the segment (`segmented_ids`): the row of id
i of segment s is the run's start plus the rank of i's word plus the set bits below
i in it. A set and its ranks take 5/32 of a byte an id: at most 1.25 times the
two-byte ids of the posting they stand for, a quarter of them for a key in a third
of the chunks, and they stay in the CPU caches while a query reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

# A key whose posting holds at least 1/DENSE_SHARE of the ids gets a set. 16 against
# 8 and 32, first-sight passes at 10^5 chunks: prose p50 0.277 / 0.267 / 0.263 ms,
# compound 0.503 / 0.500 / 0.500 (docs/performance-history.md, round 8).
DENSE_SHARE = 16
WORD_BITS = 64
# Segments (`segmented_ids`) are 2**16 ids: 1024 words, each segment's ranks apart.
SEGMENT_WORDS = (1 << 16) // WORD_BITS


@dataclass(frozen=True)
class DenseSets:
    """Key k's set is words bits[at[k]:at[k] + words] (at[k] = -1: k has none), id i
    being bit i % 64 of word i // 64; ranks[w] counts the key's rows before word w
    within w's segment."""

    at: npt.NDArray[np.int64]
    bits: npt.NDArray[np.uint64]
    ranks: npt.NDArray[np.uint16]


def set_words(size: int) -> int:
    """The words of a set over ids below `size`."""
    return -(-size // WORD_BITS)


def run_rows(bounds: npt.NDArray[np.int64], segments: int) -> npt.NDArray[np.int64]:
    """Each key's rows in each segment, a (keys, segments) array."""
    return np.diff(bounds).reshape(-1, segments)


def segment_counts(bits: npt.NDArray[np.uint64], words: int) -> npt.NDArray[np.int32]:
    """The set bits of each word of sets of `words` words each, a (sets, segments,
    SEGMENT_WORDS) array, zero past the last word."""
    sets = len(bits) // words if words else 0
    segments = -(-words // SEGMENT_WORDS)
    padded = np.zeros((sets, segments * SEGMENT_WORDS), dtype=np.int32)
    padded[:, :words] = np.bitwise_count(bits).reshape(sets, words)
    return padded.reshape(sets, segments, SEGMENT_WORDS)


def ranks_of(counts: npt.NDArray[np.int32], words: int) -> npt.NDArray[np.uint16]:
    """For each word of `segment_counts`, the set bits before it within its segment:
    its key's rows before it there."""
    before = np.cumsum(counts, axis=2, dtype=np.int32) - counts
    # At most 2**16 - 64 rows lie before a segment's last word: each fits two bytes.
    flat = before.reshape(len(counts), counts.shape[1] * SEGMENT_WORDS)
    return flat[:, :words].ravel().astype(np.uint16)


def dense_sets(
    local: npt.NDArray[np.uint16],
    bounds: npt.NDArray[np.int64],
    segments: int,
    size: int,
    share: int = DENSE_SHARE,
) -> DenseSets:
    """The sets of the keys (of `segmented_ids` postings over ids below `size`) whose
    postings hold at least 1/`share` of the ids."""
    held_by = run_rows(bounds, segments).sum(axis=1)
    dense = np.flatnonzero((held_by * share >= size) & (held_by > 0))
    words = set_words(size)
    at = np.full(len(held_by), -1, dtype=np.int64)
    at[dense] = np.arange(len(dense), dtype=np.int64) * words
    bits = np.zeros(len(dense) * words, dtype=np.uint64)
    held = np.zeros(words * WORD_BITS, dtype=bool)
    for slot, key in enumerate(dense.tolist()):
        held[:] = False
        for segment in range(segments):
            start, end = bounds[key * segments + segment], bounds[key * segments + segment + 1]
            held[local[start:end].astype(np.int64) + segment * SEGMENT_WORDS * WORD_BITS] = True
        bits[slot * words : (slot + 1) * words] = np.packbits(held, bitorder="little").view("<u8")
    return DenseSets(at, bits, ranks_of(segment_counts(bits, words), words))


def checked_dense_sets(
    at: npt.NDArray[Any],
    bits: npt.NDArray[Any],
    ranks: npt.NDArray[Any],
    bounds: npt.NDArray[np.int64],
    segments: int,
    size: int,
) -> DenseSets:
    """The sets these arrays are, for the postings of `bounds`; ValueError unless each
    set counts as many ids in each segment as its key's posting holds and every rank
    is right, so a row found by rank always lies within the key's run."""
    if at.dtype != np.int64 or bits.dtype != np.uint64 or ranks.dtype != np.uint16:
        raise ValueError("dense sets have the wrong types")
    rows = run_rows(bounds, segments)
    words = set_words(size)
    if at.shape != (len(rows),) or bits.ndim != 1 or ranks.shape != bits.shape:
        raise ValueError("dense sets have the wrong shape")
    dense = np.flatnonzero(at >= 0)
    if len(bits) != len(dense) * words or not np.array_equal(
        at[dense], np.arange(len(dense), dtype=np.int64) * words
    ):
        raise ValueError("dense sets do not tile their words")
    counts = segment_counts(bits, words)
    if not np.array_equal(ranks_of(counts, words), ranks):
        raise ValueError("dense set ranks do not count their bits")
    if len(dense) and not np.array_equal(counts.sum(axis=2), rows[dense]):
        raise ValueError("dense sets do not hold their postings' ids")
    return DenseSets(at, bits, ranks)
