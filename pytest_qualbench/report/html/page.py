"""From report dicts to the `Page` record: headline, floors, failures, run details."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_qualbench.compare.formatting import described
from pytest_qualbench.evaluation.metrics import metric_sort_key
from pytest_qualbench.evaluation.outcomes import is_engine_reason, not_checked_lines
from pytest_qualbench.report.html.charts import (
    content_type_charts,
    negatives_chart,
    rank_chart,
    rankers_chart,
    trend_chart,
)
from pytest_qualbench.report.html.model import (
    Check,
    FailedCase,
    FloorRow,
    HeadlineRow,
    LatencyRow,
    Page,
    RunInfo,
    Segment,
    TopResult,
    report_timestamp,
)
from pytest_qualbench.report.model import (
    CaseJson,
    MetricTable,
    Negatives,
    Report,
    TopResultJson,
)


def order_by_timestamp(reports: Sequence[Report]) -> list[Report]:
    """Oldest first by metadata.timestamp; equal timestamps keep their given order."""
    return sorted(reports, key=lambda report: report_timestamp(report))


def cases_left_out(reports: Sequence[Report]) -> tuple[str, ...]:
    """Case ids that some report has and another lacks, sorted."""
    first, *others = [{case["case_id"] for case in report["cases"]} for report in reports]
    return tuple(sorted(first.union(*others) - first.intersection(*others)))


def restrict_to_shared_cases(
    reports: Sequence[Report],
) -> list[Report]:
    """Each report cut to the case ids all reports share, aggregates recomputed as case means."""
    shared = set.intersection(*({case["case_id"] for case in r["cases"]} for r in reports))
    restricted: list[Report] = []
    for report in reports:
        cases = [case for case in report["cases"] if case["case_id"] in shared]
        positives = [case for case in cases if not case["negative"]]
        negatives = [case for case in cases if case["negative"]]
        content_types = sorted({case["content_type"] for case in positives})
        names = [name for name in report["overall"] if name != "cases"]
        restricted.append(
            {
                **report,
                "cases": cases,
                "failures": [f for f in report["failures"] if f["case_id"] in shared],
                "overall": aggregate_cases(positives, names),
                "by_content_type": {
                    content_type: aggregate_cases(
                        [case for case in positives if case["content_type"] == content_type], names
                    )
                    for content_type in content_types
                },
                "negatives": negatives_table(negatives),
            }
        )
    return restricted


def aggregate_cases(cases: Sequence[CaseJson], names: Sequence[str]) -> MetricTable:
    """Mean of each named metric over the cases carrying it, None if none do (report-format.md)."""
    aggregate: MetricTable = {"cases": len(cases)}
    for name in names:
        values = [value for case in cases if (value := case["metrics"].get(name)) is not None]
        aggregate[name] = sum(values) / len(values) if values else None
    return aggregate


def negatives_table(cases: Sequence[CaseJson]) -> Negatives:
    """The negatives table of the cases, without the per content type tables."""
    table = aggregate_cases(cases, ["negative_pass"])
    return {"cases": len(cases), "negative_pass": table["negative_pass"]}


def mark_needles(text: str, needles: Sequence[str]) -> tuple[Segment, ...]:
    """Split text into runs, marking every (case-sensitive) needle occurrence, leftmost first."""
    candidates = sorted({needle for needle in needles if needle}, key=lambda n: (-len(n), n))
    segments: list[Segment] = []
    position = 0
    plain_start = 0
    while position < len(text):
        needle = next((n for n in candidates if text.startswith(n, position)), None)
        if needle is None:
            position += 1
            continue
        if plain_start < position:
            segments.append(Segment(text[plain_start:position], needle=False))
        segments.append(Segment(needle, needle=True))
        position += len(needle)
        plain_start = position
    if plain_start < len(text):
        segments.append(Segment(text[plain_start:], needle=False))
    return tuple(segments)


def build_page(
    series: Sequence[Report],
    *,
    comparison: Mapping[str, Any] | None,
    hashes_differ: bool = False,
    cases_left_out: tuple[str, ...] = (),
) -> Page:
    """Collect the page's rows and charts from reports ordered oldest first."""
    head = series[-1]
    base = series[-2] if len(series) > 1 else None
    runs = (base, head) if base is not None else (head,)
    labels = ("base", "head") if base is not None else ("run",)
    significance = _significance_by_metric(comparison)
    floors = tuple(
        FloorRow(
            metric=str(floor["metric"]),
            floor=float(floor["floor"]),
            value=floor["value"],
            verdict=_verdict(floor["ok"]),
        )
        for floor in head["floors"]
    )
    return Page(
        title="qualbench comparison" if base is not None else "qualbench report",
        comparing=base is not None,
        dataset_hash=str(head["dataset_hash"]),
        hashes_differ=hashes_differ,
        runs=tuple(_run_info(label, run) for label, run in zip(labels, runs, strict=True)),
        headline=_headline(base, head, significance),
        floors=floors,
        verdict=_page_verdict(floors, head),
        verdict_ok=not head["failures"] and all(floor.verdict != "FAIL" for floor in floors),
        # A table's `cases` is a count, never null.
        positive_cases=int(head["overall"]["cases"] or 0),
        negative_cases=int(head["negatives"]["cases"]),
        failures=_failed_cases(base, head),
        not_checked=tuple(
            not_checked_lines(case.get("layer_not_checked") for case in head["cases"])
        ),
        newly_passing=_newly_passing(base, head),
        regressions=tuple(
            f"{regression['subject']}: {regression['detail']}"
            for regression in (comparison or {}).get("regressions", [])
        ),
        cases_left_out=cases_left_out,
        latency=tuple(
            LatencyRow(content_type, row["p50_ms"], row["p95_ms"], row["index_ms"])
            # Content types alphabetically, the overall row last (it is their total).
            for content_type, row in sorted(
                head["latency"].items(), key=lambda item: (item[0] == "overall", item[0])
            )
        ),
        content_type_charts=content_type_charts(base, head),
        rank_chart=rank_chart(base, head),
        negatives_chart=negatives_chart(base, head),
        rankers_chart=rankers_chart(head["rankers"]) if "rankers" in head else None,
        trend_chart=trend_chart(series) if len(series) > 2 else None,
    )


