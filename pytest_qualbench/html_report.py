"""Self-contained HTML report: JSON report dicts in, one offline HTML page out.

The page is for a reviewer: headline metrics against their floors, charts per
content type, the rank distribution, the failures with their top results, the
rankers head-to-head and the trend over several runs. It makes no network
request and carries no script: charts are inline SVG drawn by pygal (its JS
and config script stripped), styles are inline CSS, and a Content-Security-
Policy forbids scripts and remote loads as a second line of defence. Every
piece of report text goes through Jinja2 autoescaping.

Jinja2 and pygal are the optional `[html]` extra; they are imported only when
a page is rendered, so `HtmlExtraMissing` can be caught by callers that merely
import this module.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_qualbench.metrics import ALL_METRIC_NAMES
from pytest_qualbench.report import write_text_atomic

if TYPE_CHECKING:
    import jinja2
    from markupsafe import Markup

# The order of pytest_qualbench.metrics.METRIC_NAMES (docs/report-format.md).
METRIC_ORDER = ALL_METRIC_NAMES
# Metrics drawn per content type: one per question (top hit, top 3, rank, ranking, coverage).
CHART_METRICS = ("hit@1", "hit@3", "mrr", "ndcg@10", "recall@5", "context_recall")
HISTOGRAM_RANKS = tuple(range(1, 11))
RANK_BEYOND_LABEL = ">10"
NOT_FOUND_LABEL = "not found"
NEGATIVE_EMPTY_LABEL = "negative: empty"
NEGATIVE_RETURNED_LABEL = "negative: returned"
TREND_METRICS = ("hit@1", "mrr", "ndcg@10", "context_recall")

WIDE_CHART = (960, 380)
SMALL_CHART = (470, 300)

INSTALL_HINT = "pip install 'pytest-qualbench[html]'"


class HtmlExtraMissing(ImportError):
    """Jinja2 or pygal is not installed: the `[html]` extra is needed."""

    def __init__(self) -> None:
        super().__init__(f"the HTML report needs Jinja2 and pygal: {INSTALL_HINT}")


class MixedDatasets(ValueError):
    """Reports made from different fixture sets cannot share one page."""

    def __init__(self, hashes: Sequence[str]) -> None:
        listed = ", ".join(sorted(set(hashes)))
        super().__init__(
            f"reports come from different fixture sets ({listed}); "
            "pass intersect=True (qualstat --intersect) to compare only the shared cases"
        )


@dataclass(frozen=True)
class HeadlineRow:
    """One metric overall: its value(s), floor, verdict and significance."""

    metric: str
    base: float | None
    head: float | None
    delta: float | None
    floor: float | None
    verdict: str
    significance: str


@dataclass(frozen=True)
class FloorRow:
    """One floor of the head report, as the run judged it."""

    metric: str
    floor: float
    value: float | None
    verdict: str


@dataclass(frozen=True)
class Check:
    """One failed check of a case."""

    kind: str
    expected: str
    actual: str


@dataclass(frozen=True)
class Segment:
    """A run of result text; `needle` marks a run that is an expected needle."""

    text: str
    needle: bool


@dataclass(frozen=True)
class TopResult:
    """One returned result of a failing case, with its needles marked."""

    rank: int
    layer: str
    title: str
    segments: tuple[Segment, ...]
    relevant: bool


@dataclass(frozen=True)
class FailedCase:
    """A case with at least one failed check, and what it returned."""

    case_id: str
    content_type: str
    query: str
    corrected_query: str | None
    needles: tuple[str, ...]
    needles_found: tuple[str, ...]
    rank: int | None
    layer: str | None
    checks: tuple[Check, ...]
    top_results: tuple[TopResult, ...]
    newly_failing: bool


@dataclass(frozen=True)
class RunInfo:
    """Where and how one report was made."""

    label: str
    timestamp: str
    git: str
    python: str
    platform: str
    plugin_version: str
    engine_name: str
    engine_config: str
    relevant_set: str
    selection: str


@dataclass(frozen=True)
class LatencyRow:
    """Search and index timings of one content type in the head report."""

    content_type: str
    p50_ms: float | None
    p95_ms: float | None
    index_ms: float | None


@dataclass(frozen=True)
class Page:
    """Everything the template shows, already ordered and formatted."""

    title: str
    comparing: bool
    dataset_hash: str
    hashes_differ: bool
    runs: tuple[RunInfo, ...]
    headline: tuple[HeadlineRow, ...]
    floors: tuple[FloorRow, ...]
    verdict: str
    verdict_ok: bool
    positive_cases: int
    negative_cases: int
    failures: tuple[FailedCase, ...]
    newly_passing: tuple[str, ...]
    regressions: tuple[str, ...]
    cases_left_out: tuple[str, ...]
    latency: tuple[LatencyRow, ...]
    content_type_charts: tuple[Markup, ...]
    rank_chart: Markup
    rankers_chart: Markup | None
    trend_chart: Markup | None


def render_html(
    reports: Sequence[Mapping[str, Any]],
    *,
    comparison: Mapping[str, Any] | None = None,
    intersect: bool = False,
) -> str:
    """Render one report, a (base, head) pair, or a series with a trend, as one HTML page.

    One report gives a single-run page. Two give a comparison page, base first.
    Three or more are ordered by `metadata.timestamp`: the page compares the
    newest with the one before it and adds a trend chart over all of them.
    `comparison` is qualstat's verdict on a pair (docs/html-report.md).
    Raises MixedDatasets when the dataset hashes differ, unless `intersect`,
    which restricts every report to the cases they all share.
    """
    if not reports:
        raise ValueError("render_html needs at least one report")
    if comparison is not None and len(reports) < 2:
        raise ValueError("a comparison needs two reports (base, head)")
    try:
        import jinja2  # noqa: F401
        import pygal  # noqa: F401
    except ImportError as error:
        raise HtmlExtraMissing() from error

    hashes = [str(report["dataset_hash"]) for report in reports]
    hashes_differ = len(set(hashes)) > 1
    if hashes_differ and not intersect:
        raise MixedDatasets(hashes)

    series = list(reports) if len(reports) <= 2 else order_by_timestamp(reports)
    left_out: tuple[str, ...] = ()
    if intersect:
        left_out = cases_left_out(series)
        series = restrict_to_shared_cases(series)
    page = build_page(
        series, comparison=comparison, hashes_differ=hashes_differ, cases_left_out=left_out
    )
    template = _environment().get_template("report.html.j2")
    return template.render(page=page)


def write_html(path: Path, html: str) -> None:
    """Write the page atomically, like the JSON report."""
    write_text_atomic(path, html)


def order_by_timestamp(reports: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Oldest first by metadata.timestamp; equal timestamps keep their given order."""
    return sorted(reports, key=lambda report: _timestamp(report))


