"""Base report against head report: metric changes per scope, case flips, rank moves."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pytest_qualbench.compare.formatting import report_label
from pytest_qualbench.compare.records import (
    OVERALL,
    CaseFlip,
    CaseMove,
    Comparison,
    IncomparableReports,
    MetricChange,
    MetricMove,
    RankMove,
    Regression,
    Rule,
    SectionChange,
    content_type_sort_key,
)
from pytest_qualbench.compare.rules import DEFAULT_RULES, metric_regressions
from pytest_qualbench.compare.setup import setup_changes, unrecorded
from pytest_qualbench.compare.statistics import (
    bootstrap_interval,
    generator,
    paired_randomization_p_value,
)
from pytest_qualbench.evaluation.metrics import metric_sort_key
from pytest_qualbench.report.build import is_subset, subset_reason
from pytest_qualbench.report.model import CaseJson, MetricTable, Report

RANK_MOVES_SHOWN = 10


def compare_reports(
    base: Report,
    head: Report,
    *,
    rules: Sequence[Rule] = DEFAULT_RULES,
    intersect: bool = False,
    seed: int = 0,
) -> Comparison:
    """Diff two loaded reports; raise IncomparableReports when they measure different things."""
    if base["metric_version"] != head["metric_version"]:
        raise IncomparableReports(
            f"metric_version differs (base {base['metric_version']}, head "
            f"{head['metric_version']}): the metrics are defined differently, so no "
            "delta between them means anything; rerun the base with this version"
        )
    base_cases = cases_by_id(base)
    head_cases = cases_by_id(head)
    removed = tuple(sorted(base_cases.keys() - head_cases.keys()))
    added = tuple(sorted(head_cases.keys() - base_cases.keys()))
    # The same id asking another question (query, needles, layer, ceiling) is another case.
    redefined = tuple(
        sorted(
            case_id
            for case_id in base_cases.keys() & head_cases.keys()
            if base_cases[case_id]["definition"] != head_cases[case_id]["definition"]
        )
    )
    if not intersect:
        if is_subset(base):
            raise IncomparableReports(
                f"the base report is a subset run ({subset_reason(base)}): its aggregates "
                "stand for those cases, not the fixture set; compare with the report of a "
                "full run, or pass --intersect to compare only the cases both share"
            )
        if base["dataset_hash"] != head["dataset_hash"]:
            raise IncomparableReports(
                f"dataset_hash differs (base {base['dataset_hash']}, head "
                f"{head['dataset_hash']}): the reports were made from different fixture "
                f"files ({manifest_differences(base, head)}); pass --intersect to compare "
                "only the cases both share"
            )
        if removed or added:
            why = (
                f"the head is a subset run, {subset_reason(head)}"
                if is_subset(head)
                else "a -k or partial run?"
            )
            raise IncomparableReports(
                f"the reports ran different cases ({len(removed)} only in base, {len(added)} "
                f"only in head; {why}); pass --intersect to compare only the cases both share"
            )
    shared = sorted((base_cases.keys() & head_cases.keys()) - set(redefined))
    if not shared:
        raise IncomparableReports(
            f"the reports have no case in common ({len(removed)} only in base, {len(added)} "
            f"only in head, {len(redefined)} redefined): there is nothing to compare"
        )
    pairs = [(base_cases[case_id], head_cases[case_id]) for case_id in shared]
    changes = tuple(
        metric_change(base, head, pairs, scope, metric, intersect=intersect, seed=seed)
        for scope in scopes(base, head)
        for metric in scope_metrics(base, head, scope)
    )
    newly_failing = tuple(
        CaseFlip(h["case_id"], failure_types(head, h["case_id"]))
        for b, h in pairs
        if b["passed"] and not h["passed"]
    )
    newly_passing = tuple(
        CaseFlip(b["case_id"], failure_types(base, b["case_id"]))
        for b, h in pairs
        if h["passed"] and not b["passed"]
    )
    regressions = metric_regressions(changes, rules) + tuple(
        Regression(flip.case_id, f"newly failing ({', '.join(flip.failures) or 'failed'})")
        for flip in newly_failing
    )
    return Comparison(
        base_label=report_label(base),
        head_label=report_label(head),
        base_hash=base["dataset_hash"],
        head_hash=head["dataset_hash"],
        metric_version=base["metric_version"],
        intersect=intersect,
        added_cases=added,
        removed_cases=removed,
        changed_cases=redefined,
        shared_cases=len(shared),
        changes=changes,
        newly_failing=newly_failing,
        newly_passing=newly_passing,
        rank_moves=largest_rank_moves(pairs),
        regressions=regressions,
        rules=tuple(rules),
        seed=seed,
        sections=section_changes(base, head),
        setup=setup_changes(base, head),
        unrecorded=unrecorded(base, head),
        worse_cases=worse_cases(base, head, pairs),
    )


def worse_cases(
    base: Report,
    head: Report,
    pairs: Sequence[tuple[CaseJson, CaseJson]],
) -> tuple[CaseMove, ...]:
    """Every shared case that newly fails or lost on a metric of its own, newly failing first."""
    moved = []
    for b, h in pairs:
        names = sorted(b["metrics"].keys() & h["metrics"].keys(), key=metric_sort_key)
        moves = tuple(
            MetricMove(name, float(values[0]), float(values[1]))
            for name in names
            if (values := metric_values(b, h, name)) is not None and values[0] != values[1]
        )
        newly_failing = b["passed"] and not h["passed"]
        if newly_failing or any(move.head < move.base for move in moves):
            moved.append(
                CaseMove(
                    case_id=h["case_id"],
                    content_type=h["content_type"],
                    newly_failing=newly_failing,
                    failures=failure_types(head, h["case_id"]),
                    base_rank=b["rank"],
                    head_rank=h["rank"],
                    moves=moves,
                )
            )
    moved.sort(key=lambda move: (not move.newly_failing, move.case_id))
    return tuple(moved)


def section_numbers(report: Report) -> dict[str, float]:
    """The headline numbers of the optional sections, flattened to dotted names."""
    numbers: dict[str, float] = {}
    rankers = report.get("rankers") or {}
    for metric, by_ranker in sorted((rankers.get("metrics") or {}).items()):
        for ranker, value in sorted(by_ranker.items()):
            if value is not None:
                numbers[f"rankers.{ranker}.{metric}"] = float(value)
    token_overall = (report.get("token_cost") or {}).get("overall") or {}
    for key in ("retrieved_tokens_per_call", "corpus_tokens_per_call", "reduction_pct"):
        if token_overall.get(key) is not None:
            numbers[f"token_cost.{key}"] = float(token_overall[key])
    start_overall = (report.get("start_times") or {}).get("overall") or {}
    for key in ("cold_ms", "seeded_ms", "ratio"):
        if start_overall.get(key) is not None:
            numbers[f"start_times.{key}"] = float(start_overall[key])
    return numbers


def section_changes(base: Report, head: Report) -> tuple[SectionChange, ...]:
    """Base against head for every section number either report has; informational only."""
    base_numbers, head_numbers = section_numbers(base), section_numbers(head)
    return tuple(
        SectionChange(name, base_numbers.get(name), head_numbers.get(name))
        for name in sorted(base_numbers.keys() | head_numbers.keys())
    )


def manifest_differences(base: Report, head: Report) -> str:
    """Which fixture files differ between the reports' manifests, for a refusal message."""
    base_files = {row["path"]: row for row in base["dataset_files"]}
    head_files = {row["path"]: row for row in head["dataset_files"]}
    parts = [
        *(
            f"{path} changed"
            for path in sorted(base_files.keys() & head_files.keys())
            if base_files[path] != head_files[path]
        ),
        *(f"{path} only in base" for path in sorted(base_files.keys() - head_files.keys())),
        *(f"{path} only in head" for path in sorted(head_files.keys() - base_files.keys())),
    ]
    return "; ".join(parts) or "the file lists match but the hashes do not"


