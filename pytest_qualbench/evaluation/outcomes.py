"""Each check of a judged case in words: one wording for failures, summaries and `show`.

`rank 5 > ceiling 3` reads the same in a failure section, in pytest's short test
summary and in `qualbench show`, and a missing value is said in words, never `None`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from pytest_qualbench.evaluation.case_record import CaseRecord
from pytest_qualbench.fixtures.schema import ANY_LAYER_ACCEPTED, CHECKS

# A check's verdict as a terminal shows it: passed, failed, not applied.
VERDICT_WORDS = {True: "pass", False: "FAIL", None: "skip"}

# How a needle is marked in a one-line snippet, wherever a terminal shows results.
NEEDLE_OPEN = ">>>"
NEEDLE_CLOSE = "<<<"


def marked(snippet: str, needle: str | None) -> str:
    """The snippet with the needle's first occurrence between the markers."""
    if needle is None:
        return snippet
    return snippet.replace(needle, f"{NEEDLE_OPEN}{needle}{NEEDLE_CLOSE}", 1)


@dataclass(frozen=True)
class CheckOutcome:
    """One check of one case: passed, failed, or not applied (`passed` None), and why."""

    check: str
    passed: bool | None
    text: str


def check_outcomes(record: CaseRecord, checks: Collection[str] = CHECKS) -> list[CheckOutcome]:
    """Every check that applies to the case, in CHECKS order; an engine error is the only one."""
    errors = [failure for failure in record.failures if failure.type == "error"]
    if errors:
        return [CheckOutcome("error", False, str(failure.actual)) for failure in errors]
    outcomes = (
        [_negative(record)]
        if record.negative
        else [_needles(record), _rank(record), _layer(record)]
    )
    # The judge applied only the selected checks; the others are shown, not judged.
    return [
        outcome
        if outcome.check in checks or outcome.passed is None
        else CheckOutcome(outcome.check, None, f"{outcome.text} (not checked)")
        for outcome in outcomes
    ]


def failure_reason(record: CaseRecord) -> str:
    """The failed checks in one line, for pytest's short test summary.

    A check the engine does not take is named too, so a reader of the one line
    does not take its absence for a pass.
    """
    failed = {failure.type for failure in record.failures}
    reason = "; ".join(
        outcome.text for outcome in check_outcomes(record) if outcome.check in failed
    )
    if engine_skipped_layer(record):
        reason += "; layer not checked"
    return reason


def engine_skipped_layer(record: CaseRecord) -> bool:
    """Whether the engine, not the case (`any`), left the layer check out."""
    return is_engine_reason(record.layer_not_checked)


def is_engine_reason(layer_not_checked: str | None) -> bool:
    return layer_not_checked not in (None, ANY_LAYER_ACCEPTED)


def not_checked_lines(layer_not_checked: Iterable[str | None]) -> list[str]:
    """One summary line per reason the engine left the layer check out, and for how many cases.

    Takes each case's `layer_not_checked` (a record's, or a report case's).
    """
    reasons = Counter(reason for reason in layer_not_checked if is_engine_reason(reason))
    return [
        f"layer: not checked — {reason} ({count} positive case{'s' if count != 1 else ''})"
        for reason, count in sorted(reasons.items())
    ]


def _negative(record: CaseRecord) -> CheckOutcome:
    count = record.result_count
    if count == 0:
        return CheckOutcome("negative", True, "no results, as expected")
    noun = "result" if count == 1 else "results"
    return CheckOutcome("negative", False, f"{count} {noun} for a negative case, expected none")


def _relevant_entries(record: CaseRecord) -> CheckOutcome:
    wanted = record.wanted_entries()
    missing = [entry for entry in wanted if entry not in record.relevant_found]
    found = f"{len(wanted) - len(missing)} of {len(wanted)} relevant entries found"
    if not missing:
        return CheckOutcome("needles", True, found)
    shown = ", ".join(f"{entry} (grade {wanted[entry]})" for entry in missing)
    return CheckOutcome("needles", False, f"{found}, missing {shown}")


def _needles(record: CaseRecord) -> CheckOutcome:
    if record.relevant:
        return _relevant_entries(record)
    wanted = list(dict.fromkeys(record.needles))
    missing = [needle for needle in wanted if needle not in record.needles_found]
    found = f"{len(wanted) - len(missing)} of {len(wanted)} needles found"
    if not missing:
        return CheckOutcome("needles", True, found)
    return CheckOutcome(
        "needles", False, f"{found}, missing {', '.join(repr(needle) for needle in missing)}"
    )


def _rank(record: CaseRecord) -> CheckOutcome:
    ceiling = record.expected_rank_ceiling
    if record.rank is None:
        text = f"no relevant result in the {record.result_count} returned"
        if not ceiling:
            return CheckOutcome("rank", None, f"{text} (no ceiling)")
        return CheckOutcome("rank", False, f"{text}, ceiling {ceiling}")
    if not ceiling:
        return CheckOutcome("rank", None, f"rank {record.rank} (no ceiling)")
    if record.rank > ceiling:
        return CheckOutcome("rank", False, f"rank {record.rank} > ceiling {ceiling}")
    return CheckOutcome("rank", True, f"rank {record.rank} <= ceiling {ceiling}")


def _layer(record: CaseRecord) -> CheckOutcome:
    expected = record.expected_layer
    if record.layer_not_checked is not None:
        returned = f"; first relevant result from {record.layer}" if record.layer else ""
        return CheckOutcome("layer", None, f"not checked: {record.layer_not_checked}{returned}")
    if record.layer is None:
        return CheckOutcome(
            "layer", False, f"no relevant result, so no layer (expected {expected})"
        )
    if record.layer != expected:
        return CheckOutcome("layer", False, f"layer {record.layer}, expected {expected}")
    return CheckOutcome("layer", True, f"layer {expected}")
