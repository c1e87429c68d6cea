"""Rendering the page: the Jinja2 environment, its filters, and the atomic write."""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_qualbench.report.html.model import HtmlExtraMissing, MixedDatasets
from pytest_qualbench.report.html.page import (
    build_page,
    cases_left_out,
    order_by_timestamp,
    restrict_to_shared_cases,
)
from pytest_qualbench.report.model import Report
from pytest_qualbench.report.writing import write_text_atomic

if TYPE_CHECKING:
    import jinja2


def require_html_extra() -> None:
    """HtmlExtraMissing unless Jinja2 and pygal are installed; found without importing them."""
    if any(importlib.util.find_spec(name) is None for name in ("jinja2", "pygal")):
        raise HtmlExtraMissing()


def render_html(
    reports: Sequence[Report],
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
    require_html_extra()

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