def cases_by_id(report: Report) -> dict[str, CaseJson]:
    """The report's case records keyed by case_id."""
    return {case["case_id"]: case for case in report["cases"]}


def scopes(base: Report, head: Report) -> list[str]:
    """`overall`, then every content type either report has, in CONTENT_TYPES order."""
    types = set(base["by_content_type"]) | set(head["by_content_type"])
    types |= set(base["negatives"].get("by_content_type", {}))
    types |= set(head["negatives"].get("by_content_type", {}))
    return [OVERALL, *sorted(types, key=content_type_sort_key)]


def scope_table(report: Report, scope: str) -> MetricTable:
    """The aggregate table of one scope for positive metrics, empty when the report lacks it."""
    if scope == OVERALL:
        return report["overall"]
    return report["by_content_type"].get(scope, {})


def negatives_table(report: Report, scope: str) -> Mapping[str, object]:
    """The aggregate table of one scope for negative cases, empty when the report lacks it."""
    negatives = report["negatives"]
    if scope == OVERALL:
        return negatives
    return negatives.get("by_content_type", {}).get(scope, {})


def aggregate_value(report: Report, scope: str, metric: str) -> float | None:
    """The report's own aggregate for `metric` in `scope` (None when absent or null)."""
    if metric == "negative_pass":
        value = negatives_table(report, scope).get(metric)
    else:
        value = scope_table(report, scope).get(metric)
    return float(value) if isinstance(value, (int, float)) else None


