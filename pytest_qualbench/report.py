"""The JSON report: assembly from case records, floors, summary text, atomic I/O.

The format is documented in docs/report-format.md; `SCHEMA_VERSION` names it.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_qualbench import head_to_head, start_times, tokens
from pytest_qualbench.fixtures import CONTENT_TYPES
from pytest_qualbench.judge import CaseRecord
from pytest_qualbench.metrics import (
    ALL_METRIC_NAMES,
    METRIC_NAMES,
    METRIC_VERSION,
    NEGATIVE_METRIC,
    grouped_means,
    mean_metrics,
    percentile,
)

SCHEMA_VERSION = 1
# Report parts that measure the machine rather than the ranking.
TIMING_KEYS = ("latency", "start_times")
CASE_TIMING_KEYS = ("latency_ms",)
METADATA_TIMING_KEYS = ("timestamp",)
# Report lists written a row per line (report_text).
ONE_LINE_ROWS = ("cases", "failures")

SUMMARY_COLUMNS = (
    ("hit@1", "hit@1"),
    ("hit@3", "hit@3"),
    ("mrr", "mrr"),
    ("ndcg@10", "ndcg@10"),
    ("ctx_rec", "context_recall"),
    ("layer", "layer_accuracy"),
)


@dataclass(frozen=True)
class Floor:
    """A lower bound on one metric, overall (`scope` None) or for one content type."""

    metric: str
    scope: str | None
    value: float

    @property
    def name(self) -> str:
        return self.metric if self.scope is None else f"{self.scope}.{self.metric}"


@dataclass(frozen=True)
class FloorVerdict:
    """A floor checked against a report: `ok` is None when it was not enforced."""

    floor: Floor
    value: float | None
    ok: bool | None

    def to_json(self) -> dict[str, Any]:
        return {
            "metric": self.floor.name,
            "floor": self.floor.value,
            "value": self.value,
            "ok": self.ok,
        }

    def describe(self) -> str:
        value = "n/a" if self.value is None else f"{self.value:.3f}"
        if self.ok is None:
            return f"{self.floor.name} {value} (floor {self.floor.value:.3f} not enforced)"
        relation = ">=" if self.ok else "<"
        return f"{self.floor.name} {value} {relation} floor {self.floor.value:.3f}"


def parse_floor(text: str) -> Floor:
    """Parse `METRIC:VALUE` or `CONTENT_TYPE.METRIC:VALUE`; argparse `type=` compatible."""
    name, separator, raw_value = text.rpartition(":")
    if not separator or not name:
        raise argparse.ArgumentTypeError(f"floor {text!r}: expected METRIC:VALUE, e.g. mrr:0.9")
    scope, _, metric = name.rpartition(".") if "." in name else ("", "", name)
    if metric not in ALL_METRIC_NAMES:
        raise argparse.ArgumentTypeError(
            f"floor {text!r}: unknown metric {metric!r}; known: {', '.join(ALL_METRIC_NAMES)}"
        )
    if scope and scope not in CONTENT_TYPES:
        raise argparse.ArgumentTypeError(
            f"floor {text!r}: unknown content type {scope!r}; known: {', '.join(CONTENT_TYPES)}"
        )
    try:
        value = float(raw_value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"floor {text!r}: {raw_value!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"floor {text!r}: a floor lies between 0 and 1")
    return Floor(metric=metric, scope=scope or None, value=value)


def aggregate(records: Sequence[CaseRecord]) -> dict[str, Any]:
    """The report's metric tables: overall, by content type, by layer, negatives."""
    positives = [record for record in records if not record.negative]
    negatives = [record for record in records if record.negative]
    positive_metrics = [record.metrics for record in positives]
    negative_metrics = [record.metrics for record in negatives]

    def with_count(table: dict[str, float | None], count: int) -> dict[str, Any]:
        return {"cases": count, **table}

    def counted(
        groups: dict[str, dict[str, float | None]], group_sizes: Mapping[str, int]
    ) -> dict[str, Any]:
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
            **with_count(mean_metrics(negative_metrics, (NEGATIVE_METRIC,)), len(negatives)),
            "by_content_type": counted(
                negatives_by_type, Counter(record.content_type for record in negatives)
            ),
        },
    }


