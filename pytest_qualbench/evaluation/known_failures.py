"""Known failures: a case's `xfail` field against what the judge found.

A known failure still runs and counts in every metric and floor; only its pytest
outcome changes. It is strict: passing fails the run (pytest's XPASS(strict)),
and so does failing in a way it does not declare, since a known failure that
gets worse (rank 4 becomes not found) must not stay green.
"""

from __future__ import annotations

from collections.abc import Collection

from pytest_qualbench.evaluation.case_record import CaseRecord, Failure
from pytest_qualbench.fixtures.schema import Case, ExpectedFailure, Vocabulary


def declared_checks(case: Case, expected: ExpectedFailure) -> tuple[str, ...]:
    """The checks the xfail names; a bare reason names every check the case has."""
    return expected.checks or case.checks


def undeclared_failures(
    record: CaseRecord, case: Case, expected: ExpectedFailure
) -> tuple[Failure, ...]:
    """The failures the xfail does not declare; an engine error is never a declared one."""
    declared = declared_checks(case, expected)
    return tuple(failure for failure in record.failures if failure.type not in declared)


def is_strict(
    case: Case, expected: ExpectedFailure, checks: Collection[str], vocabulary: Vocabulary
) -> bool:
    """Whether a pass fails the run: only when every declared check is applied in this run.

    `--qualbench-checks` may leave one out, and an engine that does not label the
    expected layer is not held to it; a case that then passes is not news.
    """
    applied = set(checks)
    if not vocabulary.checks_layer(case.expected_layer):
        applied.discard("layer")
    return set(declared_checks(case, expected)) <= applied