def cases_left_out(reports: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """Case ids that some report has and another lacks, sorted."""
    id_sets = [{case["case_id"] for case in report["cases"]} for report in reports]
    return tuple(sorted(set.union(*id_sets) - set.intersection(*id_sets)))


def restrict_to_shared_cases(
    reports: Sequence[Mapping[str, Any]],
) -> list[Mapping[str, Any]]:
    """Each report cut to the case ids all reports share, aggregates recomputed as case means."""
    shared = set.intersection(*({case["case_id"] for case in r["cases"]} for r in reports))
    restricted: list[Mapping[str, Any]] = []
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
                "negatives": aggregate_cases(negatives, ["negative_pass"]),
            }
        )
    return restricted


def aggregate_cases(cases: Sequence[Mapping[str, Any]], names: Sequence[str]) -> dict[str, Any]:
    """Mean of each named metric over the cases carrying it, None if none do (report-format.md)."""
    aggregate: dict[str, Any] = {"cases": len(cases)}
    for name in names:
        values = [case["metrics"][name] for case in cases if case["metrics"].get(name) is not None]
        aggregate[name] = sum(values) / len(values) if values else None
    return aggregate


def rank_histogram(report: Mapping[str, Any]) -> list[tuple[str, int]]:
    """Case counts by first relevant rank: 1..10, >10, not found, and negatives by outcome."""
    counts = dict.fromkeys(
        (
            *(str(rank) for rank in HISTOGRAM_RANKS),
            RANK_BEYOND_LABEL,
            NOT_FOUND_LABEL,
            NEGATIVE_EMPTY_LABEL,
            NEGATIVE_RETURNED_LABEL,
        ),
        0,
    )
    for case in report["cases"]:
        counts[_rank_bucket(case)] += 1
    return list(counts.items())


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
    series: Sequence[Mapping[str, Any]],
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
        positive_cases=int(head["overall"]["cases"]),
        negative_cases=int(head["negatives"]["cases"]),
        failures=_failed_cases(base, head),
        newly_passing=_newly_passing(base, head),
        regressions=tuple(
            f"{regression['subject']}: {regression['detail']}"
            for regression in (comparison or {}).get("regressions", [])
        ),
        cases_left_out=cases_left_out,
        latency=tuple(
            LatencyRow(content_type, row["p50_ms"], row["p95_ms"], row["index_ms"])
            for content_type, row in sorted(head["latency"].items())
        ),
        content_type_charts=_content_type_charts(base, head),
        rank_chart=_rank_chart(base, head),
        rankers_chart=_rankers_chart(head["rankers"]) if "rankers" in head else None,
        trend_chart=_trend_chart(series) if len(series) > 2 else None,
    )


