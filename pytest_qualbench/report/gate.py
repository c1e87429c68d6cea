"""Gate: the floors and the baseline comparison, each judged once, as one frozen verdict.

The second of the reporter's three parts (collect, gate, outputs). No pytest here:
`judge_run` takes the report built from the collected records and gives the
`Verdict` every output reads (the JSON report, the HTML page, the terminal).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_qualbench.report.floors import Floor, FloorVerdict, check_floors
from pytest_qualbench.report.model import Report

DIFFERENT_FIXTURES_REMEDY = (
    "To gate a change that edits fixtures, make the baseline from these fixture files: "
    "run the base engine on these fixtures (check out the base commit, put this run's "
    "fixture files in its place, run `pytest --qualbench --qualbench-report=base.json` "
    "there; docs/qualstat.md shows the CI recipe).",
    "To compare only the cases both runs share: qualstat --intersect BASE.json REPORT.json",
)


@dataclass(frozen=True)
class Baseline:
    """The comparison with --qualbench-compare's report, judged."""

    path: Path
    lines: tuple[str, ...]
    fails: bool
    # "" when nothing regressed, else what the last line names
    # ("2 metrics beyond their rule, 4 cases newly failing").
    regressions: str = ""
    # The comparison as one line, for -q ("" when none was made: `lines` says why).
    verdict_line: str = ""
    # The base report and the comparison as JSON, for the HTML page; None when none was made.
    base: Report | None = None
    comparison: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Verdict:
    """The run's outcome: its report, each floor's verdict, lint and the comparison."""

    report: Report
    floors: tuple[FloorVerdict, ...]
    # Why the run did not finish; None when every selected case ran.
    unfinished: str | None
    # Only some of the fixture set's cases ran (`-k`, `-m`, ...): floors are not enforced.
    subset: bool
    lint_failed: bool
    baseline: Baseline | None

    @property
    def fails(self) -> bool:
        """Whether the gate fails the run (an unfinished run's status is pytest's own)."""
        if self.unfinished is not None:
            return False
        baseline_fails = self.baseline is not None and self.baseline.fails
        return self.lint_failed or baseline_fails or any(v.ok is False for v in self.floors)

    def reasons(self) -> list[str]:
        """What failed the gate, for the run's last line."""
        reasons = [verdict.describe() for verdict in self.floors if verdict.ok is False]
        if self.lint_failed:
            reasons.append("lint errors")
        if self.baseline is not None and self.baseline.regressions:
            reasons.append(f"{self.baseline.regressions} against {self.baseline.path}")
        return reasons


def judge_run(
    report: Report,
    floors: Sequence[Floor],
    *,
    unfinished: str | None,
    subset: bool,
    lint_failed: bool,
    baseline: tuple[Path, Report | str] | None = None,
    missing_baseline_fails: bool = False,
) -> Verdict:
    """The verdict of a report built without floors; the report gains their verdicts.

    Floors are enforced on a finished run of every case. `baseline` is the compared
    report's path and content (or why it is unreadable), compared only when the run
    finished: there is nothing to gate otherwise.
    """
    enforced = not subset and unfinished is None
    verdicts = tuple(check_floors(report, floors, enforced=enforced))
    judged: Report = {**report, "floors": [verdict.to_json() for verdict in verdicts]}
    compared = None
    if baseline is not None and unfinished is None:
        path, base = baseline
        compared = compare_with_baseline(path, base, judged, missing_fails=missing_baseline_fails)
    return Verdict(judged, verdicts, unfinished, subset, lint_failed, compared)


def compare_with_baseline(
    path: Path, base: Report | str, report: Report, *, missing_fails: bool
) -> Baseline:
    """Compare the report with the baseline read before the run (or why it could not be)."""
    from pytest_qualbench.compare.diff import compare_reports
    from pytest_qualbench.compare.headline import regression_summary
    from pytest_qualbench.compare.records import IncomparableReports
    from pytest_qualbench.compare.render import comparison_to_json, render_comparison

    if isinstance(base, str):
        note = "" if missing_fails else " (warning only)"
        return Baseline(path, (f"baseline not used: {base}{note}",), missing_fails)
    try:
        comparison = compare_reports(base, report)
    except IncomparableReports as exc:
        lines: tuple[str, ...] = (f"cannot compare with {path}: {exc}",)
        if base["dataset_hash"] != report["dataset_hash"]:
            lines += DIFFERENT_FIXTURES_REMEDY
        return Baseline(path, lines, True, "no comparison possible")
    fails = comparison.exit_code != 0
    summary = regression_summary(comparison)
    return Baseline(
        path,
        tuple(render_comparison(comparison, "text").splitlines()),
        fails,
        summary if comparison.regressions else "",
        f"compare with {path}: {summary}{', the run fails' if fails else ''}",
        base,
        comparison_to_json(comparison),
    )
