"""End to end: five times the entries, each with a case, must cost at most 6.5x the time.

Whole `pytest --qualbench` processes over fixture sets of the synthetic corpus's
first 10k and 50k chunks, one case on each entry, index cache empty: what a
project whose benchmark grows pays, from collection to the written report.
Nothing per case may scan the corpus (the relevant set is counted through an
index), so the cost grows with the entries, not with entries times cases.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from benchmarks.ledger import Ledger
from benchmarks.pytest_runs import run_pytest, write_fixture_set

SMALL, LARGE = 10_000, 50_000
TARGET = 6.5


@dataclass(frozen=True)
class RunCost:
    """One run's wall time, and what its report says the engine spent indexing and searching."""

    wall_ms: float
    index_ms: float
    search_ms: float
    cases: int

    @property
    def rest_ms(self) -> float:
        """Everything but the engine: start-up, collection, judging, the report."""
        return self.wall_ms - self.index_ms - self.search_ms


def run_cost(directory: Path, args: list[str]) -> RunCost:
    wall_ms = run_pytest(directory, args)
    report = json.loads((directory / ".qualbench" / "report.json").read_text())
    return RunCost(
        wall_ms=wall_ms,
        index_ms=float(report["latency"]["overall"]["index_ms"]),
        search_ms=sum(float(case["latency_ms"]) for case in report["cases"]),
        cases=len(report["cases"]),
    )


def test_five_times_the_entries_cost_at_most_six_and_a_half_times(
    tmp_path: Path, ledger: Ledger
) -> None:
    small_set = write_fixture_set(tmp_path / "small", SMALL)
    large_set = write_fixture_set(tmp_path / "large", LARGE)
    # Checks beyond needles and rank would only add failure texts to both sides alike.
    args = ["--qualbench", "--qualbench-checks=needles,rank"]
    small = run_cost(small_set, args)
    large = run_cost(large_set, args)
    ratio = large.wall_ms / small.wall_ms
    ledger.notes.append(
        f"end to end, {LARGE // 1000}k entries with a case each {large.wall_ms / 1000:.1f} s vs "
        f"{SMALL // 1000}k {small.wall_ms / 1000:.1f} s: {ratio:.2f}x (target <= {TARGET}); "
        f"of which index {large.index_ms / 1000:.1f} vs {small.index_ms / 1000:.1f} s, "
        f"search {large.search_ms / 1000:.1f} vs {small.search_ms / 1000:.1f} s, "
        f"the rest {large.rest_ms / 1000:.1f} vs {small.rest_ms / 1000:.1f} s "
        f"({large.rest_ms / small.rest_ms:.2f}x)"
    )
    assert large.cases >= 0.9 * LARGE
    assert ratio <= TARGET