def _environment() -> jinja2.Environment:
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("pytest_qualbench", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.filters["value"] = _format_value
    environment.filters["delta"] = _format_delta
    environment.filters["ms"] = _format_ms
    return environment


def _format_value(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _format_delta(value: float | None) -> str:
    if value is None:
        return "—"
    return "~" if value == 0 else f"{value:+.3f}"


def _format_ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _timestamp(report: Mapping[str, Any]) -> datetime:
    return datetime.fromisoformat(str(report["metadata"]["timestamp"]))


def _metric_sort_key(name: str) -> tuple[int, str]:
    return (METRIC_ORDER.index(name) if name in METRIC_ORDER else len(METRIC_ORDER), name)


def _rank_bucket(case: Mapping[str, Any]) -> str:
    if case["negative"]:
        return NEGATIVE_EMPTY_LABEL if case["result_count"] == 0 else NEGATIVE_RETURNED_LABEL
    rank = case["rank"]
    if rank is None:
        return NOT_FOUND_LABEL
    return str(rank) if rank <= HISTOGRAM_RANKS[-1] else RANK_BEYOND_LABEL


def _verdict(ok: bool | None) -> str:
    if ok is None:
        return "not enforced"
    return "pass" if ok else "FAIL"


def _page_verdict(floors: Sequence[FloorRow], head: Mapping[str, Any]) -> str:
    failed = sum(1 for floor in floors if floor.verdict == "FAIL")
    failing_cases = len({failure["case_id"] for failure in head["failures"]})
    floor_text = f"{failed} floor(s) failed" if failed else "all enforced floors met"
    return f"{floor_text}; {failing_cases} failing case(s)"


def _headline_values(report: Mapping[str, Any]) -> dict[str, float | None]:
    values: dict[str, float | None] = {
        name: value for name, value in report["overall"].items() if name != "cases"
    }
    values["negative_pass"] = report["negatives"]["negative_pass"]
    return values


def _delta(base: float | None, head: float | None) -> float | None:
    return None if base is None or head is None else head - base


def _headline(
    base: Mapping[str, Any] | None,
    head: Mapping[str, Any],
    significance: Mapping[str, str],
) -> tuple[HeadlineRow, ...]:
    head_values = _headline_values(head)
    base_values = _headline_values(base) if base is not None else {}
    floors = {str(floor["metric"]): floor for floor in head["floors"]}
    rows = []
    for metric in sorted(head_values.keys() | base_values.keys(), key=_metric_sort_key):
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


def _needles_by_case(report: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """Expected needles where a `needles` failure states them."""
    return {
        failure["case_id"]: tuple(failure["expected"])
        for failure in report["failures"]
        if failure["type"] == "needles"
    }


def _failed_ids(report: Mapping[str, Any]) -> set[str]:
    return {failure["case_id"] for failure in report["failures"]}


def _failed_cases(
    base: Mapping[str, Any] | None, head: Mapping[str, Any]
) -> tuple[FailedCase, ...]:
    cases = {case["case_id"]: case for case in head["cases"]}
    needles = _needles_by_case(head)
    base_failed = _failed_ids(base) if base is not None else set()
    base_ids = {case["case_id"] for case in base["cases"]} if base is not None else set()
    checks: dict[str, list[Check]] = {}
    for failure in head["failures"]:
        checks.setdefault(failure["case_id"], []).append(
            Check(
                kind=str(failure["type"]),
                expected=_describe(failure["expected"]),
                actual=_describe(failure["actual"]),
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
            )
        )
    return tuple(failed)


def _newly_passing(base: Mapping[str, Any] | None, head: Mapping[str, Any]) -> tuple[str, ...]:
    if base is None:
        return ()
    head_ids = {case["case_id"] for case in head["cases"]}
    return tuple(sorted((_failed_ids(base) - _failed_ids(head)) & head_ids))


def _top_result(result: Mapping[str, Any], needles: Sequence[str]) -> TopResult:
    snippet = str(result["snippet"])
    return TopResult(
        rank=int(result["rank"]),
        layer=str(result["layer"]),
        title=str(result["title"]),
        segments=mark_needles(snippet, needles),
        relevant=any(needle in snippet for needle in needles),
    )


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _run_info(label: str, report: Mapping[str, Any]) -> RunInfo:
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
        engine_name=str(engine["name"]),
        engine_config=json.dumps(engine["config"], indent=2, sort_keys=True),
        relevant_set=str(metadata["relevant_set"]),
        selection=f"{selection['cases_run']} of {selection['cases_in_fixture_set']} cases",
    )


def _chart_config(title: str, size: tuple[int, int], *, unit_range: bool) -> Any:
    import pygal

    config = pygal.Config()
    config.title = title
    config.width, config.height = size
    config.explicit_size = True  # width/height attributes: the SVG keeps its size inline
    config.disable_xml_declaration = True
    config.js = []  # pygal's tooltips load a remote script; the page must stay offline
    config.style = pygal.style.CleanStyle(
        font_family="system-ui, sans-serif",
        background="white",
        plot_background="white",
        value_font_size=10,
    )
    config.legend_at_bottom = True
    config.print_values = True
    config.print_values_position = "top"
    config.print_zeroes = False
    config.value_formatter = (lambda v: f"{v:.2f}") if unit_range else (lambda v: f"{v:g}")
    if unit_range:
        config.range = (0, 1)
    config.truncate_label = -1
    config.truncate_legend = -1
    return config


def _strip_script_and_comments(root: Any) -> Any:
    """Drop pygal's inline config <script> and its dated comments from the SVG tree."""
    for parent in root.iter():
        for child in list(parent):
            tag = child.tag if isinstance(child.tag, str) else "comment"
            if tag.rsplit("}", 1)[-1] in ("script", "comment"):
                parent.remove(child)
    return root


def _render_chart(chart: Any, chart_id: str) -> Markup:
    from markupsafe import Markup

    # A fixed id per chart keeps the page byte-stable and the ids unique on the page.
    chart.uuid = chart_id
    chart.add_xml_filter(_strip_script_and_comments)
    svg = chart.render(is_unicode=True)
    # pygal serialises through ElementTree, which escapes every label it was given.
    return Markup(svg)


def _content_type_charts(
    base: Mapping[str, Any] | None, head: Mapping[str, Any]
) -> tuple[Markup, ...]:
    import pygal

    content_types = sorted(head["by_content_type"])
    if base is None:
        chart = pygal.Bar(_chart_config("Metrics by content type", WIDE_CHART, unit_range=True))
        chart.x_labels = content_types
        for metric in CHART_METRICS:
            chart.add(metric, [head["by_content_type"][ct][metric] for ct in content_types])
        return (_render_chart(chart, "qb-content-types"),)
    content_types = sorted(set(content_types) | set(base["by_content_type"]))
    charts = []
    for index, metric in enumerate(CHART_METRICS):
        chart = pygal.Bar(_chart_config(metric, SMALL_CHART, unit_range=True))
        chart.x_labels = content_types
        for label, report in (("base", base), ("head", head)):
            by_type = report["by_content_type"]
            chart.add(label, [by_type.get(ct, {}).get(metric) for ct in content_types])
        charts.append(_render_chart(chart, f"qb-content-types-{index}"))
    return tuple(charts)


def _rank_chart(base: Mapping[str, Any] | None, head: Mapping[str, Any]) -> Markup:
    import pygal

    config = _chart_config("Cases by first relevant rank", WIDE_CHART, unit_range=False)
    config.x_label_rotation = 20
    chart = pygal.Bar(config)
    head_buckets = rank_histogram(head)
    base_buckets = rank_histogram(base) if base is not None else []
    tallest = max(count for _, count in [*head_buckets, *base_buckets])
    # Counts are whole cases: integer gridlines, at most about ten, reaching the tallest bar.
    step = max(1, -(-tallest // 10))
    chart.y_labels = list(range(0, tallest + step, step))
    chart.x_labels = [label for label, _ in head_buckets]
    if base is not None:
        chart.add("base", [count for _, count in base_buckets])
    chart.add("head" if base is not None else "cases", [count for _, count in head_buckets])
    return _render_chart(chart, "qb-ranks")


def _rankers_chart(rankers: Mapping[str, Any]) -> Markup:
    import pygal

    names = list(rankers["rankers"])
    metrics = sorted(rankers["metrics"], key=_metric_sort_key)
    chart = pygal.Bar(_chart_config("Rankers head to head", WIDE_CHART, unit_range=True))
    chart.x_labels = metrics
    for name in names:
        chart.add(name, [rankers["metrics"][metric].get(name) for metric in metrics])
    return _render_chart(chart, "qb-rankers")


def _trend_label(report: Mapping[str, Any]) -> str:
    git = report["metadata"]["git"]
    when = _timestamp(report).strftime("%Y-%m-%d %H:%M")
    return when if git is None else f"{when} {str(git['sha'])[:7]}"


def _trend_chart(series: Sequence[Mapping[str, Any]]) -> Markup:
    import pygal

    config = _chart_config("Trend over runs (oldest first)", WIDE_CHART, unit_range=True)
    config.print_values = False
    config.x_label_rotation = 20
    chart = pygal.Line(config)
    chart.x_labels = [_trend_label(report) for report in series]
    for metric in TREND_METRICS:
        chart.add(metric, [report["overall"][metric] for report in series])
    return _render_chart(chart, "qb-trend")
