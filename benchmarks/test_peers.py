"""The engine against bm25s, tantivy and SQLite FTS5: same corpus, same queries, same run.

Every figure is a pytest-benchmark benchmark, one per (corpus, scale, system), so
`--benchmark-json` stores it and `pytest-benchmark compare` sets it beside another
commit's; the closing table (ledger) reads its values from these benchmarks.

- `test_fresh_builds`: each round is one build in a fresh process (fresh_build), so
  time and memory are the system's own. The round's time is the build as the child
  timed it around `build()`, handed to pytest-benchmark by a clock that moves only
  by what the child measured (fresh_build.ChildClock). A timer around the subprocess would add
  the interpreter's start, the imports, the corpus generation and the warm-up
  build, which are most of a 1k round, differ from system to system and are no
  part of a build. Peak and retained RSS of each round go to `extra_info`.
- `test_first_sight_queries`: each round is one query seen for the first time, as
  a benchmark run sees it (the engine's typo corrections run then), one iteration,
  no warm-up: the median is the p50 over queries, the rounds in query order give
  p95 and the typo/exact split. Recall goes to `extra_info`.
- `test_repeat_queries`: one untimed pass, then rounds over later passes, which hit
  whatever a system memoises (stems, corrections).

A system's queries run back to back, not interleaved query by query with the other
systems: a pytest-benchmark benchmark times one test. A change in the machine's
pace during one system's block lands on that system alone; the blocks are short
(200 queries, well under a second to a few seconds) and each (corpus, scale) starts
one system later (conftest), so none always runs first.
"""

from __future__ import annotations

import itertools

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from benchmarks import fresh_build
from benchmarks.corpus import SCALES
from benchmarks.fresh_build import ChildClock
from benchmarks.ledger import (
    EXACT_P50_MS,
    PEAK_MB,
    QUERY_P50_MS,
    QUERY_P95_MS,
    QUERY_P99_MS,
    RECALL,
    REPEAT_P50_MS,
    RETAINED_MB,
    TYPO_P50_MS,
    Ledger,
)
from benchmarks.rounds import rounds_s, skip_unless_timed
from benchmarks.workbench import Workbench

# Fresh builds per system; a 100k round takes minutes.
BUILD_ROUNDS = {"1k": 3, "10k": 3, "100k": 2}
# Passes over the 200 queries after the first; a 100k FTS5 pass takes many seconds.
REPEAT_PASSES = {"1k": 3, "10k": 3, "100k": 2}
# Every system must find the source chunk of at least this share of each corpus's
# queries, so none is timed doing nothing. Compound words repeat across chunks, so
# more chunks hold all of a query's words as the corpus grows: at 100k every system's
# share is 0.44-0.49 and at 1M the engine's 0.315, where a broken system finds none.
MIN_SOURCE_RECALL = {"prose": 0.5, "compound": 0.25}
QUERY_FIGURES = (QUERY_P50_MS, QUERY_P95_MS, QUERY_P99_MS, TYPO_P50_MS, EXACT_P50_MS, RECALL)
CHILD_CLOCK = ChildClock()


@pytest.mark.benchmark(timer=CHILD_CLOCK)
def test_fresh_builds(
    benchmark: BenchmarkFixture, ledger: Ledger, corpus_name: str, scale: str, system: str
) -> None:
    skip_unless_timed(benchmark)
    peak_mb: list[float] = []
    retained_mb: list[float] = []

    def one_build() -> None:
        measured = fresh_build.run(corpus_name, system, SCALES[scale])
        CHILD_CLOCK.advance(measured["build_s"])
        peak_mb.append(measured["peak_mb"])
        retained_mb.append(measured["retained_mb"])

    benchmark.group = f"fresh build, {corpus_name} {scale}"
    # pytest-benchmark's methods carry no type hints.
    benchmark.pedantic(  # type: ignore[no-untyped-call]
        one_build, rounds=BUILD_ROUNDS[scale], iterations=1
    )
    benchmark.extra_info[PEAK_MB] = peak_mb
    benchmark.extra_info[RETAINED_MB] = retained_mb
    ledger.record_builds(
        corpus_name,
        scale,
        system,
        rounds_s(benchmark),
        benchmark.extra_info[PEAK_MB],
        benchmark.extra_info[RETAINED_MB],
    )


def test_first_sight_queries(
    benchmark: BenchmarkFixture,
    workbench: Workbench,
    ledger: Ledger,
    corpus_name: str,
    scale: str,
    system: str,
) -> None:
    skip_unless_timed(benchmark)
    corpus = workbench.corpus(corpus_name, scale)
    built = workbench.systems(corpus_name, scale)[system]
    pending = iter(corpus.queries)
    found: list[list[int]] = []

    def next_query() -> tuple[tuple[str], dict[str, object]]:
        return (next(pending).text,), {}

    def search(query: str) -> None:
        found.append(built.search(query))

    benchmark.group = f"first-sight queries, {corpus_name} {scale}"
    benchmark.pedantic(  # type: ignore[no-untyped-call]
        search, setup=next_query, rounds=len(corpus.queries), iterations=1
    )
    benchmark.extra_info[RECALL] = corpus.source_recall(found)
    ledger.record_queries(
        corpus_name,
        scale,
        system,
        rounds_s(benchmark),
        [query.has_typo for query in corpus.queries],
        benchmark.extra_info[RECALL],
    )
    # The p95, the p99 and the typo/exact split, so the stored JSON holds every table figure.
    benchmark.extra_info.update(ledger.figures(corpus_name, scale, system, QUERY_FIGURES))
    floor = MIN_SOURCE_RECALL[corpus_name]
    assert benchmark.extra_info[RECALL] >= floor, f"{system} finds too little"


def test_repeat_queries(
    benchmark: BenchmarkFixture,
    workbench: Workbench,
    ledger: Ledger,
    corpus_name: str,
    scale: str,
    system: str,
) -> None:
    skip_unless_timed(benchmark)
    corpus = workbench.corpus(corpus_name, scale)
    built = workbench.systems(corpus_name, scale)[system]
    texts = itertools.cycle([query.text for query in corpus.queries])

    def next_query() -> tuple[tuple[str], dict[str, object]]:
        return (next(texts),), {}

    benchmark.group = f"repeat queries, {corpus_name} {scale}"
    # The warm-up rounds are one untimed pass, so the timed ones are all repeats.
    benchmark.pedantic(  # type: ignore[no-untyped-call]
        built.search,
        setup=next_query,
        rounds=REPEAT_PASSES[scale] * len(corpus.queries),
        warmup_rounds=len(corpus.queries),
        iterations=1,
    )
    ledger.record_repeats(corpus_name, scale, system, rounds_s(benchmark))
    benchmark.extra_info.update(ledger.figures(corpus_name, scale, system, (REPEAT_P50_MS,)))