def scope_metrics(base: Report, head: Report, scope: str) -> list[str]:
    """Metric names either report aggregates in `scope`, in display order."""
    names: set[str] = set()
    for report in (base, head):
        names |= metric_names(scope_table(report, scope))
        names |= metric_names(negatives_table(report, scope))
    return sorted(names, key=metric_sort_key)


def metric_names(aggregates: Mapping[str, object]) -> set[str]:
    """The keys of an aggregate table that hold a metric value (a number or null)."""
    return {
        name
        for name, value in aggregates.items()
        if name != "cases" and (value is None or type(value) in (int, float))
    }


def metric_change(
    base: Report,
    head: Report,
    pairs: Sequence[tuple[CaseJson, CaseJson]],
    scope: str,
    metric: str,
    *,
    intersect: bool,
    seed: int,
) -> MetricChange:
    """Base, head, delta, p and interval of one metric in one scope."""
    values = [
        case_values
        for b, h in pairs
        if scope in (OVERALL, b["content_type"])
        and (case_values := metric_values(b, h, metric)) is not None
    ]
    differences = [float(h) - float(b) for b, h in values]
    if intersect:
        # The reports' aggregates cover cases the other run lacks; only the shared
        # cases' values are comparable.
        base_value = math.fsum(b for b, _ in values) / len(values) if values else None
        head_value = math.fsum(h for _, h in values) / len(values) if values else None
    else:
        base_value = aggregate_value(base, scope, metric)
        head_value = aggregate_value(head, scope, metric)
    changed_cases = sum(1 for d in differences if d != 0)
    if not changed_cases:
        return MetricChange(scope, metric, base_value, head_value, len(values), 0, None, None, None)
    # One generator per scope and metric, so a p-value never depends on which
    # other scopes or metrics were compared before it.
    rng = generator(f"{seed}/{scope}/{metric}")
    p_value = paired_randomization_p_value(differences, rng)
    ci_low, ci_high = bootstrap_interval(differences, rng)
    return MetricChange(
        scope, metric, base_value, head_value, len(values), changed_cases, p_value, ci_low, ci_high
    )


def metric_values(base: CaseJson, head: CaseJson, metric: str) -> tuple[float, float] | None:
    """One case's value of `metric` in base and head, when both are numbers (not null)."""
    base_value, head_value = base["metrics"].get(metric), head["metrics"].get(metric)
    if isinstance(base_value, (int, float)) and isinstance(head_value, (int, float)):
        return base_value, head_value
    return None


def failure_types(report: Report, case_id: str) -> tuple[str, ...]:
    """The distinct failed check types of one case, in the report's order."""
    types = [f["type"] for f in report.get("failures", []) if f.get("case_id") == case_id]
    return tuple(dict.fromkeys(types))


def largest_rank_moves(
    pairs: Sequence[tuple[CaseJson, CaseJson]], *, limit: int = RANK_MOVES_SHOWN
) -> tuple[RankMove, ...]:
    """The positive cases whose first relevant rank moved most, by reciprocal rank."""
    moves = [
        RankMove(b["case_id"], b["rank"], h["rank"])
        for b, h in pairs
        if not b["negative"] and not h["negative"] and b["rank"] != h["rank"]
    ]
    # Reciprocal rank weighs 1 -> 3 above 8 -> 10, as a reader of search results does.
    moves.sort(key=lambda move: (-abs(move.reciprocal_delta), move.case_id))
    return tuple(moves[:limit])
