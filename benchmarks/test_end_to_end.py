"""End to end: five times the entries, each with a case, must cost at most 6.5x the time.

Whole `pytest --qualbench` processes over fixture sets of the synthetic corpus's
first 10k and 50k chunks, one case on each entry, index cache empty: what a
project whose benchmark grows pays, from collection to the written report.
Nothing per case may scan the corpus (the relevant set is counted through an
index), so the cost grows with the entries, not with entries times cases.
"""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.ledger import Ledger
from benchmarks.pytest_runs import run_pytest, write_fixture_set

SMALL, LARGE = 10_000, 50_000
TARGET = 6.5


def test_five_times_the_entries_cost_at_most_six_and_a_half_times(
    tmp_path: Path, ledger: Ledger
) -> None:
    small = write_fixture_set(tmp_path / "small", SMALL)
    large = write_fixture_set(tmp_path / "large", LARGE)
    # Checks beyond needles and rank would only add failure texts to both sides alike.
    args = ["--qualbench", "--qualbench-checks=needles,rank"]
    small_ms = run_pytest(small, args)
    large_ms = run_pytest(large, args)
    ratio = large_ms / small_ms
    ledger.notes.append(
        f"end to end, {LARGE // 1000}k entries with a case each {large_ms / 1000:.1f} s vs "
        f"{SMALL // 1000}k {small_ms / 1000:.1f} s: {ratio:.2f}x (target <= {TARGET})"
    )
    report = json.loads((large / ".qualbench" / "report.json").read_text())
    assert len(report["cases"]) >= 0.9 * LARGE
    assert ratio <= TARGET
