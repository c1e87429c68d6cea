"""Reading a report file and checking its shape against docs/report-format.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SUPPORTED_SCHEMA_VERSION = 1


REQUIRED_KEYS = (
    "schema_version",
    "metric_version",
    "dataset_hash",
    "overall",
    "by_content_type",
    "negatives",
    "cases",
)


REQUIRED_CASE_KEYS = ("case_id", "content_type", "negative", "rank", "metrics", "passed")


class ReportError(Exception):
    """A report file is missing, is not JSON, or does not follow docs/report-format.md."""


def load_report(path: Path) -> dict[str, Any]:
    """Read and check one JSON report; every problem becomes a ReportError naming the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReportError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"{path}: cannot read: {exc}") from None
    try:
        report = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(f"{path}: not valid JSON: {exc}") from None
    problem = report_problem(report)
    if problem is not None:
        raise ReportError(f"{path}: {problem}")
    checked: dict[str, Any] = report
    return checked


def report_problem(report: Any) -> str | None:
    """The first way `report` departs from the parts of the format qualstat reads, if any."""
    if not isinstance(report, dict):
        return "not a qualbench report: the top level is not a JSON object"
    missing = [key for key in REQUIRED_KEYS if key not in report]
    if missing:
        return f"not a qualbench report: missing {', '.join(missing)}"
    if report["schema_version"] != SUPPORTED_SCHEMA_VERSION:
        return (
            f"schema_version {report['schema_version']!r} is not supported "
            f"(this qualstat reads {SUPPORTED_SCHEMA_VERSION})"
        )
    if not isinstance(report["cases"], list):
        return "cases: expected a list"
    for index, case in enumerate(report["cases"]):
        if not isinstance(case, dict):
            return f"cases[{index}]: expected an object"
        missing = [key for key in REQUIRED_CASE_KEYS if key not in case]
        if missing:
            return f"cases[{index}]: missing {', '.join(missing)}"
        if not isinstance(case["metrics"], dict):
            return f"cases[{index}].metrics: expected an object"
    return None
