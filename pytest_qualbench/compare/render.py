"""A comparison rendered as text, markdown (a pull request comment) or JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pytest_qualbench.compare.formatting import (
    format_p,
    format_rank,
    format_value,
    heading,
    literal,
    table,
)
from pytest_qualbench.compare.headline import (
    regression_summary,
    regressions_section,
    setup_section,
)
from pytest_qualbench.compare.records import (
    OVERALL,
    CaseFlip,
    Comparison,
    MetricChange,
    RankMove,
    SectionChange,
)
from pytest_qualbench.compare.statistics import ALPHA, CONFIDENCE, RESAMPLES, ROUNDS

FORMATS = ("text", "markdown", "json")


def change_row(change: MetricChange, regressed: set[str]) -> list[str]:
    """One table row of a metric change; `~` where no case changed."""
    if not change.changed:
        return [
            change.metric,
            format_value(change.base),
            format_value(change.head),
            "~",
            "",
            "",
            "",
        ]
    delta = "n/a" if change.delta is None else f"{change.delta:+.4f}"
    interval = (
        ""
        if change.ci_low is None or change.ci_high is None
        else f"[{change.ci_low:+.4f}, {change.ci_high:+.4f}]"
    )
    p_text = format_p(change.p_value) + (" *" if change.significant else "")
    verdict = "REGRESSION" if change.subject in regressed else ""
    return [
        change.metric,
        format_value(change.base),
        format_value(change.head),
        delta,
        interval,
        p_text,
        verdict,
    ]


def render_comparison(comparison: Comparison, fmt: str) -> str:
    """The comparison as `text`, `markdown` (for a pull request comment) or `json`."""
    if fmt == "json":
        return json.dumps(comparison_to_json(comparison), sort_keys=True, indent=2)
    check_format(fmt)
    verdict = regression_summary(comparison)
    base_label, head_label = (
        literal(comparison.base_label, fmt),
        literal(comparison.head_label, fmt),
    )
    title = f"qualstat: {base_label} -> {head_label}: {verdict}"
    base_hash, head_hash = literal(comparison.base_hash, fmt), literal(comparison.head_hash, fmt)
    hashes = base_hash if base_hash == head_hash else f"{base_hash} -> {head_hash}"
    parts = [
        heading(title, fmt, level=2),
        # What the runs were made with comes before any number measured with it.
        setup_section(comparison, fmt),
        f"dataset {hashes}, metric_version {comparison.metric_version}, "
        f"{comparison.shared_cases} cases compared"
        + (" (--intersect: shared cases only)" if comparison.intersect else ""),
    ]
    if comparison.intersect:
        parts.append(case_list("Removed cases, only in base", comparison.removed_cases, fmt))
        parts.append(case_list("Added cases, only in head", comparison.added_cases, fmt))
    if comparison.intersect or comparison.changed_cases:
        parts.append(
            case_list(
                "Changed cases, same id but another definition (left out)",
                comparison.changed_cases,
                fmt,
            )
        )
    # The verdict and its reasons come first: a reviewer reads them, the tables back them up.
    parts.append(regressions_section(comparison, fmt))
    parts.append(flip_list("Newly passing", comparison.newly_passing, fmt))
    regressed = {regression.subject for regression in comparison.regressions}
    for scope in dict.fromkeys(change.scope for change in comparison.changes):
        parts.append(scope_section(comparison, scope, regressed, fmt))
    tilde = "`~`" if fmt == "markdown" else "~"
    parts.append(
        f"delta {tilde}: no case changed. p: paired randomization test over per-case values "
        f"({ROUNDS:,} rounds, two-sided, seed {comparison.seed}); * p < {ALPHA}.\n"
        f"95% CI: percentile bootstrap of the delta ({RESAMPLES:,} resamples)."
    )
    parts.append(rank_moves_section(comparison.rank_moves, fmt))
    if comparison.sections:
        parts.append(sections_section(comparison.sections, fmt))
    return "\n\n".join(parts) + "\n"


def sections_section(changes: Sequence[SectionChange], fmt: str) -> str:
    """Rankers, token cost and start times side by side; no rule applies to them."""
    rows = [
        [change.name, format_value(change.base), format_value(change.head), _signed(change.delta)]
        for change in changes
    ]
    title = heading("Other sections (informational, no regression rules)", fmt)
    return title + "\n" + table(["number", "base", "head", "delta"], rows, fmt)


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}"


def scope_section(comparison: Comparison, scope: str, regressed: set[str], fmt: str) -> str:
    """The metric table of one scope; in markdown a content type folds away unless it regressed."""
    changes = [change for change in comparison.changes if change.scope == scope]
    rows = [change_row(change, regressed) for change in changes]
    body = table(["metric", "base", "head", "delta", "95% CI", "p", "verdict"], rows, fmt)
    if scope == OVERALL:
        return f"{heading(OVERALL, fmt)}\n\n{body}"
    changed = sum(1 for change in changes if change.changed)
    failed = sum(1 for change in changes if change.subject in regressed)
    summary = f"content type: {literal(scope, fmt)} ({changed} changed, {failed} regressed)"
    if fmt != "markdown":
        return f"{heading(summary, fmt)}\n\n{body}"
    # Blank lines around the table let GitHub render markdown inside <details>.
    opened = " open" if failed else ""
    return f"<details{opened}><summary>{summary}</summary>\n\n{body}\n\n</details>"


def case_list(title: str, case_ids: Sequence[str], fmt: str) -> str:
    """A titled, comma-separated list of case ids, `none` when empty."""
    shown = ", ".join(literal(case_id, fmt) for case_id in case_ids) or "none"
    return f"{heading(f'{title} ({len(case_ids)})', fmt)}\n\n{shown}"


def flip_list(title: str, flips: Sequence[CaseFlip], fmt: str) -> str:
    """Cases whose status flipped, each with the checks it fails (or failed)."""
    if not flips:
        return f"{heading(f'{title} (0)', fmt)}\n\nnone"
    rows = [[flip.case_id, ", ".join(flip.failures) or "-"] for flip in flips]
    return f"{heading(f'{title} ({len(flips)})', fmt)}\n\n" + table(["case", "checks"], rows, fmt)


def rank_moves_section(moves: Sequence[RankMove], fmt: str) -> str:
    """The largest rank moves as a table, `none` when no rank moved."""
    title = heading("Largest rank moves", fmt)
    if not moves:
        return f"{title}\n\nnone"
    rows = [
        [
            move.case_id,
            format_rank(move.base_rank),
            format_rank(move.head_rank),
            f"{move.reciprocal_delta:+.4f}",
        ]
        for move in moves
    ]
    return f"{title}\n\n" + table(["case", "base rank", "head rank", "delta 1/rank"], rows, fmt)


def comparison_to_json(comparison: Comparison) -> dict[str, Any]:
    """The comparison as plain JSON data, for machines."""
    return {
        "base": {"label": comparison.base_label, "dataset_hash": comparison.base_hash},
        "head": {"label": comparison.head_label, "dataset_hash": comparison.head_hash},
        "metric_version": comparison.metric_version,
        "intersect": comparison.intersect,
        "added_cases": list(comparison.added_cases),
        "removed_cases": list(comparison.removed_cases),
        "changed_cases": list(comparison.changed_cases),
        "shared_cases": comparison.shared_cases,
        "metrics": [
            {
                "scope": c.scope,
                "metric": c.metric,
                "base": c.base,
                "head": c.head,
                "delta": c.delta,
                "changed": c.changed,
                "pairs": c.pairs,
                "changed_cases": c.changed_cases,
                "p_value": c.p_value,
                "significant": c.significant,
                "ci95": None if c.ci_low is None else [c.ci_low, c.ci_high],
            }
            for c in comparison.changes
        ],
        "newly_failing": [
            {"case_id": f.case_id, "failures": list(f.failures)} for f in comparison.newly_failing
        ],
        "newly_passing": [
            {"case_id": f.case_id, "failures": list(f.failures)} for f in comparison.newly_passing
        ],
        "rank_moves": [
            {"case_id": m.case_id, "base_rank": m.base_rank, "head_rank": m.head_rank}
            for m in comparison.rank_moves
        ],
        "regressions": [{"subject": r.subject, "detail": r.detail} for r in comparison.regressions],
        "setup": [{"name": c.name, "base": c.base, "head": c.head} for c in comparison.setup],
        "unrecorded": list(comparison.unrecorded),
        "worse_cases": [
            {
                "case_id": c.case_id,
                "content_type": c.content_type,
                "newly_failing": c.newly_failing,
                "failures": list(c.failures),
                "base_rank": c.base_rank,
                "head_rank": c.head_rank,
                "metrics": [{"metric": m.metric, "base": m.base, "head": m.head} for m in c.moves],
            }
            for c in comparison.worse_cases
        ],
        "sections": [
            {"name": c.name, "base": c.base, "head": c.head, "delta": c.delta}
            for c in comparison.sections
        ],
        "rules": [{"metric": r.metric, "max_drop": r.max_drop} for r in comparison.rules],
        "significance": {
            "test": "paired randomization",
            "rounds": ROUNDS,
            "alpha": ALPHA,
            "seed": comparison.seed,
            "interval": "percentile bootstrap",
            "resamples": RESAMPLES,
            "confidence": CONFIDENCE,
        },
        "exit_code": comparison.exit_code,
    }


def check_format(fmt: str) -> None:
    """Reject an output format qualstat does not know."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
