"""Measurement helpers shared by the benchmarks: interleaved query passes, percentiles, slopes."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Mapping, Sequence

Search = Callable[[str], list[int]]


def interleaved_pass(
    searches: Mapping[str, Search],
    queries: Sequence[str],
    samples: Mapping[str, list[list[int]]],
) -> dict[str, list[list[int]]]:
    """Run every query on every system, one query at a time, and time each search.

    Query by query, not system by system: a change in the machine's pace then
    hits every system alike. The system order rotates from query to query, so
    none always runs first (on cold caches) or last. Appends each search's
    nanoseconds to samples[system][query] and returns each system's results.
    """
    names = list(searches)
    results: dict[str, list[list[int]]] = {name: [] for name in names}
    for number, query in enumerate(queries):
        shift = number % len(names)
        for name in names[shift:] + names[:shift]:
            started = time.perf_counter_ns()
            found = searches[name](query)
            samples[name][number].append(time.perf_counter_ns() - started)
            results[name].append(found)
    return results


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
