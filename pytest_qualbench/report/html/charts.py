"""The page's charts: inline SVG drawn by pygal, its script and comments stripped."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pytest_qualbench.evaluation.metrics import metric_sort_key
from pytest_qualbench.report.html.model import report_timestamp
from pytest_qualbench.report.model import CaseJson, Report, Section

if TYPE_CHECKING:
    from markupsafe import Markup


# Metrics drawn per content type: one per question (top hit, top 3, rank, ranking, coverage).
CHART_METRICS = ("hit@1", "hit@3", "mrr", "ndcg@10", "recall@5", "context_recall")


HISTOGRAM_RANKS = tuple(range(1, 11))


RANK_BEYOND_LABEL = ">10"


NOT_FOUND_LABEL = "not found"


NEGATIVE_EMPTY_LABEL = "returned nothing (pass)"


NEGATIVE_RETURNED_LABEL = "returned results (fail)"


# A rate axis starts below the lowest bar by this margin, rounded down to AXIS_STEP:
# with every value between 0.84 and 1.0, a 0-1 axis drew every bar nearly full.
AXIS_MARGIN = 0.02
AXIS_STEP = 0.05


TREND_METRICS = ("hit@1", "mrr", "ndcg@10", "context_recall")


WIDE_CHART = (960, 380)


SMALL_CHART = (470, 300)


def rank_histogram(report: Report) -> list[tuple[str, int]]:
    """Positive case counts by first relevant rank: 1..10, >10, not found."""
    counts = dict.fromkeys(
        (*(str(rank) for rank in HISTOGRAM_RANKS), RANK_BEYOND_LABEL, NOT_FOUND_LABEL), 0
    )
    for case in report["cases"]:
        if not case["negative"]:
            counts[_rank_bucket(case)] += 1
    return list(counts.items())


def negative_outcomes(report: Report) -> list[tuple[str, int]]:
    """Negative case counts: returned nothing (the pass), returned results."""
    negatives = [case for case in report["cases"] if case["negative"]]
    empty = sum(1 for case in negatives if case["result_count"] == 0)
    return [(NEGATIVE_EMPTY_LABEL, empty), (NEGATIVE_RETURNED_LABEL, len(negatives) - empty)]


def rate_axis(values: Sequence[float | None]) -> tuple[float, float]:
    """The axis of rates in [0, 1]: from below the lowest value to above the highest.

    Both ends are multiples of AXIS_STEP at least AXIS_MARGIN beyond the data, within 0-1.
    """
    present = [value for value in values if value is not None] or [0.0, 1.0]
    # The rounding guard keeps 0.35 / 0.05 from flooring to 6 in binary floating point.
    low = max(0.0, math.floor((min(present) - AXIS_MARGIN) / AXIS_STEP + 1e-9) * AXIS_STEP)
    high = min(1.0, math.ceil((max(present) + AXIS_MARGIN) / AXIS_STEP - 1e-9) * AXIS_STEP)
    return round(low, 2), round(high, 2)


def count_step(tallest: int) -> int:
    """Whole-case axis labels at 1, 2 or 5 times a power of ten, at most about ten of them."""
    magnitude = 1
    while True:
        for factor in (1, 2, 5):
            if tallest <= 10 * factor * magnitude:
                return factor * magnitude
        magnitude *= 10


def rate_labels(low: float, high: float) -> list[float]:
    """About five to ten labels from the axis's bottom to its top, both labelled."""
    steps = round((high - low) / AXIS_STEP)
    stride = 1 if steps <= 8 else 2 if steps <= 16 else 4
    labels = [round(low + AXIS_STEP * index, 2) for index in range(0, steps + 1, stride)]
    # One label closer to the top than a stride would crowd it.
    return labels if labels[-1] == high else [*labels[:-1], high]


def _rank_bucket(case: CaseJson) -> str:
    rank = case["rank"]
    if rank is None:
        return NOT_FOUND_LABEL
    return str(rank) if rank <= HISTOGRAM_RANKS[-1] else RANK_BEYOND_LABEL


