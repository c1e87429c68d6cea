"""One report on its own (`qualstat REPORT`): its tables and optional sections."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_qualbench.compare.diff import metric_names
from pytest_qualbench.compare.formatting import format_value, heading, literal, report_label, table
from pytest_qualbench.compare.records import OVERALL, content_type_sort_key
from pytest_qualbench.compare.render import check_format
from pytest_qualbench.evaluation.metrics import metric_sort_key
from pytest_qualbench.report.model import EngineInfo, Report

# Sections render_report lays out by name; anything else a report carries
# (sections added after schema_version 1's first draft) is rendered generically.
KNOWN_SECTIONS = (
    "schema_version",
    "metric_version",
    "dataset_hash",
    "metadata",
    "overall",
    "by_content_type",
    "by_layer",
    "negatives",
    "latency",
    "cases",
    "failures",
    "floors",
)


def render_report(report: Report, fmt: str) -> str:
    """One report as tables (`text`, `markdown`) or as normalized JSON (`json`)."""
    if fmt == "json":
        return json.dumps(report, sort_keys=True, indent=2)
    check_format(fmt)
    metadata = report.get("metadata")
    engine: EngineInfo | dict[str, object] = (metadata.get("engine") if metadata else None) or {}
    parts = [
        heading(f"qualbench report: {literal(report_label(report), fmt)}", fmt, level=2),
        f"dataset {literal(report['dataset_hash'], fmt)}, metric_version "
        f"{report['metric_version']}, engine {literal(str(engine.get('name', 'unknown')), fmt)}, "
        f"{len(report['cases'])} cases",
    ]
    types = sorted(report["by_content_type"], key=content_type_sort_key)
    parts.append(
        metric_matrix(
            "Positive cases",
            [OVERALL, *types],
            [report["overall"], *(report["by_content_type"][t] for t in types)],
            fmt,
        )
    )
    negatives = report["negatives"]
    negative_types = sorted(negatives.get("by_content_type", {}), key=content_type_sort_key)
    parts.append(
        metric_matrix(
            "Negative cases",
            [OVERALL, *negative_types],
            [negatives, *(negatives["by_content_type"][t] for t in negative_types)],
            fmt,
        )
    )
    by_layer = report.get("by_layer") or {}
    if by_layer:
        layers = sorted(by_layer)
        parts.append(
            metric_matrix("By expected layer", layers, [by_layer[layer] for layer in layers], fmt)
        )
    if report.get("latency"):
        parts.append(
            generic_section(
                "latency", report["latency"], fmt, first_columns=("p50_ms", "p95_ms", "index_ms")
            )
        )
    parts.append(
        generic_section(
            "failures",
            report.get("failures") or [],
            fmt,
            first_columns=("case_id", "type", "expected", "actual"),
        )
    )
    if report.get("floors"):
        parts.append(
            generic_section(
                "floors", report["floors"], fmt, first_columns=("metric", "floor", "value", "ok")
            )
        )
    # A section of any name, so the report read as a mapping (a TypedDict takes literal keys).
    sections: Mapping[str, object] = report
    for name in sorted(set(sections) - set(KNOWN_SECTIONS)):
        parts.append(generic_section(name, sections[name], fmt))
    return "\n\n".join(parts) + "\n"


def metric_matrix(
    title: str, columns: Sequence[str], tables: Sequence[Mapping[str, object]], fmt: str
) -> str:
    """Metrics down, scopes across: `cases` first, then metrics in display order."""
    names: set[str] = set()
    for aggregates in tables:
        names |= metric_names(aggregates)
    rows = [
        [name, *(format_value(t.get(name)) for t in tables)]
        for name in ["cases", *sorted(names, key=metric_sort_key)]
    ]
    return f"{heading(title, fmt)}\n\n" + table(["metric", *columns], rows, fmt)


def generic_section(name: str, value: Any, fmt: str, first_columns: Sequence[str] = ()) -> str:
    """Any JSON section as the most readable table its shape allows; `first_columns` lead."""
    title = heading(literal(name, fmt), fmt)
    if isinstance(value, list) and not value:
        return f"{title}\n\nnone"
    if isinstance(value, list) and all(isinstance(item, dict) for item in value):
        columns = ordered_columns({key for item in value for key in item}, first_columns)
        rows = [[format_value(item.get(key)) for key in columns] for item in value]
        return f"{title}\n\n" + table(columns, rows, fmt)
    if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
        columns = ordered_columns({key for inner in value.values() for key in inner}, first_columns)
        # Sections keyed by content type (latency, most likely any newer one) read
        # best in the documented order; other keys fall back to alphabetical.
        rows = [
            [key, *(format_value(value[key].get(column)) for column in columns)]
            for key in sorted(value, key=content_type_sort_key)
        ]
        return f"{title}\n\n" + table(["", *columns], rows, fmt)
    if isinstance(value, dict):
        rows = [[key, format_value(value[key])] for key in sorted(value)]
        return f"{title}\n\n" + table(["key", "value"], rows, fmt)
    return f"{title}\n\n{literal(format_value(value), fmt)}"


def ordered_columns(keys: set[str], first_columns: Sequence[str]) -> list[str]:
    """`first_columns` that are present, in their order, then the other keys alphabetically."""
    leading = [column for column in first_columns if column in keys]
    return leading + sorted(keys - set(leading))
