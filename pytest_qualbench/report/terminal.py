"""The qualbench section of pytest's terminal summary, by verbosity, with colour hints.

`-q` gives a few lines (headline metrics, negatives, the floors verdict with only
the failing floors, the report path); the default adds the per-type table and the
optional sections; `-v` adds per-type latency and every floor line. Lines carry a
colour name, not escape codes: pytest's terminal writer applies it, so `--color=no`
is honoured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_qualbench.evaluation.metrics import NEGATIVE_METRIC
from pytest_qualbench.report.floors import FloorVerdict
from pytest_qualbench.report.model import LatencyJson, Report
from pytest_qualbench.report.summary import SUMMARY_COLUMNS, section_summary_lines, table_lines

GREEN = "green"
RED = "red"
YELLOW = "yellow"
# Cases named by the duplicate-results warning; the report counts every one.
DUPLICATE_CASES_SHOWN = 10


@dataclass(frozen=True)
class SummaryLine:
    """One terminal line and the colour (None: plain) pytest's writer shows it in."""

    text: str
    colour: str | None = None
    bold: bool = False


def summary(
    report: Report,
    report_path: Path | None,
    verdicts: Sequence[FloorVerdict],
    verbosity: int,
) -> list[SummaryLine]:
    """The qualbench section for pytest's verbosity (-q is -1, -v is 1)."""
    if verbosity < 0:
        lines = [SummaryLine(headline(report)), negatives_line(report)]
    else:
        lines = [SummaryLine(line) for line in table_lines(report)]
        lines.append(negatives_line(report))
        lines += [SummaryLine(line) for line in section_summary_lines(report)]
        if verbosity > 0:
            lines += [SummaryLine(line) for line in latency_lines(report)]
        lines.append(SummaryLine(f"dataset: {report['dataset_hash']}"))
    lines += floor_lines(report, verdicts, every_floor=verbosity > 0)
    lines += duplicate_lines(report)
    if report_path is not None:
        lines.append(SummaryLine(f"report: {report_path}"))
    return lines


def headline(report: Report) -> str:
    overall = report["overall"]
    metrics = "  ".join(f"{label} {_fmt(overall.get(metric))}" for label, metric in SUMMARY_COLUMNS)
    return f"{overall['cases']} cases: {metrics}"


def negatives_line(report: Report) -> SummaryLine:
    negatives = report["negatives"]
    total = negatives["cases"]
    if not total:
        return SummaryLine("negatives: none in this run")
    passed = round((negatives.get(NEGATIVE_METRIC) or 0.0) * total)
    text = f"negatives: {passed} of {total} returned nothing"
    return SummaryLine(text, GREEN if passed == total else RED)


def latency_lines(report: Report) -> list[str]:
    """Search latency and index time per content type (built, or loaded from the cache)."""
    latency = report["latency"]
    missing: LatencyJson = {"p50_ms": None, "p95_ms": None, "index_ms": None}
    rows = [name for name in sorted(latency) if name != "overall"] + ["overall"]
    lines = ["", f"{'latency':<14}{'p50 ms':>9}{'p95 ms':>9}{'index ms':>10}{'warm-up ms':>12}"]
    for name in rows:
        row = latency.get(name, missing)
        lines.append(
            f"{name:<14}{_fmt(row.get('p50_ms'), 2):>9}{_fmt(row.get('p95_ms'), 2):>9}"
            f"{_fmt(row.get('index_ms'), 1):>10}{_fmt(row.get('warmup_ms'), 1):>12}"
            + ("  cached" if row.get("index") == "cached" else "")
        )
    return lines


def floor_lines(
    report: Report, verdicts: Sequence[FloorVerdict], *, every_floor: bool
) -> list[SummaryLine]:
    """The floors verdict, then each failing floor (each floor under -v)."""
    if not verdicts:
        return [SummaryLine("floors: none configured (ini qualbench_floors, --qualbench-floor)")]
    failed = [verdict for verdict in verdicts if verdict.ok is False]
    selection = report["metadata"]["selection"]
    if all(verdict.ok is None for verdict in verdicts):
        ran, total = selection["cases_run"], selection["cases_in_fixture_set"]
        head = SummaryLine(f"floors not enforced: {ran} of {total} cases ran", YELLOW)
    elif failed:
        head = SummaryLine(f"floors: {len(failed)} of {len(verdicts)} not met", RED, bold=True)
    else:
        head = SummaryLine(f"floors: all {len(verdicts)} met", GREEN)
    shown = verdicts if every_floor else failed
    return [head] + [
        SummaryLine(f"  {verdict.describe()}", RED if verdict.ok is False else None)
        for verdict in shown
    ]


def duplicate_lines(report: Report) -> list[SummaryLine]:
    """One warning per case whose engine returned a chunk twice (the repeat counted once)."""
    repeated = [case for case in report["cases"] if case.get("duplicate_results")]
    lines = [
        SummaryLine(
            f"duplicate results: {case['case_id']}: {case['duplicate_results']} repeated "
            "chunk(s) counted once",
            YELLOW,
        )
        for case in repeated[:DUPLICATE_CASES_SHOWN]
    ]
    if len(repeated) > DUPLICATE_CASES_SHOWN:
        more = len(repeated) - DUPLICATE_CASES_SHOWN
        lines.append(
            SummaryLine(
                f"duplicate results: {more} more case(s) (cases[].duplicate_results)", YELLOW
            )
        )
    return lines


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"
