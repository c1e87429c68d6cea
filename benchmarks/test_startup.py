"""Start-up: a one-case qualbench run against a trivial pytest run, whole processes, same run.

`pytest --qualbench -k md_001_q1` over a copy of bench_fixtures/ (its second
run, so the index comes from the on-disk cache as it does in everyday use)
against `pytest` of one trivial test, both with the same plugins loaded, in
alternating fresh processes; the median of the rounds' ratios is asserted.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from benchmarks.ledger import Ledger
from benchmarks.pytest_runs import copy_fixtures, run_pytest, write_trivial_suite

FIXTURES = Path(__file__).resolve().parent.parent / "bench_fixtures"
ROUNDS = 7
ONE_CASE = ("--qualbench", "-k", "md_001_q1")
TARGET = 2.5


def test_one_case_run_starts_near_a_trivial_run(tmp_path: Path, ledger: Ledger) -> None:
    bench = copy_fixtures(FIXTURES, tmp_path / "bench")
    trivial = write_trivial_suite(tmp_path / "trivial", 1)
    # First runs write the bytecode and the index cache every later run finds.
    run_pytest(bench, ONE_CASE)
    run_pytest(trivial, [])
    rounds = [(run_pytest(bench, ONE_CASE), run_pytest(trivial, [])) for _ in range(ROUNDS)]
    ratios = sorted(one_case / plain for one_case, plain in rounds)
    median = statistics.median(ratios)
    one_case_ms = statistics.median(one_case for one_case, _ in rounds)
    plain_ms = statistics.median(plain for _, plain in rounds)
    ledger.notes.append(
        f"one-case run {one_case_ms:.0f} ms vs trivial pytest run {plain_ms:.0f} ms: "
        f"median ratio {median:.2f} of {ROUNDS} rounds ({ratios[0]:.2f}-{ratios[-1]:.2f}), "
        f"target <= {TARGET}"
    )
    assert (bench / ".qualbench" / "index-cache" / "markdown.idx").is_file()
    assert median <= TARGET
