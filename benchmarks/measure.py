"""Measurement helpers shared by the benchmarks: timing, percentiles, memory, scaling."""

from __future__ import annotations

import gc
import math
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class MemoryUse:
    """The Python heap a build took: its peak during the build, and what it kept after."""

    peak_bytes: int
    retained_bytes: int


def traced_memory(build: Callable[[], object]) -> MemoryUse:
    """Run build under tracemalloc (numpy reports its buffers to it too), then drop its result."""
    gc.collect()
    tracemalloc.start()
    try:
        baseline, _ = tracemalloc.get_traced_memory()
        built = build()
        gc.collect()
        current, peak = tracemalloc.get_traced_memory()
        del built
    finally:
        tracemalloc.stop()
    return MemoryUse(peak - baseline, current - baseline)


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