def _chart_config(
    title: str, size: tuple[int, int], *, unit_range: bool, values: Sequence[float | None] = ()
) -> Any:
    """A chart's look; a rate chart's axis zooms to `values`, its baseline named in the title."""
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
        value_font_size=11,
        label_font_size=12,
        major_label_font_size=12,
        title_font_size=14,
        legend_font_size=12,
    )
    config.legend_at_bottom = True
    config.print_values = True
    config.print_values_position = "top"
    config.print_zeroes = False
    config.value_formatter = (lambda v: f"{v:.2f}") if unit_range else (lambda v: f"{v:g}")
    # Printed values say each bar's height; horizontal guides would cross them.
    config.show_y_guides = False
    if unit_range:
        low, high = rate_axis(values)
        config.range = (low, high)
        # Bars rise from the axis's own bottom, which the title states when it is not 0.
        config.zero = low
        config.y_labels = rate_labels(low, high)
        if (low, high) != (0.0, 1.0):
            config.title = f"{title} (axis {low:.2f} to {high:.2f}, not 0 to 1)"
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


def content_type_charts(base: Report | None, head: Report) -> tuple[Markup, ...]:
    """One small chart per metric, content types along the axis: few bars, readable values."""
    import pygal

    runs = (("run", head),) if base is None else (("base", base), ("head", head))
    content_types = sorted(set().union(*(report["by_content_type"] for _, report in runs)))
    charts = []
    for index, metric in enumerate(CHART_METRICS):
        series = [
            (label, [report["by_content_type"].get(ct, {}).get(metric) for ct in content_types])
            for label, report in runs
        ]
        values = [value for _, row in series for value in row]
        config = _chart_config(metric, SMALL_CHART, unit_range=True, values=values)
        config.show_legend = base is not None
        chart = pygal.Bar(config)
        chart.x_labels = content_types
        for label, row in series:
            chart.add(label, row)
        charts.append(_render_chart(chart, f"qb-content-types-{index}"))
    return tuple(charts)


def rank_chart(base: Report | None, head: Report) -> Markup:
    """Positive cases by first relevant rank (negative cases have their own chart)."""
    head_buckets = rank_histogram(head)
    base_buckets = rank_histogram(base) if base is not None else None
    return _count_chart(
        "Positive cases by first relevant rank", "qb-ranks", head_buckets, base_buckets, WIDE_CHART
    )


def negatives_chart(base: Report | None, head: Report) -> Markup:
    """Negative cases by outcome: a negative passes only when nothing comes back."""
    head_counts = negative_outcomes(head)
    base_counts = negative_outcomes(base) if base is not None else None
    return _count_chart("Negative cases", "qb-negatives", head_counts, base_counts, SMALL_CHART)


def _count_chart(
    title: str,
    chart_id: str,
    head: Sequence[tuple[str, int]],
    base: Sequence[tuple[str, int]] | None,
    size: tuple[int, int],
) -> Markup:
    import pygal

    config = _chart_config(title, size, unit_range=False)
    config.show_legend = base is not None
    chart = pygal.Bar(config)
    tallest = max([1, *(count for _, count in [*head, *(base or ())])])
    step = count_step(tallest)
    chart.y_labels = list(range(0, tallest + step, step))
    chart.x_labels = [label for label, _ in head]
    if base is not None:
        chart.add("base", [count for _, count in base])
    chart.add("head" if base is not None else "cases", [count for _, count in head])
    return _render_chart(chart, chart_id)


def rankers_chart(rankers: Section) -> Markup:
    import pygal

    names = list(rankers["rankers"])
    metrics = sorted(rankers["metrics"], key=metric_sort_key)
    values = [rankers["metrics"][metric].get(name) for metric in metrics for name in names]
    config = _chart_config("Rankers head to head", WIDE_CHART, unit_range=True, values=values)
    chart = pygal.Bar(config)
    chart.x_labels = metrics
    for name in names:
        chart.add(name, [rankers["metrics"][metric].get(name) for metric in metrics])
    return _render_chart(chart, "qb-rankers")


def _trend_label(report: Report) -> str:
    git = report["metadata"]["git"]
    when = report_timestamp(report).strftime("%Y-%m-%d %H:%M")
    return when if git is None else f"{when} {str(git['sha'])[:7]}"


def trend_chart(series: Sequence[Report]) -> Markup:
    import pygal

    values = [report["overall"][metric] for report in series for metric in TREND_METRICS]
    config = _chart_config(
        "Trend over runs (oldest first)", WIDE_CHART, unit_range=True, values=values
    )
    config.print_values = False
    config.x_label_rotation = 20
    chart = pygal.Line(config)
    chart.x_labels = [_trend_label(report) for report in series]
    for metric in TREND_METRICS:
        chart.add(metric, [report["overall"][metric] for report in series])
    return _render_chart(chart, "qb-trend")
