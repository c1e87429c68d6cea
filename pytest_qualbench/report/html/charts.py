"""The page's charts: inline SVG drawn by pygal, its script and comments stripped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_qualbench.evaluation.metrics import metric_sort_key
from pytest_qualbench.report.html.model import report_timestamp

if TYPE_CHECKING:
    from markupsafe import Markup


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


def _rank_bucket(case: Mapping[str, Any]) -> str:
    if case["negative"]:
        return NEGATIVE_EMPTY_LABEL if case["result_count"] == 0 else NEGATIVE_RETURNED_LABEL
    rank = case["rank"]
    if rank is None:
        return NOT_FOUND_LABEL
    return str(rank) if rank <= HISTOGRAM_RANKS[-1] else RANK_BEYOND_LABEL


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


def content_type_charts(
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


def rank_chart(base: Mapping[str, Any] | None, head: Mapping[str, Any]) -> Markup:
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


def rankers_chart(rankers: Mapping[str, Any]) -> Markup:
    import pygal

    names = list(rankers["rankers"])
    metrics = sorted(rankers["metrics"], key=metric_sort_key)
    chart = pygal.Bar(_chart_config("Rankers head to head", WIDE_CHART, unit_range=True))
    chart.x_labels = metrics
    for name in names:
        chart.add(name, [rankers["metrics"][metric].get(name) for metric in metrics])
    return _render_chart(chart, "qb-rankers")


def _trend_label(report: Mapping[str, Any]) -> str:
    git = report["metadata"]["git"]
    when = report_timestamp(report).strftime("%Y-%m-%d %H:%M")
    return when if git is None else f"{when} {str(git['sha'])[:7]}"


def trend_chart(series: Sequence[Mapping[str, Any]]) -> Markup:
    import pygal

    config = _chart_config("Trend over runs (oldest first)", WIDE_CHART, unit_range=True)
    config.print_values = False
    config.x_label_rotation = 20
    chart = pygal.Line(config)
    chart.x_labels = [_trend_label(report) for report in series]
    for metric in TREND_METRICS:
        chart.add(metric, [report["overall"][metric] for report in series])
    return _render_chart(chart, "qb-trend")
