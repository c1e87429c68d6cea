"""The outcome of one case: `CaseRecord`, with its failures and shown results.

The one record per case that travels from xdist workers to the controller (its
wire form) and into the JSON report (its `to_json`); `evaluation.judge` makes it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_qualbench.evaluation.relevance import DEFAULT_MIN_GRADE

if TYPE_CHECKING:
    # Types only: report/ imports this module.
    from pytest_qualbench.report.model import CaseJson, FailureJson, TopResultJson


@dataclass(frozen=True)
class Failure:
    """One failed check of one case (`type` is a CHECKS name, or `error`)."""

    case_id: str
    type: str
    expected: Any
    actual: Any

    def to_json(self) -> FailureJson:
        return {
            "case_id": self.case_id,
            "type": self.type,
            "expected": self.expected,
            "actual": self.actual,
        }


@dataclass(frozen=True)
class ShownResult:
    """A returned result as a failure message and the report show it."""

    rank: int
    layer: str | None
    title: str
    snippet: str
    needle: str | None

    def to_json(self) -> TopResultJson:
        return {
            "rank": self.rank,
            "layer": self.layer,
            "title": self.title,
            "snippet": self.snippet,
            "needle": self.needle,
        }


@dataclass(frozen=True)
class CaseRecord:
    """The outcome of one case: what the report's `cases` and `failures` hold."""

    case_id: str
    entry_id: str
    content_type: str
    query: str
    corrected_query: str | None
    expected_layer: str
    expected_rank_ceiling: int
    negative: bool
    needles: tuple[str, ...]
    result_count: int
    rank: int | None
    layer: str | None
    needles_found: tuple[str, ...]
    metrics: Mapping[str, float | None]
    failures: tuple[Failure, ...]
    top_results: tuple[ShownResult, ...]
    latency_ms: float
    # True: every result carried a layer; False: some did not; None: nothing was
    # returned (or the search raised), so this case cannot tell.
    layers_reported: bool | None
    # Results that repeated a chunk already returned at a better rank (counted once).
    duplicate_results: int = 0
    # A case judged by entry: its grades, the judged-relevant entries its results
    # hold (grade >= min_grade, best rank first), and that threshold.
    relevant: Mapping[str, int] = field(default_factory=dict)
    relevant_found: tuple[str, ...] = ()
    min_grade: int = DEFAULT_MIN_GRADE
    # Why the layer check was not applied to this positive case (None: it was).
    layer_not_checked: str | None = None

    @property
    def passed(self) -> bool:
        return not self.failures

    def wanted_entries(self) -> dict[str, int]:
        """The entries this case counts as relevant, with their grades, best grade first."""
        wanted = [(e, g) for e, g in self.relevant.items() if g >= self.min_grade]
        return dict(sorted(wanted, key=lambda item: (-item[1], item[0])))

    @property
    def definition(self) -> str:
        """A digest of what the case asks: a changed query or needle makes it another case."""
        asked = [
            self.content_type,
            self.query,
            list(self.needles),
            self.expected_layer,
            self.expected_rank_ceiling,
        ]
        # Only a case judged by entry adds its grades: a needle case's digest is unchanged.
        if self.relevant:
            asked.append(dict(sorted(self.relevant.items())))
        text = json.dumps(asked, ensure_ascii=False, separators=(",", ":"))
        return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def to_json(self) -> CaseJson:
        """The report's case record; failed cases also carry their top results."""
        record: CaseJson = {
            "case_id": self.case_id,
            "entry_id": self.entry_id,
            "content_type": self.content_type,
            "definition": self.definition,
            "query": self.query,
            "corrected_query": self.corrected_query,
            "expected_layer": self.expected_layer,
            "expected_rank_ceiling": self.expected_rank_ceiling,
            "negative": self.negative,
            "result_count": self.result_count,
            "rank": self.rank,
            "layer": self.layer,
            "needles_found": list(self.needles_found),
            "needles_total": len(self.needles),
            "metrics": dict(self.metrics),
            "passed": self.passed,
            "latency_ms": self.latency_ms,
            "duplicate_results": self.duplicate_results,
            "layer_not_checked": self.layer_not_checked,
        }
        if self.relevant:
            record["relevant"] = dict(self.relevant)
            record["relevant_found"] = {e: self.relevant[e] for e in self.relevant_found}
            record["min_grade"] = self.min_grade
        if not self.passed:
            record["top_results"] = [shown.to_json() for shown in self.top_results]
        return record

    def to_wire(self) -> dict[str, Any]:
        """Everything needed to rebuild the record on the xdist controller."""
        return {
            **self.to_json(),
            "needles": list(self.needles),
            "failures": [failure.to_json() for failure in self.failures],
            "top_results": [shown.to_json() for shown in self.top_results],
            "layers_reported": self.layers_reported,
        }

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> CaseRecord:
        return cls(
            case_id=data["case_id"],
            entry_id=data["entry_id"],
            content_type=data["content_type"],
            query=data["query"],
            corrected_query=data["corrected_query"],
            expected_layer=data["expected_layer"],
            expected_rank_ceiling=data["expected_rank_ceiling"],
            negative=data["negative"],
            needles=tuple(data["needles"]),
            result_count=data["result_count"],
            rank=data["rank"],
            layer=data["layer"],
            needles_found=tuple(data["needles_found"]),
            metrics=dict(data["metrics"]),
            failures=tuple(Failure(**failure) for failure in data["failures"]),
            top_results=tuple(ShownResult(**shown) for shown in data["top_results"]),
            latency_ms=data["latency_ms"],
            layers_reported=data["layers_reported"],
            duplicate_results=data["duplicate_results"],
            relevant=dict(data.get("relevant", {})),
            relevant_found=tuple(data.get("relevant_found", {})),
            min_grade=data.get("min_grade", DEFAULT_MIN_GRADE),
            layer_not_checked=data["layer_not_checked"],
        )
