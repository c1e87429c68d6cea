"""The ledger's figures from a benchmark's rounds, on tiny inputs with answers worked by hand;
and pytest-benchmark taking a fresh-build child's seconds as a round's time (ChildClock).
"""

from __future__ import annotations

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from benchmarks.conftest import rotated
from benchmarks.fresh_build import ChildClock
from benchmarks.ledger import (
    BUILD_S,
    EXACT_P50_MS,
    PEAK_MB,
    QUERY_P50_MS,
    QUERY_P95_MS,
    QUERY_P99_MS,
    RECALL,
    REPEAT_P50_MS,
    TARGETS,
    TYPO_P50_MS,
    Ledger,
)
from benchmarks.measure import percentile
from benchmarks.rounds import rounds_s, skip_unless_timed
from benchmarks.systems import BM25S, ENGINE, TANTIVY

CLOCK = ChildClock()


def test_nearest_rank_percentile() -> None:
    # ceil(0.5 * 3) = 2nd of 1, 3, 5; ceil(0.95 * 3) = 3rd.
    assert percentile([5.0, 1.0, 3.0], 50) == 3.0
    assert percentile([5.0, 1.0, 3.0], 95) == 5.0
    # Of 200 queries (the benchmark's count), p99 is the 198th: ceil(0.99 * 200).
    assert percentile([float(ms) for ms in range(200, 0, -1)], 99) == 198.0


def test_query_figures_come_from_the_rounds_in_query_order() -> None:
    ledger = Ledger()
    ledger.record_queries(
        "prose", "1k", ENGINE, [0.001, 0.004, 0.002, 0.010], [False, True, False, True], 0.75
    )
    # Milliseconds 1, 4, 2, 10: median 3; p95 and p99 the 4th of 4; typo 4 and 10; exact
    # 1 and 2.
    figures = (QUERY_P50_MS, QUERY_P95_MS, QUERY_P99_MS, TYPO_P50_MS, EXACT_P50_MS, RECALL)
    assert ledger.figures("prose", "1k", ENGINE, figures) == pytest.approx(
        {
            QUERY_P50_MS: 3.0,
            QUERY_P95_MS: 10.0,
            QUERY_P99_MS: 10.0,
            TYPO_P50_MS: 7.0,
            EXACT_P50_MS: 1.5,
            RECALL: 0.75,
        }
    )


def test_builds_keep_every_round_and_repeats_their_median() -> None:
    ledger = Ledger()
    ledger.record_builds("prose", "1k", BM25S, [3.0, 1.0, 2.0], [10.0, 12.0, 11.0], [5.0] * 3)
    ledger.record_repeats("prose", "1k", BM25S, [0.002, 0.001, 0.003, 0.004])
    assert ledger.get("prose", "1k", BUILD_S, BM25S) == 2.0
    assert ledger.spread("prose", "1k", PEAK_MB, BM25S) == (10.0, 12.0)
    assert ledger.get("prose", "1k", REPEAT_P50_MS, BM25S) == pytest.approx(2.5)


def test_targets_are_ratios_within_one_corpus() -> None:
    ledger = Ledger()
    ledger.record_queries("prose", "100k", ENGINE, [0.003], [False], 0.9)
    ledger.record_queries("prose", "100k", TANTIVY, [0.001], [False], 0.8)
    ledger.record_queries("other", "100k", TANTIVY, [0.003], [False], 0.8)
    p50 = next(target for target in TARGETS if target.name == "query p50 / tantivy")
    assert p50.value(ledger, "prose", "100k") == pytest.approx(3.0)
    assert not p50.met(3.0)
    assert p50.value(ledger, "other", "100k") is None
    assert any(line.startswith("prose    |  100k | query_p50_ms") for line in ledger.table())


def test_each_corpus_and_scale_starts_one_system_later() -> None:
    assert rotated(("a", "b", "c"), 4) == ["b", "c", "a"]


@pytest.mark.benchmark(timer=CLOCK)
def test_a_child_clock_round_is_what_the_child_reported(benchmark: BenchmarkFixture) -> None:
    skip_unless_timed(benchmark)
    reported = iter([2.5, 0.75])
    benchmark.group = "self-check of ChildClock: made-up seconds, no timing"
    # pytest-benchmark's methods carry no type hints.
    benchmark.pedantic(  # type: ignore[no-untyped-call]
        lambda: CLOCK.advance(next(reported)), rounds=2, iterations=1
    )
    assert rounds_s(benchmark) == [2.5, 0.75]
