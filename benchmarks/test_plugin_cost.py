"""The plugin's own cost per case, and the price of merely having it installed."""

from __future__ import annotations

from pathlib import Path

from benchmarks.ledger import Ledger
from benchmarks.pytest_runs import (
    fastest_ms,
    idle_overhead_ms,
    per_item_ms,
    qualbench_run,
    single_case_fixtures,
    write_trivial_suite,
)

FIXTURES = Path(__file__).resolve().parent.parent / "bench_fixtures"
# A qualbench run takes seconds; a trivial suite's run well under one, so it can repeat more.
REPEATS = 3
TRIVIAL_REPEATS = 7
IDLE_REPEATS = 20
PER_CASE_TARGET = 1.5
IDLE_TARGET_MS = 50.0
UNRELATED_SUITE_SIZE = 20


def test_plugin_cost_per_case(tmp_path: Path, ledger: Ledger) -> None:
    """Wall time less start-up, indexing and search, per case, against pytest's per item."""
    full = qualbench_run(tmp_path / "full", FIXTURES, REPEATS)
    one_case = single_case_fixtures(FIXTURES, tmp_path / "one_case_fixtures")
    single = qualbench_run(tmp_path / "single", one_case, REPEATS)
    plugin_ms = per_item_ms(full.own_ms, single.own_ms, full.cases)
    many_items = fastest_ms(write_trivial_suite(tmp_path / "many", full.cases), [], TRIVIAL_REPEATS)
    one_item = fastest_ms(write_trivial_suite(tmp_path / "one", 1), [], TRIVIAL_REPEATS)
    pytest_ms = per_item_ms(many_items, one_item, full.cases)
    ledger.notes.append(
        f"plugin own cost per case {plugin_ms:.3f} ms vs pytest per item {pytest_ms:.3f} ms "
        f"(ratio {plugin_ms / pytest_ms:.2f}, target <= {PER_CASE_TARGET}; {full.cases} cases; "
        f"full run {full.wall_ms:.0f} ms of which index {full.index_ms:.0f} ms, "
        f"search {full.search_ms:.0f} ms)"
    )
    assert plugin_ms <= PER_CASE_TARGET * pytest_ms


def test_installed_plugin_is_cheap(tmp_path: Path, ledger: Ledger) -> None:
    """A plain run of an unrelated suite, with the plugin loaded and with -p no:qualbench."""
    overhead = idle_overhead_ms(write_trivial_suite(tmp_path, UNRELATED_SUITE_SIZE), IDLE_REPEATS)
    ledger.notes.append(
        f"installed but unused plugin adds {overhead:.1f} ms to a plain pytest run "
        f"(target < {IDLE_TARGET_MS:.0f} ms)"
    )
    assert overhead < IDLE_TARGET_MS
