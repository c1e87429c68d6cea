"""The engine against bm25s, tantivy and SQLite FTS5: same corpus, same queries, same run.

Builds run in a fresh process per system (fresh_build), alternated system by
system and repeated, so time and memory are each system's own and a slow
stretch of the machine does not land on one system only. Queries run in this
process on every system in turn, one query at a time (measure.interleaved_pass).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pytest_benchmark.fixture import BenchmarkFixture

from benchmarks.corpus import SCALES
from benchmarks.ledger import (
    BUILD_S,
    EXACT_P50_MS,
    PEAK_MB,
    QUERY_P50_MS,
    QUERY_P95_MS,
    RECALL,
    REPEAT_P50_MS,
    RETAINED_MB,
    TYPO_P50_MS,
    Ledger,
)
from benchmarks.measure import interleaved_pass, median_query_ms, percentile_query_ms
from benchmarks.systems import SYSTEMS
from benchmarks.workbench import Workbench

REPO = Path(__file__).resolve().parent.parent
# Rounds of one fresh build per system; a 100k round takes minutes.
BUILD_ROUNDS = {"1k": 3, "10k": 3, "100k": 2}
# Passes over the 200 queries after the first; a 100k FTS5 pass takes many seconds.
REPEAT_PASSES = {"1k": 3, "10k": 3, "100k": 2}
# Every system must find the source chunk of at least this share of the queries.
MIN_SOURCE_RECALL = 0.5
FRESH_BUILD_TIMEOUT_S = 1800


def fresh_build(system: str, chunks: int) -> dict[str, float]:
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.fresh_build", system, str(chunks)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=FRESH_BUILD_TIMEOUT_S,
    )
    measured: dict[str, float] = json.loads(completed.stdout.strip().splitlines()[-1])
    return measured


def test_builds_in_fresh_processes(benchmark: BenchmarkFixture, ledger: Ledger, scale: str) -> None:
    rounds: list[int] = []

    def one_round() -> None:
        # Each round starts one system later, so none always builds first.
        shift = len(rounds) % len(SYSTEMS)
        for system in SYSTEMS[shift:] + SYSTEMS[:shift]:
            measured = fresh_build(system, SCALES[scale])
            ledger.record(scale, BUILD_S, system, measured["build_s"])
            ledger.record(scale, PEAK_MB, system, measured["peak_mb"])
            ledger.record(scale, RETAINED_MB, system, measured["retained_mb"])
        rounds.append(shift)

    benchmark.group = f"fresh builds {scale}"
    # pytest-benchmark ships no type hints.
    benchmark.pedantic(  # type: ignore[no-untyped-call]
        one_round, rounds=BUILD_ROUNDS[scale], iterations=1
    )
    for system in SYSTEMS:
        assert ledger.get(scale, RETAINED_MB, system) is not None


def test_queries_interleaved(
    benchmark: BenchmarkFixture, workbench: Workbench, ledger: Ledger, scale: str
) -> None:
    corpus = workbench.corpus(scale)
    systems = workbench.systems(scale)
    searches = {name: built.search for name, built in systems.items()}
    queries = [query.text for query in corpus.queries]
    # The first pass sees each query for the first time, as a benchmark run does (each
    # case runs once); later passes hit whatever a system memoises (stems, corrections).
    first: dict[str, list[list[int]]] = {name: [[] for _ in queries] for name in searches}
    results = interleaved_pass(searches, queries, first)
    repeats: dict[str, list[list[int]]] = {name: [[] for _ in queries] for name in searches}
    benchmark.group = f"interleaved query passes {scale}"
    # pytest-benchmark ships no type hints.
    benchmark.pedantic(  # type: ignore[no-untyped-call]
        interleaved_pass,
        args=(searches, queries, repeats),
        rounds=REPEAT_PASSES[scale],
        iterations=1,
    )
    typo = [number for number, query in enumerate(corpus.queries) if query.has_typo]
    exact = [number for number, query in enumerate(corpus.queries) if not query.has_typo]
    row_of = {entry.id: row for row, entry in enumerate(corpus.entries)}
    for name in searches:
        samples = first[name]
        ledger.record(scale, QUERY_P50_MS, name, median_query_ms(samples))
        ledger.record(scale, QUERY_P95_MS, name, percentile_query_ms(samples, 95))
        ledger.record(scale, TYPO_P50_MS, name, median_query_ms([samples[n] for n in typo]))
        ledger.record(scale, EXACT_P50_MS, name, median_query_ms([samples[n] for n in exact]))
        ledger.record(scale, REPEAT_P50_MS, name, median_query_ms(repeats[name]))
        found = sum(
            row_of[query.source_entry_id] in rows
            for query, rows in zip(corpus.queries, results[name], strict=True)
        )
        ledger.record(scale, RECALL, name, found / len(queries))
    for name in searches:
        recall = ledger.get(scale, RECALL, name)
        assert recall is not None and recall >= MIN_SOURCE_RECALL, f"{name} finds too little"