def _verdict(ok: bool | None) -> str:
    if ok is None:
        return "not enforced"
    return "pass" if ok else "FAIL"


def _page_verdict(floors: Sequence[FloorRow], head: Report) -> str:
    failed = sum(1 for floor in floors if floor.verdict == "FAIL")
    failing_cases = len({failure["case_id"] for failure in head["failures"]})
    enforced = [floor for floor in floors if floor.verdict != "not enforced"]
    if failed:
        floor_text = f"{failed} floor(s) failed"
    elif not floors:
        floor_text = "no floors configured"
    elif not enforced:
        floor_text = "floors not enforced (not every case ran)"
    else:
        floor_text = "all enforced floors met"
    return f"{floor_text}; {failing_cases} failing case(s)"


def _headline_values(report: Report) -> dict[str, float | None]:
    values: dict[str, float | None] = {
        name: value for name, value in report["overall"].items() if name != "cases"
    }
    values["negative_pass"] = report["negatives"]["negative_pass"]
    return values


def _delta(base: float | None, head: float | None) -> float | None:
    return None if base is None or head is None else head - base


def _headline(
    base: Report | None,
    head: Report,
    significance: Mapping[str, str],
) -> tuple[HeadlineRow, ...]:
    head_values = _headline_values(head)
    base_values = _headline_values(base) if base is not None else {}
    floors = {str(floor["metric"]): floor for floor in head["floors"]}
    rows = []
    for metric in sorted(head_values.keys() | base_values.keys(), key=metric_sort_key):
        head_value = head_values.get(metric)
        base_value = base_values.get(metric)
        floor = floors.get(metric)
        rows.append(
            HeadlineRow(
                metric=metric,
                base=base_value,
                head=head_value,
                delta=_delta(base_value, head_value),
                floor=None if floor is None else float(floor["floor"]),
                verdict="" if floor is None else _verdict(floor["ok"]),
                significance=significance.get(metric, ""),
            )
        )
    return tuple(rows)