def latency_table(
    records: Sequence[CaseRecord], index_ms: Mapping[str, float]
) -> dict[str, dict[str, float | None]]:
    """Per content type and overall: search latency p50/p95, and index build time."""
    table: dict[str, dict[str, float | None]] = {}
    every_latency = [record.latency_ms for record in records]
    for content_type in sorted({record.content_type for record in records} | set(index_ms)):
        latencies = [record.latency_ms for record in records if record.content_type == content_type]
        table[content_type] = {
            "p50_ms": percentile(latencies, 0.50),
            "p95_ms": percentile(latencies, 0.95),
            "index_ms": index_ms.get(content_type),
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
    metadata: Mapping[str, Any],
    index_ms: Mapping[str, float],
    floors: Sequence[Floor],
    floors_enforced: bool,
    sections: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Assemble the whole report from the case records of a run, plus optional `sections`."""
    ordered = sorted(records, key=lambda record: record.case_id)
    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "metric_version": METRIC_VERSION,
        "dataset_hash": dataset_hash,
        "metadata": dict(metadata),
        **aggregate(ordered),
        "latency": latency_table(ordered, index_ms),
        "cases": [record.to_json() for record in ordered],
        "failures": sorted(
            (failure.to_json() for record in ordered for failure in record.failures),
            key=lambda failure: (failure["case_id"], failure["type"]),
        ),
        **(sections or {}),
    }
    report["floors"] = [
        verdict.to_json() for verdict in check_floors(report, floors, enforced=floors_enforced)
    ]
    return report


def metric_value(report: Mapping[str, Any], floor: Floor) -> float | None:
    """The report's value for the metric a floor names (None when its scope has no cases)."""
    if floor.metric == NEGATIVE_METRIC:
        table = report["negatives"]
        if floor.scope is not None:
            table = table["by_content_type"].get(floor.scope, {})
    else:
        table = (
            report["overall"]
            if floor.scope is None
            else report["by_content_type"].get(floor.scope, {})
        )
    value = table.get(floor.metric)
    return None if value is None else float(value)


def check_floors(
    report: Mapping[str, Any], floors: Sequence[Floor], *, enforced: bool
) -> list[FloorVerdict]:
    """Each floor against the report; a floor whose scope has no cases is not enforced."""
    verdicts = []
    for floor in floors:
        value = metric_value(report, floor)
        ok = None if not enforced or value is None else value >= floor.value
        verdicts.append(FloorVerdict(floor, value, ok))
    return verdicts


def write_report(path: Path, report: Mapping[str, Any]) -> None:
    """Write atomically: a reader (or a crash) never sees half a report."""
    write_text_atomic(path, report_text(report))


def report_text(report: Mapping[str, Any]) -> str:
    """Sorted keys, two-space indentation, and each case and failure on a line of its own.

    One line per case makes a diff of two reports one changed line per changed
    case, and lets the bulk go through json's C encoder (any indent selects the
    pure-Python one, about 0.1 ms per case).
    """
    members = []
    for key in sorted(report):
        value = report[key]
        if key in ONE_LINE_ROWS and isinstance(value, list) and value:
            rows = ",\n".join(f"    {_json(row)}" for row in value)
            text = f"[\n{rows}\n  ]"
        else:
            text = json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False)
            text = text.replace("\n", "\n  ")
        members.append(f"  {_json(key)}: {text}")
    return "{\n" + ",\n".join(members) + "\n}\n"


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def write_text_atomic(path: Path, text: str) -> None:
    """Write to a temporary file in the same directory, then rename over the target."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # A lone surrogate (an engine's os.fsdecode'd title, say) cannot be UTF-8;
        # written as a \uXXXX escape it stays valid JSON and the report is not lost.
        with os.fdopen(handle, "w", encoding="utf-8", errors="backslashreplace") as stream:
            stream.write(text)
        # mkstemp makes the file private (0600); a report is for others to read too.
        os.chmod(temporary, _umask_file_mode())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask_file_mode() -> int:
    """The mode a plain open() would give a new file under the process umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def without_timings(report: Mapping[str, Any]) -> dict[str, Any]:
    """The report minus what measures the machine: equal for equal fixtures and engine."""
    stripped = {key: value for key, value in report.items() if key not in TIMING_KEYS}
    stripped["metadata"] = {
        key: value for key, value in report["metadata"].items() if key not in METADATA_TIMING_KEYS
    }
    stripped["cases"] = [
        {key: value for key, value in case.items() if key not in CASE_TIMING_KEYS}
        for case in report["cases"]
    ]
    return stripped


def summary_lines(report: Mapping[str, Any], report_path: Path | None) -> list[str]:
    """The terminal summary: one table row per content type, negatives, hash, floors."""
    header = f"{'content type':<14}{'cases':>6}" + "".join(
        f"{label:>9}" for label, _ in SUMMARY_COLUMNS
    )
    header += f"{'p50 ms':>9}"
    lines = [header]
    rows = [*report["by_content_type"].items(), ("overall", report["overall"])]
    for name, table in rows:
        latency = report["latency"].get(name, {}).get("p50_ms")
        cells = "".join(f"{_fmt(table.get(metric)):>9}" for _, metric in SUMMARY_COLUMNS)
        lines.append(f"{name:<14}{table['cases']:>6}{cells}{_fmt(latency, 2):>9}")
    negatives = report["negatives"]
    lines.append(
        f"negatives: {negatives['cases']} cases, negative_pass {_fmt(negatives.get(NEGATIVE_METRIC))}"
    )
    lines.extend(section_summary_lines(report))
    lines.append(f"dataset: {report['dataset_hash']}")
    if report_path is not None:
        lines.append(f"report: {report_path}")
    for verdict in report["floors"]:
        status = {True: "ok", False: "FAILED", None: "skipped"}[verdict["ok"]]
        value = "n/a" if verdict["value"] is None else f"{verdict['value']:.3f}"
        lines.append(f"floor {verdict['metric']}: {value} vs {verdict['floor']:.3f} {status}")
    return lines


def section_summary_lines(report: Mapping[str, Any]) -> list[str]:
    """The optional sections' tables (docs/head-to-head.md), each after a blank line."""
    formatters = (
        ("rankers", head_to_head.summary_lines),
        ("token_cost", tokens.summary_lines),
        ("start_times", start_times.summary_lines),
    )
    lines: list[str] = []
    for name, formatter in formatters:
        section = report.get(name)
        if section is None:
            continue
        lines.append("")
        if "skipped" in section:
            lines.append(f"{name} skipped: {section['skipped']}")
        else:
            lines.extend(formatter(section))
    return lines


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"
