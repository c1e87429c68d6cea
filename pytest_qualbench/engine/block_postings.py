"""Postings built a block of documents at a time, then merged into one CSR layout.

A block's rows come grouped by key (a trigram, a term id), each key's documents
ascending and numbered within the block. Merging scatters every block's rows to
their place among all rows of their key; blocks go in document order, so each
key's documents stay ascending. `merged_segmented` writes the two-byte ids
`PostingIndex.grouped` takes (`segmented_ids`), `merged` plain int32 document
numbers. Only one block's temporaries and the blocks' compact rows (uint16
documents, narrow weights) exist besides the result: no sort of the whole corpus's
rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from pytest_qualbench.engine.arrays import DocIds, Weights
from pytest_qualbench.engine.bm25 import narrowest_exact
from pytest_qualbench.engine.dense_sets import DENSE_SHARE
from pytest_qualbench.engine.segmented_ids import (
    LOCAL_ID_TYPE,
    SEGMENT_BITS,
    SEGMENT_DOCS,
    SegmentedIds,
    segment_count,
)

# Documents of a block are numbered by uint16.
BLOCK_DOCS = 1024


@dataclass(frozen=True)
class Block:
    """One block's rows grouped by key: `sizes` rows per key, document numbers from `first`."""

    first: int
    keys: DocIds
    sizes: DocIds
    docs: npt.NDArray[np.uint16]
    counts: Weights


def runs(ordered: DocIds) -> tuple[DocIds, DocIds]:
    """Where each run of equal values of a sorted array starts, and how long it is."""
    first_of_run = np.ones(len(ordered), dtype=bool)
    first_of_run[1:] = ordered[1:] != ordered[:-1]
    starts = np.flatnonzero(first_of_run)
    lengths: DocIds = np.diff(np.append(starts, len(ordered)))
    return starts, lengths


def counted(values: DocIds) -> tuple[DocIds, DocIds]:
    """The distinct values ascending and how often each occurs: np.unique's answer by one
    plain sort (np.unique with counts took three times as long).

    Values that fit int32 are sorted as int32, which takes half the time; the distinct
    values come back in the type they came in.
    """
    fits_int32 = (
        values.dtype == np.int64
        and len(values) > 0
        and values.min() >= -(2**31)
        and values.max() < 2**31
    )
    ordered = np.sort(values.astype(np.int32) if fits_int32 else values)
    starts, repeats = runs(ordered)
    distinct: DocIds = ordered[starts].astype(values.dtype, copy=False)
    return distinct, repeats


def block_of(first: int, row_keys: DocIds, docs: DocIds, weights: Weights) -> Block:
    """A block from rows sorted by (key, document), its documents numbered from 0."""
    starts, sizes = runs(row_keys)
    return Block(first, row_keys[starts], sizes, docs.astype(np.uint16), narrowest_exact(weights))


def merged(blocks: list[Block], doc_count: int) -> tuple[DocIds, DocIds, DocIds, Weights]:
    """The blocks' rows in one layout grouped by key: keys, offsets, document numbers
    (int32 below 2**31 documents) and counts. Each block is freed once scattered."""
    keys, slots = merged_keys(blocks)
    totals = np.zeros(len(keys), dtype=np.int64)
    for block, slot in zip(blocks, slots, strict=True):
        totals[slot] += block.sizes
    offsets = np.concatenate(([0], np.cumsum(totals))).astype(np.int64)
    id_type = np.int32 if doc_count < 2**31 else np.int64
    docs = np.empty(offsets[-1], dtype=id_type)
    counts = scattered(
        blocks, slots, offsets, docs, lambda block: block.docs.astype(id_type) + block.first
    )
    return keys, offsets, docs, counts


def merged_segmented(
    blocks: list[Block], doc_count: int, dense_share: int = DENSE_SHARE
) -> tuple[DocIds, SegmentedIds, Weights]:
    """`merged`, with the document numbers written straight into `SegmentedIds`' two
    bytes each: no four-byte copy of every row (198 MB for the 100k prose build's
    trigrams) and no pass narrowing it. Every block must lie within one id segment:
    a block of at most BLOCK_DOCS documents starting at a multiple of it does (the
    porter layer's), and `trigram_postings.text_blocks` cuts at every segment's start.
    Keys held by at least 1/`dense_share` of the documents get a bit set (`dense_sets`)."""
    keys, slots = merged_keys(blocks)
    segments = segment_count(doc_count)
    # Key k's rows in segment s are those of the segment's blocks: one run per (k, s).
    run_sizes = np.zeros((len(keys), segments), dtype=np.int64)
    for block, slot in zip(blocks, slots, strict=True):
        segment = block.first >> SEGMENT_BITS
        if len(block.docs) and (block.first + int(block.docs.max())) >> SEGMENT_BITS != segment:
            raise ValueError(f"the block of documents from {block.first} spans two id segments")
        run_sizes[slot, segment] += block.sizes
    bounds = np.concatenate(([0], np.cumsum(run_sizes.ravel()))).astype(np.int64)
    local = np.empty(bounds[-1], dtype=LOCAL_ID_TYPE)
    counts = scattered(
        blocks,
        slots,
        bounds[::segments],
        local,
        lambda block: block.docs + LOCAL_ID_TYPE(block.first & (SEGMENT_DOCS - 1)),
    )
    return keys, SegmentedIds.held(local, bounds, doc_count, dense_share), counts


def merged_keys(blocks: list[Block]) -> tuple[DocIds, list[DocIds]]:
    """Every block's keys, distinct and ascending, and where each block's keys are among them."""
    if blocks:
        # Sorted in place, not np.unique: numpy 2's np.unique hashes, ten times slower on
        # these ascending runs of every block's keys (0.42 s against 0.03 s for each trigram
        # index of the 100k prose build).
        every_key = np.concatenate([block.keys for block in blocks])
        every_key.sort()
        keys = every_key[runs(every_key)[0]]
        del every_key
    else:
        keys = np.empty(0, dtype=np.int64)
    return keys, [np.searchsorted(keys, block.keys) for block in blocks]


def scattered(
    blocks: list[Block],
    slots: list[DocIds],
    offsets: DocIds,
    docs: npt.NDArray[Any],
    block_docs: Callable[[Block], npt.NDArray[Any]],
) -> Weights:
    """Each block's rows put in `docs` (its document numbers as `block_docs` gives them)
    and in the counts returned, key k's rows from offsets[k] on. Blocks go in document
    order, so each key's documents stay ascending; each is freed once scattered."""
    count_type = np.result_type(np.uint8, *(block.counts.dtype for block in blocks))
    counts = np.empty(len(docs), dtype=count_type)
    cursor = offsets[:-1].copy()
    blocks.reverse()
    slots.reverse()
    while blocks:
        block, slot = blocks.pop(), slots.pop()
        block_starts = np.concatenate(([0], np.cumsum(block.sizes)[:-1]))
        target = np.repeat(cursor[slot] - block_starts, block.sizes)
        target += np.arange(len(block.docs), dtype=np.int64)
        docs[target] = block_docs(block)
        counts[target] = block.counts
        cursor[slot] += block.sizes
        del block, target
    return counts
