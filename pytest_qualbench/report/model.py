"""The JSON report as types: what report.build writes and every reader of a report reads.

docs/report-format.md is the format; these TypedDicts name its parts, so build,
the gate, writing, compare and the HTML page share one vocabulary. They are
TypedDicts, not records, because the report is JSON whose bytes must not change.
A `...Json` name is the JSON form of a record named alike elsewhere: `CaseJson`
of evaluation.case_record.CaseRecord, `FailureJson` of its Failure, `TopResultJson` of
its ShownResult, `FloorJson` of report.floors.FloorVerdict; `LatencyJson` is what
report.html.model.LatencyRow shows.

A report read from a file is untrusted until compare.checking has checked it;
only then is it a `Report`. Checking requires the parts compare reads, so a key
a hand-made or older report may lack (and that readers look up with `.get`) is
`NotRequired` even where report.build always writes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypedDict

if TYPE_CHECKING:
    # typing has NotRequired from Python 3.11; the annotations are never evaluated.
    from typing_extensions import NotRequired

# One aggregate table: `cases` (the number of cases, an int) and each metric's
# mean over them, or None when its denominator is empty. A table keyed by metric
# name rather than a TypedDict: metric names are data (METRIC_NAMES, a later
# metric_version's), looked up by variable.
MetricTable = dict[str, float | None]

# An optional section (`rankers`, `token_cost`, `start_times`; docs/head-to-head.md):
# its own module in sections/ builds and reads it, and a section that could not be
# computed adds "skipped".
Section = dict[str, Any]


class DatasetFile(TypedDict):
    """One fixture file of the manifest; `bytes` and `sha256` None for a file that could not be read."""

    path: str
    bytes: int | None
    sha256: str | None


class Git(TypedDict):
    sha: str
    branch: str


class EngineInfo(TypedDict):
    """The engine under test; `config` and `options` are whatever the engine reports."""

    name: str | None
    config: dict[str, Any]
    options: dict[str, Any]
    warnings: list[str]


class Selection(TypedDict):
    """How many of the fixture set's cases ran, and what selected them."""

    cases_in_fixture_set: int
    cases_run: int
    # Reports from before the flag lack it: the counts say it.
    subset: NotRequired[bool]
    selected_by: list[str]


class Metadata(TypedDict):
    timestamp: str
    git: Git | None
    python: str
    platform: str
    plugin_version: str
    engine: EngineInfo
    # Recorded since compare.setup.RECORDED_SINCE; an older report lacks them.
    libraries: NotRequired[dict[str, str]]
    limit: NotRequired[int]
    checks: NotRequired[list[str]]
    relevant_set: Literal["chunks", "returned"]
    selection: Selection


class Negatives(TypedDict):
    """The negatives table: `negative_pass` overall, and a MetricTable per content type."""

    cases: int
    negative_pass: float | None
    # The HTML page's tables cut to shared cases leave it out.
    by_content_type: NotRequired[dict[str, MetricTable]]


class Aggregates(TypedDict):
    """The report's metric tables (report.build.aggregate)."""

    overall: MetricTable
    by_content_type: dict[str, MetricTable]
    by_layer: dict[str, MetricTable]
    negatives: Negatives


class LatencyJson(TypedDict):
    """Search latency of one content type; the `overall` row has no warmup_ms or index."""

    p50_ms: float | None
    p95_ms: float | None
    index_ms: float | None
    warmup_ms: NotRequired[float | None]
    index: NotRequired[Literal["built", "cached"] | None]


class TopResultJson(TypedDict):
    """One of a failed case's first results; `needle` is the one its snippet holds."""

    rank: int
    layer: str | None
    title: str
    snippet: str
    needle: str | None


class CaseJson(TypedDict):
    """One case of `cases`; the last four keys only for some cases (report-format.md)."""

    case_id: str
    entry_id: str
    content_type: str
    definition: str
    query: str
    corrected_query: str | None
    expected_layer: str
    expected_rank_ceiling: int
    negative: bool
    result_count: int
    rank: int | None
    layer: str | None
    needles_found: list[str]
    needles_total: int
    metrics: dict[str, float | None]
    passed: bool
    latency_ms: float
    duplicate_results: int
    layer_not_checked: str | None
    # A case judged by entry.
    relevant: NotRequired[dict[str, int]]
    relevant_found: NotRequired[dict[str, int]]
    min_grade: NotRequired[int]
    # A failed case.
    top_results: NotRequired[list[TopResultJson]]


class FailureJson(TypedDict):
    """One failed check. `expected` and `actual` depend on `type`: needles (lists, or
    {entry: grade} for a case judged by entry), a rank, a layer, a count, an error line."""

    case_id: str
    type: str
    expected: Any
    actual: Any


class FloorJson(TypedDict):
    """One floor's verdict; `ok` None when it was not enforced."""

    metric: str
    floor: float
    value: float | None
    ok: bool | None


class Sections(TypedDict, total=False):
    """The optional sections a run adds (sections.extra)."""

    rankers: Section
    token_cost: Section
    start_times: Section


class Report(TypedDict):
    """The whole report (docs/report-format.md, schema_version 3)."""

    schema_version: int
    complete: NotRequired[bool]
    metric_version: int
    dataset_hash: str
    dataset_files: list[DatasetFile]
    metadata: NotRequired[Metadata]
    overall: MetricTable
    by_content_type: dict[str, MetricTable]
    by_layer: NotRequired[dict[str, MetricTable]]
    negatives: Negatives
    latency: NotRequired[dict[str, LatencyJson]]
    cases: list[CaseJson]
    failures: NotRequired[list[FailureJson]]
    # The gate adds the floors' verdicts (report.gate.judge_run).
    floors: NotRequired[list[FloorJson]]
    rankers: NotRequired[Section]
    token_cost: NotRequired[Section]
    start_times: NotRequired[Section]
