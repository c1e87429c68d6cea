"""What a comparison says first: what differs between the runs, then its regressions.

Regressions read by metric (one line per metric, its scopes beside it) and by
case (one line per case, every metric it moved), so 4 newly failing cases read
as 4 lines, not as 41 metric-and-scope bullets. In markdown the full list folds
into a `<details>` block under a summary of a few lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_qualbench.compare.formatting import format_p, format_rank, heading, literal, table
from pytest_qualbench.compare.records import (
    OVERALL,
    CaseMove,
    Comparison,
    MetricChange,
    Rule,
    SetupChange,
)
from pytest_qualbench.compare.statistics import FLOAT_SLACK
from pytest_qualbench.evaluation.metrics import metric_sort_key

# The setting rows shown before the rest folds away (markdown) or is counted (a new engine).
SETUP_SHOWN = 8
# The row of an engine's library and version (`library` in its config).
ENGINE_LIBRARY = "engine config library"
# Names listed in a markdown summary line before "and N more".
SUMMARY_NAMES = 5


def regression_summary(comparison: Comparison) -> str:
    """`2 metrics beyond their rules, 4 cases newly failing`, or `no regression`."""
    metrics = len(regressed_metrics(comparison))
    failing = sum(1 for case in comparison.worse_cases if case.newly_failing)
    parts = []
    if metrics:
        parts.append(f"{metrics} metric{_plural(metrics)} beyond {_their(metrics)} rule")
    if failing:
        parts.append(f"{failing} case{_plural(failing)} newly failing")
    return ", ".join(parts) or "no regression"


def setup_section(comparison: Comparison, fmt: str) -> str:
    """The settings that differ between the runs, before any number."""
    rows = [[change.name, change.base, change.head] for change in shown_setup(comparison.setup)]
    notes = ("\n\n" if fmt == "markdown" else "\n").join(comparison.unrecorded)
    if not rows:
        if notes:
            separator = "\n\n" if fmt == "markdown" else "\n"
            return f"Same engine, options, plugin version, dataset and Python.{separator}{notes}"
        return "Same engine, options, libraries, plugin version, dataset and Python."
    title = heading(f"What differs between the runs ({len(rows)})", fmt)
    shown, rest = rows[:SETUP_SHOWN], rows[SETUP_SHOWN:]
    body = f"{title}\n\n{table(['setting', 'base', 'head'], shown, fmt)}"
    if rest:
        if fmt == "markdown":
            body += (
                f"\n\n<details><summary>{len(rest)} more</summary>\n\n"
                f"{table(['setting', 'base', 'head'], rest, fmt)}\n\n</details>"
            )
        else:
            body += "\n" + table(["setting", "base", "head"], rest, fmt).split("\n", 1)[1]
    return f"{body}\n\n{notes}" if notes else body


def shown_setup(setup: Sequence[SetupChange]) -> list[SetupChange]:
    """The setup changes, with a changed engine's config keys counted on one row.

    The engines' libraries (`engine config library`, each with its version) keep their row.
    """
    if not any(change.name == "engine" for change in setup):
        return list(setup)
    config = [
        change
        for change in setup
        if change.name.startswith("engine config ") and change.name != ENGINE_LIBRARY
    ]
    rows = [change for change in setup if change not in config]
    if config:
        position = 1 + sum(1 for change in rows if change.name.startswith("engine option "))
        keys = f"{len(config)} key{_plural(len(config))} differ"
        rows.insert(position, SetupChange("engine config", keys, "(another engine)"))
    return rows


def regressed_metrics(comparison: Comparison) -> dict[str, list[MetricChange]]:
    """Each metric that broke its rule, with the scopes (overall first) where it did."""
    regressed = {regression.subject for regression in comparison.regressions}
    by_metric: dict[str, list[MetricChange]] = {}
    for change in comparison.changes:
        if change.subject in regressed:
            by_metric.setdefault(change.metric, []).append(change)
    return {name: by_metric[name] for name in sorted(by_metric, key=metric_sort_key)}


def regressions_section(comparison: Comparison, fmt: str) -> str:
    """The regressions by metric and by case; in markdown a short summary over the full list."""
    rules = "rules: " + ", ".join(str(rule) for rule in comparison.rules)
    metrics = regressed_metrics(comparison)
    cases = comparison.worse_cases
    if not comparison.regressions:
        none = f"{heading('Regressions (0)', fmt)}\n\nnone ({rules})"
        if not cases:
            return none
        # Worse within the rules: worth a look, folded away in a pull request comment.
        title = f"Cases that got worse ({len(cases)}, within the rules)"
        lines = [_case_line(case, fmt) for case in cases]
        if fmt == "markdown":
            listed = "\n".join(f"- {line}" for line in lines)
            return f"{none}\n\n<details><summary>{title}</summary>\n\n{listed}\n\n</details>"
        return f"{none}\n\n{heading(title, fmt)}\n\n" + "\n".join("  " + line for line in lines)
    title = heading(f"Regressions: {regression_summary(comparison)}", fmt)
    rule_of = {rule.metric: rule for rule in comparison.rules}
    metric_lines = [_metric_line(name, changes, rule_of, fmt) for name, changes in metrics.items()]
    case_lines = [_case_line(case, fmt) for case in cases]
    if fmt != "markdown":
        parts = [title]
        if metric_lines:
            parts.append("\n".join("  " + line for line in metric_lines))
        if case_lines:
            worse = f"Cases that got worse ({len(cases)}, newly failing first)"
            parts.append(
                heading(worse, fmt) + "\n\n" + "\n".join("  " + line for line in case_lines)
            )
        parts.append(rules)
        return "\n\n".join(parts)
    summary = _markdown_summary(metrics, cases)
    details = "\n".join(f"- {line}" for line in [*metric_lines, *case_lines])
    fold = (
        f"<details><summary>Every regression: {len(metrics)} by metric, "
        f"{len(cases)} by case</summary>\n\n{details}\n\n{rules}\n\n</details>"
    )
    return f"{title}\n\n{summary}\n\n{fold}"


def _markdown_summary(metrics: dict[str, list[MetricChange]], cases: Sequence[CaseMove]) -> str:
    lines = []
    if metrics:
        names = [f"`{name}` ({_scope_summary(changes)})" for name, changes in metrics.items()]
        lines.append(f"- **metrics beyond their rule**: {_first(names)}")
    failing = [literal(case.case_id, "markdown") for case in cases if case.newly_failing]
    if failing:
        lines.append(f"- **newly failing**: {_first(failing)}")
    others = sum(1 for case in cases if not case.newly_failing)
    if others:
        lines.append(f"- **worse, still passing**: {others} case{_plural(others)}")
    return "\n".join(lines)


def _metric_line(
    name: str, changes: Sequence[MetricChange], rule_of: dict[str, Rule], fmt: str
) -> str:
    rule = rule_of.get(name)
    allowed = (
        ""
        if rule is None
        else " (any drop fails)"
        if rule.max_drop <= FLOAT_SLACK
        else f" (allowed {rule.max_drop:g})"
    )
    return f"{literal(name, fmt)}{allowed}: {_scopes(changes, fmt)}"


def _scopes(changes: Sequence[MetricChange], fmt: str) -> str:
    """Every scope where the metric broke its rule, with base, head, delta and p."""
    parts = []
    for change in changes:
        scope = change.scope if change.scope == OVERALL else literal(change.scope, fmt)
        if change.base is None or change.head is None or change.delta is None:
            parts.append(f"{scope} n/a")
            continue
        parts.append(
            f"{scope} {change.base:.4f} -> {change.head:.4f} "
            f"({change.delta:+.4f}, p={format_p(change.p_value)})"
        )
    return "; ".join(parts)


def _scope_summary(changes: Sequence[MetricChange]) -> str:
    """`overall -0.0200 and 2 content types`: the first scope's delta and how many more."""
    first, rest = changes[0], len(changes) - 1
    scope = first.scope if first.scope == OVERALL else literal(first.scope, "markdown")
    delta = "n/a" if first.delta is None else f"{first.delta:+.4f}"
    if not rest:
        return f"{scope} {delta}"
    more = f"{rest} content type{_plural(rest)}" if first.scope == OVERALL else f"{rest} more"
    return f"{scope} {delta} and {more}"


def _case_line(case: CaseMove, fmt: str) -> str:
    status = (
        f" newly failing ({', '.join(case.failures) or 'failed'})" if case.newly_failing else ""
    )
    parts = []
    if case.base_rank != case.head_rank:
        parts.append(f"rank {format_rank(case.base_rank)} -> {format_rank(case.head_rank)}")
    if case.moves:
        parts.append(
            ", ".join(
                f"{literal(move.metric, fmt)} {_short(move.base)} -> {_short(move.head)}"
                for move in case.moves
            )
        )
    moved = f": {'; '.join(parts)}" if parts else ""
    return f"{literal(case.case_id, fmt)} [{literal(case.content_type, fmt)}]{status}{moved}"


def _short(value: float) -> str:
    """0 and 1 as themselves, anything between with three decimals."""
    return f"{value:.0f}" if value in (0.0, 1.0) else f"{value:.3f}"


def _first(names: Sequence[str]) -> str:
    shown = ", ".join(names[:SUMMARY_NAMES])
    hidden = len(names) - SUMMARY_NAMES
    return f"{shown} and {hidden} more" if hidden > 0 else shown


def _plural(count: int) -> str:
    return "" if count == 1 else "s"


def _their(count: int) -> str:
    return "its" if count == 1 else "their"
