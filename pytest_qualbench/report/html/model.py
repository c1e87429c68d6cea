"""The HTML page's records (what the template shows) and its two refusals."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pytest_qualbench.report.model import Report

if TYPE_CHECKING:
    from markupsafe import Markup


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
    # Why the engine did not take the layer check (None: it did, or the case asks for any).
    layer_not_checked: str | None = None


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
    # One line per reason the engine left a check out (`layer: not checked — ...`).
    not_checked: tuple[str, ...]
    newly_passing: tuple[str, ...]
    regressions: tuple[str, ...]
    cases_left_out: tuple[str, ...]
    latency: tuple[LatencyRow, ...]
    content_type_charts: tuple[Markup, ...]
    rank_chart: Markup
    negatives_chart: Markup
    rankers_chart: Markup | None
    trend_chart: Markup | None


def report_timestamp(report: Report) -> datetime:
    return datetime.fromisoformat(str(report["metadata"]["timestamp"]))
