"""The plugin's own cost per case, and the price of merely having it installed."""

from __future__ import annotations

from pathlib import Path

from benchmarks.ledger import Ledger
from benchmarks.pytest_runs import (
    CostDirectories,
    case_per_file_fixtures,
    copy_fixtures,
    cost_round,
    idle_overhead_ms,
    median_round,
    qualbench_run,
    write_trivial_suite,
)

FIXTURES = Path(__file__).resolve().parent.parent / "bench_fixtures"
# Each round is four runs of three fresh processes each, about 25 s; the median of five
# rounds stands against a round whose pace changed in the middle of a run.
ROUNDS = 5
REPEATS = 3
IDLE_REPEATS = 20
PER_CASE_TARGET = 1.5
IDLE_TARGET_MS = 50.0
UNRELATED_SUITE_SIZE = 20


def test_plugin_cost_per_case(tmp_path: Path, ledger: Ledger) -> None:
    """Wall time less start-up, indexing and search, per case, against pytest's per item."""
    full = copy_fixtures(FIXTURES, tmp_path / "full")
    few = case_per_file_fixtures(FIXTURES, tmp_path / "few")
    # A first run of each writes the bytecode and the index cache every later run finds,
    # and counts the cases.
    cases = qualbench_run(full).cases
    few_cases = qualbench_run(few).cases
    directories = CostDirectories(
        full=full,
        few=few,
        many=write_trivial_suite(tmp_path / "many", cases),
        one_per_case=write_trivial_suite(tmp_path / "one_per_case", few_cases),
    )
    rounds = [cost_round(directories, REPEATS) for _ in range(ROUNDS)]
    median = median_round(rounds)
    # Milliseconds shown at the fastest pace seen in the benchmark.
    pace = min(round_.fastest_loop_ms for round_ in rounds)
    ledger.notes.append(
        f"plugin own cost per case {median.plugin_ms(pace):.3f} ms vs pytest per item "
        f"{median.pytest_ms(pace):.3f} ms (median of {ROUNDS} rounds' ratios {median.ratio:.2f}, "
        f"target <= {PER_CASE_TARGET}; all rounds: "
        f"{', '.join(f'{round_.ratio:.2f}' for round_ in rounds)}; {cases} cases against {few_cases})"
    )
    assert median.ratio <= PER_CASE_TARGET


def test_installed_plugin_is_cheap(tmp_path: Path, ledger: Ledger) -> None:
    """A plain run of an unrelated suite, with the plugin loaded and with -p no:qualbench."""
    overhead = idle_overhead_ms(write_trivial_suite(tmp_path, UNRELATED_SUITE_SIZE), IDLE_REPEATS)
    ledger.notes.append(
        f"installed but unused plugin adds {overhead:.1f} ms to a plain pytest run "
        f"(target < {IDLE_TARGET_MS:.0f} ms)"
    )
    assert overhead < IDLE_TARGET_MS
