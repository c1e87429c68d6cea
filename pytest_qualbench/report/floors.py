"""Floors: the minimum a metric must reach, and the verdict of a report against them."""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from pytest_qualbench.evaluation.metrics import (
    ALL_METRIC_NAMES,
    NEGATIVE_METRIC,
)
from pytest_qualbench.fixtures.schema import CONTENT_TYPES, FixtureSet
from pytest_qualbench.report.model import FloorJson, Report


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

    def to_json(self) -> FloorJson:
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


def metric_fraction(text: str, *, what: str, number: str, example: str) -> tuple[str, float]:
    """`NAME:NUMBER` split at its last colon, NUMBER a fraction in [0, 1].

    The grammar of floors (`mrr:0.9`, `json.mrr:0.9`) and of qualstat's `--fail-on`
    (`mrr:0.01`); `what` starts every message, `number` names the number (VALUE, DELTA).
    The caller checks the metric name.
    """
    name, separator, raw_number = text.rpartition(":")
    if not separator or not name:
        raise argparse.ArgumentTypeError(
            f"{what}{text!r}: expected METRIC:{number}, e.g. {example}"
        )
    try:
        value = float(raw_number)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{what}{text!r}: {number} {raw_number!r} is not a number"
        ) from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{what}{text!r}: {number} must be between 0 and 1")
    return name, value


def parse_floor(
    text: str, content_types: Collection[str] | None = CONTENT_TYPES, accepted_by: str = ""
) -> Floor:
    """Parse `METRIC:VALUE` or `CONTENT_TYPE.METRIC:VALUE`; argparse `type=` compatible.

    `content_types` None leaves the scope unchecked: the command line is parsed
    before the engine, whose declared content types a floor may name, is known.
    """
    several = [part for part in re.split(r"[\s,]+", text.strip()) if part]
    if len(several) > 1:
        raise argparse.ArgumentTypeError(_several_floors(text, several, content_types, accepted_by))
    name, value = metric_fraction(text, what="floor ", number="VALUE", example="mrr:0.9")
    scope, _, metric = name.rpartition(".") if "." in name else ("", "", name)
    if metric not in ALL_METRIC_NAMES:
        close = difflib.get_close_matches(metric, ALL_METRIC_NAMES, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise argparse.ArgumentTypeError(
            f"floor {text!r}: unknown metric {metric!r}{hint}; known: {', '.join(ALL_METRIC_NAMES)}"
        )
    if scope and content_types is not None:
        problem = scope_error(scope, content_types, accepted_by)
        if problem:
            raise argparse.ArgumentTypeError(f"floor {text!r}: {problem}")
    return Floor(metric=metric, scope=scope or None, value=value)


def _several_floors(
    text: str, parts: Sequence[str], content_types: Collection[str] | None, accepted_by: str
) -> str:
    """Several floors in one text: say to give one per line, and what is wrong with each."""
    problems = []
    for part in parts:
        try:
            parse_floor(part, content_types, accepted_by)
        except argparse.ArgumentTypeError as exc:
            problems.append(str(exc))
    message = (
        f"{text!r} holds {len(parts)} floors: give one METRIC:VALUE per line "
        "(ini qualbench_floors) or per --qualbench-floor"
    )
    return "; ".join([message, *problems])


def scope_error(scope: str, content_types: Collection[str], accepted_by: str = "") -> str | None:
    """Why a floor's content type is not one of `content_types`; None when it is."""
    if scope in content_types:
        return None
    engine = f" (what engine {accepted_by!r} accepts)" if accepted_by else ""
    return f"unknown content type {scope!r}; known: {', '.join(content_types)}{engine}"


def metric_value(report: Report, floor: Floor) -> float | None:
    """The report's value for the metric a floor names (None when its scope has no cases)."""
    negative = floor.metric == NEGATIVE_METRIC
    if floor.scope is None:
        value = (
            report["negatives"]["negative_pass"]
            if negative
            else report["overall"].get(floor.metric)
        )
    else:
        tables = report["negatives"]["by_content_type"] if negative else report["by_content_type"]
        value = tables.get(floor.scope, {}).get(floor.metric)
    return None if value is None else float(value)


def absent_scope(floor: Floor, fixture_set: FixtureSet) -> str | None:
    """Why the fixture set cannot test `floor` (it has no case in its scope), or None."""
    negative = floor.metric == NEGATIVE_METRIC
    in_scope = [
        case
        for case in fixture_set.cases()
        if case.is_negative == negative and floor.scope in (None, case.content_type)
    ]
    if in_scope:
        return None
    kind = "negative " if negative else ""
    scope = f"{floor.scope} " if floor.scope is not None else ""
    present = sorted({case.content_type for case in fixture_set.cases()})
    return (
        f"the fixture set has no {kind}{scope}cases, so this floor could never fail "
        f"(content types present: {', '.join(present) or 'none'})"
    )


def check_floors(report: Report, floors: Sequence[Floor], *, enforced: bool) -> list[FloorVerdict]:
    """Each floor against the report; a floor whose scope has no cases is not enforced."""
    verdicts = []
    for floor in floors:
        value = metric_value(report, floor)
        ok = None if not enforced or value is None else value >= floor.value
        verdicts.append(FloorVerdict(floor, value, ok))
    return verdicts
