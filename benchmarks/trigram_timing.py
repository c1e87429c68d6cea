"""The engine's query times against tantivy's on both benchmark corpora, in one process.

`python -m benchmarks.trigram_timing CHUNKS [--profile OUT]` builds the engine and
tantivy over the first CHUNKS chunks of each corpus of `benchmarks.corpora`, one
corpus at a time, and runs the 200 queries once on both, interleaved query by query
(each query's first sight, the order of the two systems alternating), so a change in
the machine's pace hits both alike. It prints
one JSON line per corpus: build seconds, query p50 and p95, typo and exact p50 for
each system, and the engine's p50 and p95 over tantivy's. With --profile, a second
engine-only pass over each corpus's queries runs under cProfile and the top 10 by
cumulative time are written to OUT.

A before/after check of a query-path change in one command per state: the build
figures here are in-process, not the fresh-process ones of `test_peers`.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import pstats
import statistics
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from benchmarks.corpora import CORPORA
from benchmarks.corpus import Corpus
from benchmarks.measure import percentile
from benchmarks.systems import ENGINE, TANTIVY, EngineSystem, System, TantivySystem

PROFILE_LINES = 10


def interleaved_ms(systems: Mapping[str, System], queries: Sequence[str]) -> dict[str, list[float]]:
    """Each system's milliseconds per query, the systems taking turns query by query."""
    names = list(systems)
    times: dict[str, list[float]] = {name: [] for name in names}
    for number, query in enumerate(queries):
        shift = number % len(names)
        for name in names[shift:] + names[:shift]:
            started = time.perf_counter_ns()
            systems[name].search(query)
            times[name].append((time.perf_counter_ns() - started) / 1e6)
    return times


def timed_build(system: System, built: Corpus) -> float:
    started = time.perf_counter()
    system.build(built)
    return time.perf_counter() - started


def figures(name: str, chunks: int, profile: io.StringIO | None) -> dict[str, object]:
    built = CORPORA[name](chunks)
    systems: dict[str, System] = {ENGINE: EngineSystem(), TANTIVY: TantivySystem()}
    builds = {system: timed_build(systems[system], built) for system in systems}
    queries = [query.text for query in built.queries]
    samples = interleaved_ms(systems, queries)
    typo = [number for number, query in enumerate(built.queries) if query.has_typo]
    exact = [number for number, query in enumerate(built.queries) if not query.has_typo]
    measured: dict[str, object] = {"corpus": name, "chunks": chunks}
    for system, times in samples.items():
        measured[system] = {
            "build_s": round(builds[system], 3),
            "p50_ms": round(statistics.median(times), 4),
            "p95_ms": round(percentile(times, 95), 4),
            "typo_p50_ms": round(statistics.median([times[n] for n in typo]), 4),
            "exact_p50_ms": round(statistics.median([times[n] for n in exact]), 4),
        }
    engine, tantivy = samples[ENGINE], samples[TANTIVY]
    measured["p50_over_tantivy"] = round(statistics.median(engine) / statistics.median(tantivy), 2)
    measured["p95_over_tantivy"] = round(percentile(engine, 95) / percentile(tantivy, 95), 2)
    if profile is not None:
        profiler = cProfile.Profile()
        profiler.runcall(lambda: [systems[ENGINE].search(query) for query in queries])
        profile.write(f"== {name} at {chunks} chunks: a second engine pass of the queries\n")
        stats = pstats.Stats(profiler, stream=profile)
        stats.sort_stats("cumulative").print_stats("pytest_qualbench", PROFILE_LINES)
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chunks", type=int)
    parser.add_argument("--profile", type=Path)
    args = parser.parse_args()
    profile = io.StringIO() if args.profile else None
    for name in CORPORA:
        print(json.dumps(figures(name, args.chunks, profile), sort_keys=True), flush=True)
        # Free one corpus's indexes before the next corpus is built.
        gc.collect()
    if args.profile and profile is not None:
        args.profile.write_text(profile.getvalue(), encoding="utf-8")


if __name__ == "__main__":
    main()
