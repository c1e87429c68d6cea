"""Assembling the JSON report from case records: aggregates, latency, sections.

The format is documented in docs/report-format.md; `SCHEMA_VERSION` names it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from pytest_qualbench.evaluation.case_record import CaseRecord
from pytest_qualbench.evaluation.judge import settle_layers
from pytest_qualbench.evaluation.metrics import (
    METRIC_NAMES,
    METRIC_VERSION,
    NEGATIVE_METRIC,
    grouped_means,
    mean_metrics,
    percentile,
)
from pytest_qualbench.report.model import (
    Aggregates,
    DatasetFile,
    LatencyJson,
    Metadata,
    MetricTable,
    Report,
    Sections,
)

SCHEMA_VERSION = 3


# Report parts that measure the machine rather than the ranking.
TIMING_KEYS = ("latency", "start_times")


CASE_TIMING_KEYS = ("latency_ms",)


METADATA_TIMING_KEYS = ("timestamp",)


def aggregate(records: Sequence[CaseRecord]) -> Aggregates:
    """The report's metric tables: overall, by content type, by layer, negatives."""
    positives = [record for record in records if not record.negative]
    negatives = [record for record in records if record.negative]
    positive_metrics = [record.metrics for record in positives]
    negative_metrics = [record.metrics for record in negatives]

    def with_count(table: dict[str, float | None], count: int) -> MetricTable:
        return {"cases": count, **table}

    def counted(
        groups: dict[str, dict[str, float | None]], group_sizes: Mapping[str, int]
    ) -> dict[str, MetricTable]:
        return {group: with_count(values, group_sizes[group]) for group, values in groups.items()}

    by_type = grouped_means(positive_metrics, lambda i: positives[i].content_type, METRIC_NAMES)
    by_layer = grouped_means(positive_metrics, lambda i: positives[i].expected_layer, METRIC_NAMES)
    negatives_by_type = grouped_means(
        negative_metrics, lambda i: negatives[i].content_type, (NEGATIVE_METRIC,)
    )
    return {
        "overall": with_count(mean_metrics(positive_metrics, METRIC_NAMES), len(positives)),
        "by_content_type": counted(by_type, Counter(record.content_type for record in positives)),
        "by_layer": counted(by_layer, Counter(record.expected_layer for record in positives)),
        "negatives": {
            "cases": len(negatives),
            NEGATIVE_METRIC: mean_metrics(negative_metrics, (NEGATIVE_METRIC,))[NEGATIVE_METRIC],
            "by_content_type": counted(
                negatives_by_type, Counter(record.content_type for record in negatives)
            ),
        },
    }


def latency_table(
    records: Sequence[CaseRecord],
    index_ms: Mapping[str, float],
    cached: Collection[str] = (),
    warmup_ms: Mapping[str, float] | None = None,
) -> dict[str, LatencyJson]:
    """Per content type and overall: search latency p50/p95, index time and its source.

    `index` says where a content type's index came from: "built" by this run, or
    "cached" (loaded from the on-disk index cache, `index_ms` being the load's time).
    `warmup_ms` is the one search made before the cases, kept out of p50 and p95.
    """
    warmup = warmup_ms or {}
    table: dict[str, LatencyJson] = {}
    every_latency = [record.latency_ms for record in records]
    for content_type in sorted({record.content_type for record in records} | set(index_ms)):
        latencies = [record.latency_ms for record in records if record.content_type == content_type]
        table[content_type] = {
            "p50_ms": percentile(latencies, 0.50),
            "p95_ms": percentile(latencies, 0.95),
            "index_ms": index_ms.get(content_type),
            "warmup_ms": warmup.get(content_type),
            "index": None
            if content_type not in index_ms
            else ("cached" if content_type in cached else "built"),
        }
    table["overall"] = {
        "p50_ms": percentile(every_latency, 0.50),
        "p95_ms": percentile(every_latency, 0.95),
        "index_ms": sum(index_ms.values()) if index_ms else None,
    }
    return table


def build_report(
    records: Sequence[CaseRecord],
    *,
    dataset_hash: str,
    dataset_files: Sequence[DatasetFile] = (),
    metadata: Metadata,
    index_ms: Mapping[str, float],
    sections: Sections | None = None,
    cached: Collection[str] = (),
    complete: bool = True,
    warmup_ms: Mapping[str, float] | None = None,
) -> Report:
    """Assemble the report from the case records of a run, plus optional `sections`.

    Everything but the floors' verdicts, which the gate adds (`report.gate.judge_run`).
    """
    ordered = sorted(settle_layers(records), key=lambda record: record.case_id)
    tables = aggregate(ordered)
    report: Report = {
        "schema_version": SCHEMA_VERSION,
        # False for a run that did not finish (interrupted, nothing ran): a partial report.
        "complete": complete,
        "metric_version": METRIC_VERSION,
        "dataset_hash": dataset_hash,
        "dataset_files": list(dataset_files),
        "metadata": metadata.copy(),
        "overall": tables["overall"],
        "by_content_type": tables["by_content_type"],
        "by_layer": tables["by_layer"],
        "negatives": tables["negatives"],
        "latency": latency_table(ordered, index_ms, cached, warmup_ms),
        "cases": [record.to_json() for record in ordered],
        "failures": sorted(
            (failure.to_json() for record in ordered for failure in record.failures),
            key=lambda failure: (failure["case_id"], failure["type"]),
        ),
    }
    # Key by key: a TypedDict cannot be unpacked into a larger one.
    sections = sections or {}
    if "rankers" in sections:
        report["rankers"] = sections["rankers"]
    if "token_cost" in sections:
        report["token_cost"] = sections["token_cost"]
    if "start_times" in sections:
        report["start_times"] = sections["start_times"]
    return report


def subset_reason(report: Report) -> str:
    """How many of the fixture set's cases a report covers and what selected them, in words."""
    selection = _selection(report)
    shown = f"{selection.get('cases_run')} of {selection.get('cases_in_fixture_set')} cases"
    selected_by = selection.get("selected_by") or []
    if not selected_by:
        return shown
    return f"{shown}, selected by {' '.join(str(part) for part in selected_by)}"


def is_subset(report: Report) -> bool:
    """Whether the report covers only some of its fixture set's cases (a `-k` run, say)."""
    selection = _selection(report)
    if "subset" in selection:
        return bool(selection["subset"])
    # Reports before the flag: the counts say it.
    run, total = selection.get("cases_run"), selection.get("cases_in_fixture_set")
    return isinstance(run, int) and isinstance(total, int) and run < total


def _selection(report: Report) -> Mapping[str, Any]:
    # compare.checking checks no part of metadata.selection: a loaded report's may be
    # absent or of any shape.
    metadata = report.get("metadata")
    selection = metadata.get("selection") if isinstance(metadata, Mapping) else None
    return selection if isinstance(selection, Mapping) else {}


def without_timings(report: Report) -> dict[str, object]:
    """The report minus what measures the machine: equal for equal fixtures and engine."""
    stripped = {key: value for key, value in report.items() if key not in TIMING_KEYS}
    stripped["metadata"] = {
        key: value for key, value in report["metadata"].items() if key not in METADATA_TIMING_KEYS
    }
    stripped["cases"] = [
        {key: value for key, value in case.items() if key not in CASE_TIMING_KEYS}
        for case in report["cases"]
    ]
    if isinstance(report.get("rankers"), Mapping):
        stripped["rankers"] = {
            key: value for key, value in report["rankers"].items() if key != "p50_ms"
        }
    return stripped
