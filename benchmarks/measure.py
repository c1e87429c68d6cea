"""Measurement helpers shared by the benchmarks: timing, percentiles, index size, scaling."""

from __future__ import annotations

import gc
import math
import statistics
import sys
import time
import types
from collections.abc import Callable, Sequence

import numpy as np


def deep_size_bytes(root: object) -> int:
    """Bytes of every object reachable from root: sys.getsizeof each, plus numpy buffers.

    Modules, classes and functions are shared with the rest of the process, not
    part of an index, so the walk does not enter them. A numpy array's getsizeof
    counts its buffer when it owns it; a view's buffer is counted through its base.
    """
    seen: set[int] = set()
    pending = [root]
    total = 0
    while pending:
        item = pending.pop()
        if id(item) in seen or isinstance(item, _SHARED_TYPES):
            continue
        seen.add(id(item))
        total += sys.getsizeof(item)
        if isinstance(item, np.ndarray):
            if item.base is not None:
                pending.append(item.base)
            if item.dtype != object:
                continue
        pending.extend(gc.get_referents(item))
    return total


_SHARED_TYPES = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)


def timed_passes(
    search: Callable[[str], object], queries: Sequence[str], samples: list[list[int]]
) -> Callable[[], None]:
    """A function that runs every query once, appending each query's nanoseconds to samples."""

    def one_pass() -> None:
        for query, query_samples in zip(queries, samples, strict=True):
            start = time.perf_counter_ns()
            search(query)
            query_samples.append(time.perf_counter_ns() - start)

    return one_pass


def median_query_ms(samples: Sequence[Sequence[int]]) -> float:
    """p50 over queries of each query's median time over passes, in milliseconds."""
    return statistics.median(statistics.median(per_query) for per_query in samples) / 1e6


def percentile_query_ms(samples: Sequence[Sequence[int]], percent: int) -> float:
    """Nearest-rank percentile over queries of each query's median time, in milliseconds."""
    per_query = sorted(statistics.median(times) for times in samples)
    rank = max(1, math.ceil(percent / 100 * len(per_query)))
    return per_query[rank - 1] / 1e6


def loglog_slope(sizes: Sequence[float], times: Sequence[float]) -> float:
    """Least-squares slope of log(time) against log(size): t ~ size**slope."""
    xs = [math.log(size) for size in sizes]
    ys = [math.log(value) for value in times]
    mean_x = statistics.fmean(xs)
    mean_y = statistics.fmean(ys)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mean_x) ** 2 for x in xs
    )
