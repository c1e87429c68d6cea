"""The doc ids of CSR postings in two bytes each: ids split into segments of 2**16 docs.

Doc ids are most of an index's memory: as int32, the trigram layer's took 198 of its
250 MB at 10^5 chunks. A doc's segment is id >> 16 and its id within the segment is
id & 0xFFFF, a uint16. A key's rows keep the order of the plain CSR layout (ids
ascending), so they fall into one run per segment; `bounds` holds where each
(key, segment) run starts. Reading a key's ids adds each run's segment base back;
intersecting postings, and scoring candidates in them (`bm25`), walk the runs in
compiled code (`_postings.c`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from pytest_qualbench.engine.arrays import DocIds
from pytest_qualbench.engine.dense_sets import (
    DENSE_SHARE,
    DenseSets,
    checked_dense_sets,
    dense_sets,
)

# What `arrays` names the dense sets (`dense_sets`) by, and `stored` takes back.
DENSE_ARRAY_NAMES = ("dense_at", "dense_bits", "dense_ranks")
SEGMENT_BITS = 16
SEGMENT_DOCS = 1 << SEGMENT_BITS
# The narrowest type each id within a segment fits.
LOCAL_ID_TYPE = np.uint16


def segment_count(size: int) -> int:
    """The segments that ids below `size` fall into (one at least, so no key has none)."""
    return max(1, -(-size // SEGMENT_DOCS))


def rows_below(offsets: DocIds, docs: DocIds, bound: int) -> DocIds:
    """For each key of plain CSR postings (key k's ascending ids are
    docs[offsets[k]:offsets[k + 1]]), the first row whose id is at least `bound`.

    A binary search of every key's run at once: about 20 vectorised steps over the
    keys, where a searchsorted per key would be a Python loop over 10^5-10^6 terms.
    """
    low: DocIds = offsets[:-1].copy()
    high: DocIds = offsets[1:].copy()
    active = low < high
    while active.any():
        middle = (low + high) // 2
        below = docs[np.minimum(middle, len(docs) - 1)] < bound
        low = np.where(active & below, middle + 1, low)
        high = np.where(active & ~below, middle, high)
        active = low < high
    return low


def ascending_runs(ids: npt.NDArray[Any], bounds: DocIds) -> bool:
    """Whether each run ids[bounds[i]:bounds[i + 1]] is strictly ascending; a run's
    first id may be at or below the previous run's last."""
    rises = ids[1:] > ids[:-1]
    firsts = bounds[1:-1]
    rises[firsts[(firsts > 0) & (firsts < len(ids))] - 1] = True
    return bool(rises.all())


# What a compiled walk of segmented postings takes first: ids, bounds, the segment
# count and the dense sets' starts, bits and ranks.
Walked = tuple[
    npt.NDArray[np.uint16],
    "DocIds",
    int,
    npt.NDArray[np.int64],
    npt.NDArray[np.uint64],
    npt.NDArray[np.uint16],
]


