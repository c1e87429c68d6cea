"""Checking a loaded report before anything trusts it: its shape, then its own arithmetic.

A report is a file anyone can edit. qualstat reads only what is checked here,
so a wrongly shaped report is a clear error (exit 2), never a traceback, and
aggregates that disagree with the report's own per-case values are refused
rather than compared.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_qualbench.evaluation.metrics import NEGATIVE_METRIC, mean_metrics

SUPPORTED_SCHEMA_VERSION = 3
REQUIRED_KEYS = (
    "schema_version",
    "metric_version",
    "dataset_hash",
    "dataset_files",
    "overall",
    "by_content_type",
    "negatives",
    "cases",
)
# Case fields qualstat reads, with the JSON types each may have.
CASE_FIELDS: dict[str, tuple[type, ...]] = {
    "case_id": (str,),
    "content_type": (str,),
    "definition": (str,),
    "negative": (bool,),
    "passed": (bool,),
    "metrics": (dict,),
    "rank": (int, type(None)),
}
# Aggregates are means of the cases' values: agreement within float rounding.
AGGREGATE_SLACK = 1e-9


def report_problem(report: Any) -> str | None:
    """The first way `report` departs from the format qualstat reads, if any."""
    if not isinstance(report, dict):
        return "not a qualbench report: the top level is not a JSON object"
    missing = [key for key in REQUIRED_KEYS if key not in report]
    if "schema_version" in report and report["schema_version"] != SUPPORTED_SCHEMA_VERSION:
        return _schema_problem(report["schema_version"])
    if missing:
        return f"not a qualbench report: missing {', '.join(missing)}"
    return _first(
        [
            lambda: _type_problem("metric_version", report["metric_version"], int),
            lambda: _type_problem("dataset_hash", report["dataset_hash"], str),
            lambda: _type_problem("metadata", report.get("metadata", {}), dict),
            lambda: _metadata_problem(report.get("metadata", {})),
            lambda: _type_problem("failures", report.get("failures", []), list),
            lambda: _files_problem(report["dataset_files"]),
            lambda: _table_problem("overall", report["overall"]),
            lambda: _tables_problem("by_content_type", report["by_content_type"]),
            lambda: _tables_problem("by_layer", report.get("by_layer", {})),
            lambda: _negatives_problem(report["negatives"]),
            lambda: _cases_problem(report["cases"]),
            lambda: _failures_problem(report.get("failures", [])),
            lambda: aggregate_problem(report),
        ]
    )


def _first(checks: Sequence[Callable[[], str | None]]) -> str | None:
    for check in checks:
        problem = check()
        if problem is not None:
            return problem
    return None


def _schema_problem(version: Any) -> str:
    if type(version) is int and version < SUPPORTED_SCHEMA_VERSION:
        return (
            f"schema_version {version} is older than this qualstat reads "
            f"({SUPPORTED_SCHEMA_VERSION}): its dataset hash and case records mean something "
            "else; re-run the base with this version of pytest-qualbench to make a new report"
        )
    return (
        f"schema_version {version!r} is not supported (this qualstat reads "
        f"{SUPPORTED_SCHEMA_VERSION}); upgrade pytest-qualbench to read it"
    )


def _type_problem(where: str, value: Any, expected: type) -> str | None:
    # bool is an int to Python, never to a report.
    if isinstance(value, expected) and not (expected is int and isinstance(value, bool)):
        return None
    return f"{where}: expected {_expected_json(expected)}, got {_shown(value)}"


def _metadata_problem(metadata: dict[str, Any]) -> str | None:
    """The metadata parts qualstat shows: engine and git objects, a timestamp string."""
    for key, expected in (("engine", dict), ("git", dict), ("timestamp", str)):
        value = metadata.get(key)
        if value is not None and not isinstance(value, expected):
            return f"metadata.{key}: expected {_expected_json(expected)}, got {_shown(value)}"
    return None


def _is_number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def _files_problem(files: Any) -> str | None:
    if not isinstance(files, list):
        return f"dataset_files: expected an array, got {_shown(files)}"
    for index, row in enumerate(files):
        if not isinstance(row, dict) or not isinstance(row.get("path"), str):
            return f"dataset_files[{index}]: expected an object with a path"
    return None


def _table_problem(where: str, table: Any) -> str | None:
    """An aggregate table: `cases` (a count) and metric values (numbers or null)."""
    if not isinstance(table, dict):
        return f"{where}: expected an object, got {_shown(table)}"
    count = table.get("cases")
    if type(count) is not int or count < 0:
        return f"{where}.cases: expected a count, got {_shown(count)}"
    for name, value in table.items():
        if name not in ("cases", "by_content_type") and value is not None and not _is_number(value):
            return f"{where}.{name}: expected a number or null, got {_shown(value)}"
    return None


def _tables_problem(where: str, tables: Any) -> str | None:
    if not isinstance(tables, dict):
        return f"{where}: expected an object, got {_shown(tables)}"
    for name, table in tables.items():
        problem = _table_problem(f"{where}.{name}", table)
        if problem is not None:
            return problem
    return None


def _negatives_problem(negatives: Any) -> str | None:
    return _table_problem("negatives", negatives) or _tables_problem(
        "negatives.by_content_type", negatives.get("by_content_type", {})
    )


def _cases_problem(cases: Any) -> str | None:
    if not isinstance(cases, list):
        return f"cases: expected an array, got {_shown(cases)}"
    seen: set[str] = set()
    for index, case in enumerate(cases):
        problem = _case_problem(f"cases[{index}]", case)
        if problem is not None:
            return problem
        if case["case_id"] in seen:
            return f"cases[{index}].case_id: {case['case_id']!r} appears twice"
        seen.add(case["case_id"])
    return None


def _case_problem(where: str, case: Any) -> str | None:
    if not isinstance(case, dict):
        return f"{where}: expected an object, got {_shown(case)}"
    for key, types in CASE_FIELDS.items():
        if key not in case:
            return f"{where}: missing {key}"
        value = case[key]
        if type(value) not in types:
            return f"{where}.{key}: expected {_expected_json(types[0])}, got {_shown(value)}"
    if case["rank"] is not None and case["rank"] < 1:
        return f"{where}.rank: expected a rank >= 1 or null, got {case['rank']}"
    for name, value in case["metrics"].items():
        if value is not None and not _is_number(value):
            return f"{where}.metrics.{name}: expected a number or null, got {_shown(value)}"
    return None


def _failures_problem(failures: list[Any]) -> str | None:
    for index, failure in enumerate(failures):
        if not isinstance(failure, dict):
            return f"failures[{index}]: expected an object, got {_shown(failure)}"
        for key in ("case_id", "type"):
            if not isinstance(failure.get(key), str):
                return f"failures[{index}].{key}: expected a string, got {_shown(failure.get(key))}"
    return None


# ---------------------------------------------------------------- arithmetic


def aggregate_problem(report: Mapping[str, Any]) -> str | None:
    """The first aggregate that is not the mean of the report's own case values, if any."""
    cases = report["cases"]
    positives = [case for case in cases if not case["negative"]]
    negatives = [case for case in cases if case["negative"]]
    tables: list[tuple[str, Mapping[str, Any], list[Mapping[str, Any]]]] = [
        ("overall", report["overall"], positives),
        ("negatives", report["negatives"], negatives),
    ]
    by_type = report["by_content_type"]
    negatives_by_type = report["negatives"].get("by_content_type", {})
    for content_type in sorted({case["content_type"] for case in positives} | set(by_type)):
        group = [case for case in positives if case["content_type"] == content_type]
        tables.append((f"by_content_type.{content_type}", by_type.get(content_type, {}), group))
    for content_type in sorted(
        {case["content_type"] for case in negatives} | set(negatives_by_type)
    ):
        group = [case for case in negatives if case["content_type"] == content_type]
        where = f"negatives.by_content_type.{content_type}"
        tables.append((where, negatives_by_type.get(content_type, {}), group))
    for where, table, group in tables:
        problem = _table_disagreement(where, table, group)
        if problem is not None:
            return (
                f"its aggregates disagree with its own cases: {problem}; "
                "an edited or corrupt report is not compared"
            )
    return None


def _table_disagreement(
    where: str, table: Mapping[str, Any], cases: Sequence[Mapping[str, Any]]
) -> str | None:
    if table.get("cases", 0) != len(cases):
        return f"{where}.cases is {table.get('cases', 0)}, the report has {len(cases)} such cases"
    names = [name for name in table if name not in ("cases", "by_content_type")]
    # Negative cases carry only negative_pass in a table; positives every metric but it.
    names = [name for name in names if (name == NEGATIVE_METRIC) == (where.startswith("negatives"))]
    recomputed = mean_metrics([case["metrics"] for case in cases], names)
    for name in names:
        stated, computed = table[name], recomputed[name]
        if stated is None and computed is None:
            continue
        if stated is None or computed is None or abs(stated - computed) > AGGREGATE_SLACK:
            shown = "null" if computed is None else f"{computed:.4f}"
            return f"{where}.{name} is {_shown(stated)}, its cases give {shown}"
    return None


def _expected_json(expected: type) -> str:
    """What a report field of this Python type must hold, for "expected ..." (an int is an integer)."""
    names = {
        dict: "an object",
        list: "an array",
        str: "a string",
        int: "an integer",
        bool: "true or false",
    }
    return names.get(expected, expected.__name__)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
