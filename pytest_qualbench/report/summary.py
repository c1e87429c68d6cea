"""The report's tables as terminal lines: metrics per content type, optional sections.

`report.terminal` arranges them, with negatives, floors and paths, by verbosity.
"""

from __future__ import annotations

from pytest_qualbench.report.model import Report
from pytest_qualbench.sections import head_to_head, start_times, tokens

SUMMARY_COLUMNS = (
    ("hit@1", "hit@1"),
    ("hit@3", "hit@3"),
    ("mrr", "mrr"),
    ("ndcg@10", "ndcg@10"),
    ("ctx_rec", "context_recall"),
    ("layer", "layer_accuracy"),
)


def table_lines(report: Report) -> list[str]:
    """The per-type table: one row per content type, then overall."""
    header = f"{'content type':<14}{'cases':>6}" + "".join(
        f"{label:>9}" for label, _ in SUMMARY_COLUMNS
    )
    header += f"{'p50 ms':>9}"
    lines = [header]
    rows = [*report["by_content_type"].items(), ("overall", report["overall"])]
    for name, table in rows:
        row = report["latency"].get(name)
        latency = None if row is None else row["p50_ms"]
        cells = "".join(f"{_fmt(table.get(metric)):>9}" for _, metric in SUMMARY_COLUMNS)
        lines.append(f"{name:<14}{table['cases']:>6}{cells}{_fmt(latency, 2):>9}")
    return lines


def section_summary_lines(report: Report) -> list[str]:
    """The optional sections' tables (docs/head-to-head.md), each after a blank line."""
    formatters = (
        ("rankers", report.get("rankers"), head_to_head.summary_lines),
        ("token_cost", report.get("token_cost"), tokens.summary_lines),
        ("start_times", report.get("start_times"), start_times.summary_lines),
    )
    lines: list[str] = []
    for name, section, formatter in formatters:
        if section is None:
            continue
        lines.append("")
        if "skipped" in section:
            lines.append(f"{name} skipped: {section['skipped']}")
        else:
            lines.extend(formatter(section))
    return lines


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"