@dataclass(frozen=True)
class SegmentedIds:
    """Key k's ids in segment s are `local[bounds[k * S + s]:bounds[k * S + s + 1]]` plus
    s * SEGMENT_DOCS, for S = `segments`; every id is below `size`."""

    local: npt.NDArray[np.uint16]
    bounds: DocIds
    size: int
    # The bit sets of the keys held by many ids (`dense_sets`).
    dense: DenseSets

    @classmethod
    def held(
        cls,
        local: npt.NDArray[np.uint16],
        bounds: DocIds,
        size: int,
        dense_share: int = DENSE_SHARE,
    ) -> SegmentedIds:
        """The ids of these runs, with the dense sets of the keys held by at least
        1/`dense_share` of the ids."""
        dense = dense_sets(local, bounds, segment_count(size), size, dense_share)
        return cls(local, bounds, size, dense)

    @property
    def segments(self) -> int:
        return segment_count(self.size)

    @property
    def key_count(self) -> int:
        return (len(self.bounds) - 1) // self.segments

    @classmethod
    def of(cls, offsets: DocIds, docs: DocIds, size: int) -> SegmentedIds:
        """The plain CSR postings' ids (key k's ascending ids below `size` are
        docs[offsets[k]:offsets[k + 1]]), segmented."""
        segments = segment_count(size)
        keys = len(offsets) - 1
        runs = np.empty((keys, segments), dtype=np.int64)
        runs[:, 0] = offsets[:-1]
        for segment in range(1, segments):
            runs[:, segment] = rows_below(offsets, docs, segment * SEGMENT_DOCS)
        bounds = np.append(runs.ravel(), offsets[-1]).astype(np.int64)
        # Casting wraps each id to its low 16 bits: its id within its segment.
        return cls.held(docs.astype(LOCAL_ID_TYPE), bounds, size)

    @classmethod
    def stored(
        cls, arrays: Mapping[str, npt.NDArray[Any]], size: int, prefix: str = ""
    ) -> SegmentedIds:
        """The ids whose `arrays()` these are (each name after `prefix`); ValueError when
        they cannot be, so a damaged cache fails here, not as a wrong answer or an
        IndexError mid-query."""
        local, bounds = arrays[prefix + "local_ids"], arrays[prefix + "id_bounds"]
        if local.dtype != LOCAL_ID_TYPE or bounds.dtype != np.int64:
            raise ValueError("posting ids have the wrong types")
        if local.ndim != 1 or bounds.ndim != 1 or (len(bounds) - 1) % segment_count(size):
            raise ValueError("posting ids have the wrong shape")
        if bounds[0] != 0 or bounds[-1] != len(local) or np.any(bounds[1:] < bounds[:-1]):
            raise ValueError("posting bounds do not span the ids")
        if not ascending_runs(local, bounds):
            raise ValueError("posting ids are not ascending")
        dense_at, dense_bits, dense_ranks = (arrays[prefix + name] for name in DENSE_ARRAY_NAMES)
        dense = checked_dense_sets(
            dense_at, dense_bits, dense_ranks, bounds, segment_count(size), size
        )
        ids = cls(local, bounds, size, dense)
        # Only the last segment can hold an id past the corpus: its runs' largest ids.
        last_starts = bounds[ids.segments - 1 : -1 : ids.segments]
        last_ends = bounds[ids.segments :: ids.segments]
        held = last_ends > last_starts
        if held.any():
            # Each held run's start and end: reduceat's even results are the runs' maxima.
            edges = np.column_stack((last_starts[held], last_ends[held])).ravel()
            # An index of len(local) is not allowed; reduceat then runs the last start to the end.
            if edges[-1] == len(local):
                edges = edges[:-1]
            largest = int(np.maximum.reduceat(local, edges)[::2].max())
            if largest >= size - (ids.segments - 1) * SEGMENT_DOCS:
                raise ValueError("posting ids out of range")
        return ids

    def arrays(self) -> dict[str, npt.NDArray[Any]]:
        """What `stored` takes back (with the corpus size)."""
        return {
            "local_ids": self.local,
            "id_bounds": self.bounds,
            **dict(
                zip(
                    DENSE_ARRAY_NAMES,
                    (self.dense.at, self.dense.bits, self.dense.ranks),
                    strict=True,
                )
            ),
        }

    def walked(self) -> Walked:
        """The arrays every compiled walk of these postings takes first, in order."""
        dense = self.dense
        return (self.local, self.bounds, self.segments, dense.at, dense.bits, dense.ranks)

    def span(self, key: int) -> tuple[int, int]:
        """The first and end row of the key's posting (all its segments)."""
        segments = self.segments
        return int(self.bounds[key * segments]), int(self.bounds[(key + 1) * segments])

    def ids(self, key: int) -> DocIds:
        """The key's ids, ascending, as index-typed ints."""
        segments = self.segments
        runs = self.bounds[key * segments : (key + 1) * segments + 1].tolist()
        ids: DocIds = self.local[runs[0] : runs[-1]].astype(np.intp)
        for segment, (start, end) in enumerate(itertools.pairwise(runs)):
            if segment and end > start:
                ids[start - runs[0] : end - runs[0]] += segment * SEGMENT_DOCS
        return ids
