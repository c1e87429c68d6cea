"""The comparison's records: rules, metric changes, case flips, rank moves, the verdict."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_qualbench.compare.statistics import ALPHA
from pytest_qualbench.evaluation.metrics import ALL_METRIC_NAMES, reciprocal_rank
from pytest_qualbench.fixtures.schema import CONTENT_TYPES

OVERALL = "overall"


# Display order of docs/report-format.md; metrics a later metric_version adds
# follow alphabetically.
METRIC_ORDER = ALL_METRIC_NAMES


class IncomparableReports(Exception):
    """Two reports measure different things, so their numbers must not be diffed."""


@dataclass(frozen=True)
class Rule:
    """A metric regresses when it drops by more than `max_drop` (0 = any drop)."""

    metric: str
    max_drop: float

    def __str__(self) -> str:
        return f"{self.metric}:{self.max_drop:g}"


@dataclass(frozen=True)
class MetricChange:
    """One metric in one scope (overall or a content type), base against head."""

    scope: str
    metric: str
    base: float | None
    head: float | None
    pairs: int
    changed_cases: int
    p_value: float | None
    ci_low: float | None
    ci_high: float | None

    @property
    def delta(self) -> float | None:
        if self.base is None or self.head is None:
            return None
        return self.head - self.base

    @property
    def changed(self) -> bool:
        return self.changed_cases > 0 or self.base != self.head

    @property
    def significant(self) -> bool:
        return self.p_value is not None and self.p_value < ALPHA

    @property
    def subject(self) -> str:
        """The floor-style name: `mrr` overall, `json.mrr` for one content type."""
        return self.metric if self.scope == OVERALL else f"{self.scope}.{self.metric}"


@dataclass(frozen=True)
class CaseFlip:
    """A case whose pass/fail status changed; `failures` are the failed check types."""

    case_id: str
    failures: tuple[str, ...]


@dataclass(frozen=True)
class RankMove:
    """A positive case whose first relevant rank changed (None = nothing relevant returned)."""

    case_id: str
    base_rank: int | None
    head_rank: int | None

    @property
    def reciprocal_delta(self) -> float:
        return reciprocal_rank(self.head_rank) - reciprocal_rank(self.base_rank)


@dataclass(frozen=True)
class Regression:
    """One reason the head run is worse than the base run by the rules."""

    subject: str
    detail: str


@dataclass(frozen=True)
class SectionChange:
    """One number of an optional report section (rankers, token cost, start times)."""

    name: str
    base: float | None
    head: float | None

    @property
    def delta(self) -> float | None:
        return None if self.base is None or self.head is None else self.head - self.base


@dataclass(frozen=True)
class SetupChange:
    """One thing the two runs were made with that differs (engine, option, library...)."""

    name: str
    base: str
    head: str


@dataclass(frozen=True)
class MetricMove:
    """One per-case metric value that changed between the runs."""

    metric: str
    base: float
    head: float


@dataclass(frozen=True)
class CaseMove:
    """A shared case that got worse: newly failing, or a metric value of its own dropped."""

    case_id: str
    content_type: str
    newly_failing: bool
    # The head run's failed checks.
    failures: tuple[str, ...]
    base_rank: int | None
    head_rank: int | None
    # Every metric of the case that changed, in display order.
    moves: tuple[MetricMove, ...]


@dataclass(frozen=True)
class Comparison:
    """Everything qualstat knows about base against head, ready to render."""

    base_label: str
    head_label: str
    base_hash: str
    head_hash: str
    metric_version: int
    intersect: bool
    added_cases: tuple[str, ...]
    removed_cases: tuple[str, ...]
    # Ids in both reports whose definition changed: listed, and left out of every number.
    changed_cases: tuple[str, ...]
    shared_cases: int
    changes: tuple[MetricChange, ...]
    newly_failing: tuple[CaseFlip, ...]
    newly_passing: tuple[CaseFlip, ...]
    rank_moves: tuple[RankMove, ...]
    regressions: tuple[Regression, ...]
    rules: tuple[Rule, ...]
    seed: int
    sections: tuple[SectionChange, ...] = ()
    # What the runs were made with that differs: shown before any metric.
    setup: tuple[SetupChange, ...] = ()
    # What a report did not record (made by an older plugin), so cannot be compared.
    unrecorded: tuple[str, ...] = ()
    # Shared cases that got worse, newly failing first.
    worse_cases: tuple[CaseMove, ...] = ()

    @property
    def exit_code(self) -> int:
        return 1 if self.regressions else 0


def content_type_sort_key(content_type: str) -> tuple[int, str]:
    """Known content types in their documented order, unknown ones after, alphabetically."""
    if content_type in CONTENT_TYPES:
        return (CONTENT_TYPES.index(content_type), content_type)
    return (len(CONTENT_TYPES), content_type)
