"""The report: JSON assembly, floors, atomic writing, the terminal summary, HTML.

The format is documented in docs/report-format.md. The names callers use most
are re-exported here; each concern lives in its own module: build, floors,
writing, summary, and html/.
"""

from __future__ import annotations

from pytest_qualbench.report.build import SCHEMA_VERSION, build_report, without_timings
from pytest_qualbench.report.floors import Floor, FloorVerdict, check_floors, parse_floor
from pytest_qualbench.report.writing import write_report

__all__ = [
    "SCHEMA_VERSION",
    "Floor",
    "FloorVerdict",
    "build_report",
    "check_floors",
    "parse_floor",
    "without_timings",
    "write_report",
]