def _significance_by_metric(comparison: Mapping[str, Any] | None) -> dict[str, str]:
    """Overall rows of qualstat's verdict, as 'significant (p=…, 95% CI …)' or 'noise'."""
    texts: dict[str, str] = {}
    for row in (comparison or {}).get("metrics", []):
        if row.get("scope", "overall") != "overall":
            continue
        words = ["significant" if row.get("significant") else "not significant"]
        if row.get("p_value") is not None:
            words.append(f"p={row['p_value']:.3g}")
        if row.get("ci95") is not None:
            low, high = row["ci95"]
            words.append(f"95% CI [{low:+.3f}, {high:+.3f}]")
        texts[str(row["metric"])] = ", ".join(words)
    return texts


def _needles_by_case(report: Report) -> dict[str, tuple[str, ...]]:
    """Expected needles where a `needles` failure states them; for a case judged by entry,
    its relevant entries with their grades (`md_003 (grade 2)`)."""
    return {
        failure["case_id"]: tuple(
            f"{entry} (grade {grade})" for entry, grade in failure["expected"].items()
        )
        if isinstance(failure["expected"], dict)
        else tuple(failure["expected"])
        for failure in report["failures"]
        if failure["type"] == "needles"
    }


def _failed_ids(report: Report) -> set[str]:
    return {failure["case_id"] for failure in report["failures"]}


def _failed_cases(base: Report | None, head: Report) -> tuple[FailedCase, ...]:
    cases = {case["case_id"]: case for case in head["cases"]}
    needles = _needles_by_case(head)
    base_failed = _failed_ids(base) if base is not None else set()
    base_ids = {case["case_id"] for case in base["cases"]} if base is not None else set()
    checks: dict[str, list[Check]] = {}
    for failure in head["failures"]:
        checks.setdefault(failure["case_id"], []).append(
            Check(
                kind=str(failure["type"]),
                expected=described(failure["expected"]),
                actual=described(failure["actual"]),
            )
        )
    failed = []
    for case_id in sorted(checks):
        case = cases[case_id]
        found = tuple(case["needles_found"])
        case_needles = needles.get(case_id, found)
        failed.append(
            FailedCase(
                case_id=case_id,
                content_type=str(case["content_type"]),
                query=str(case["query"]),
                corrected_query=case["corrected_query"],
                needles=case_needles,
                needles_found=found,
                rank=case["rank"],
                layer=case["layer"],
                checks=tuple(checks[case_id]),
                top_results=tuple(
                    _top_result(result, case_needles) for result in case.get("top_results", ())
                ),
                newly_failing=base is not None
                and case_id in base_ids
                and case_id not in base_failed,
                layer_not_checked=case.get("layer_not_checked")
                if is_engine_reason(case.get("layer_not_checked"))
                else None,
            )
        )
    return tuple(failed)


def _newly_passing(base: Report | None, head: Report) -> tuple[str, ...]:
    if base is None:
        return ()
    head_ids = {case["case_id"] for case in head["cases"]}
    return tuple(sorted((_failed_ids(base) - _failed_ids(head)) & head_ids))


def _top_result(result: TopResultJson, needles: Sequence[str]) -> TopResult:
    snippet = str(result["snippet"])
    return TopResult(
        rank=int(result["rank"]),
        layer=str(result["layer"] or "no layer"),
        title=str(result["title"]),
        segments=mark_needles(snippet, needles),
        relevant=any(needle in snippet for needle in needles),
    )


def _run_info(label: str, report: Report) -> RunInfo:
    metadata = report["metadata"]
    git = metadata["git"]
    engine = metadata["engine"]
    selection = metadata["selection"]
    return RunInfo(
        label=label,
        timestamp=str(metadata["timestamp"]),
        git="—" if git is None else f"{git['sha']} ({git['branch']})",
        python=str(metadata["python"]),
        platform=str(metadata["platform"]),
        plugin_version=str(metadata["plugin_version"]),
        engine_name=str(engine["name"] or "—"),
        engine_config=json.dumps(engine["config"], indent=2, sort_keys=True),
        relevant_set=str(metadata["relevant_set"]),
        selection=f"{selection['cases_run']} of {selection['cases_in_fixture_set']} cases",
    )
