"""Start-up: a one-case qualbench run against a trivial pytest run, whole processes, same run.

`pytest --qualbench -k md_001_q1` over a copy of bench_fixtures/ (its second
run, so the index comes from the on-disk cache as it does in everyday use)
against `pytest` of one trivial test, both with the same plugins loaded, in
alternating fresh processes. The one-case run is a pytest-benchmark benchmark:
each round is one such process, timed around the subprocess (start-up is the
figure), and just before it, untimed by the benchmark, the trivial run of the
same round, whose wall times go to `extra_info`. The median of the rounds'
ratios is asserted.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from pytest_benchmark.fixture import BenchmarkFixture

from benchmarks.ledger import Ledger
from benchmarks.pytest_runs import (
    copy_fixtures,
    pytest_command,
    run_in,
    run_pytest,
    write_trivial_suite,
)
from benchmarks.rounds import rounds_s, skip_unless_timed

FIXTURES = Path(__file__).resolve().parent.parent / "bench_fixtures"
ROUNDS = 7
ONE_CASE = ("--qualbench", "-k", "md_001_q1")
TARGET = 2.5
MS_PER_S = 1000.0


def test_one_case_run_starts_near_a_trivial_run(
    benchmark: BenchmarkFixture, tmp_path: Path, ledger: Ledger
) -> None:
    skip_unless_timed(benchmark)
    bench = copy_fixtures(FIXTURES, tmp_path / "bench")
    trivial = write_trivial_suite(tmp_path / "trivial", 1)
    # First runs write the bytecode and the index cache every later run finds.
    run_pytest(bench, ONE_CASE)
    run_pytest(trivial, [])
    plain_ms: list[float] = []

    def trivial_run() -> None:
        plain_ms.append(run_pytest(trivial, []))

    benchmark.group = "start-up: one-case qualbench run"
    # pytest-benchmark's methods carry no type hints.
    benchmark.pedantic(  # type: ignore[no-untyped-call]
        run_in, args=(bench, pytest_command(ONE_CASE)), setup=trivial_run, rounds=ROUNDS
    )
    one_case_ms = [seconds * MS_PER_S for seconds in rounds_s(benchmark)]
    benchmark.extra_info["trivial_run_ms"] = plain_ms
    ratios = sorted(one / plain for one, plain in zip(one_case_ms, plain_ms, strict=True))
    median = statistics.median(ratios)
    benchmark.extra_info["median_ratio"] = median
    ledger.notes.append(
        f"one-case run {statistics.median(one_case_ms):.0f} ms vs trivial pytest run "
        f"{statistics.median(plain_ms):.0f} ms: median ratio {median:.2f} of {ROUNDS} rounds "
        f"({ratios[0]:.2f}-{ratios[-1]:.2f}), target <= {TARGET}"
    )
    assert (bench / ".qualbench" / "index-cache" / "markdown.idx").is_file()
    assert median <= TARGET
