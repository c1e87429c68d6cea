"""Reading a report file and checking its shape against docs/report-format.md."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_qualbench.compare.checking import report_problem
from pytest_qualbench.report.model import Report
from pytest_qualbench.strict_json import not_a_json_constant, object_with_unique_keys


class ReportError(Exception):
    """A report file is missing, is not JSON, or does not follow docs/report-format.md."""


def load_report(path: Path) -> Report:
    """Read and check one JSON report; every problem becomes a ReportError naming the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReportError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"{path}: cannot read: {exc}") from None
    try:
        report = json.loads(
            text, parse_constant=not_a_json_constant, object_pairs_hook=object_with_unique_keys
        )
    except (json.JSONDecodeError, ValueError, RecursionError) as exc:
        raise ReportError(f"{path}: not valid JSON: {exc}") from None
    problem = report_problem(report)
    if problem is not None:
        raise ReportError(f"{path}: {problem}")
    # Decoded JSON is Any until report_problem finds nothing wrong: the check earns the type.
    checked: Report = report
    return checked
