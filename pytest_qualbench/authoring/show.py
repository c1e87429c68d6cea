"""`qualbench show`: one case's ranked results as the benchmark sees them, for debugging."""

from __future__ import annotations

import difflib

from pytest_qualbench.authoring.fixture_lines import AuthoringError
from pytest_qualbench.authoring.probe import probe, report_lines
from pytest_qualbench.evaluation.relevance import DEFAULT_GAIN, DEFAULT_MIN_GRADE
from pytest_qualbench.evaluation.runner import EngineFactory
from pytest_qualbench.fixtures import Case, FixtureSet


def find_case(fixture_set: FixtureSet, case_id: str) -> Case:
    """The case with this id, or AuthoringError naming the closest ids."""
    cases = {case.case_id: case for case in fixture_set.cases()}
    if case_id in cases:
        return cases[case_id]
    close = difflib.get_close_matches(case_id, list(cases), n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    files = ", ".join(fixture_file.display_path for fixture_file in fixture_set.files)
    raise AuthoringError(f"no case {case_id!r} in {files}{hint}")


def show_lines(
    fixture_set: FixtureSet,
    case_id: str,
    engine_factory: EngineFactory,
    limit: int,
    *,
    min_grade: int = DEFAULT_MIN_GRADE,
    gain: str = DEFAULT_GAIN,
) -> tuple[list[str], bool]:
    """The case, what it expects, the engine's ranked results and each check's outcome.

    Also whether the case passes: `qualbench show` exits 1 when it does not.
    """
    case = find_case(fixture_set, case_id)
    if case.is_negative:
        expected = "no results (negative case)"
    else:
        ceiling = case.expected_rank_ceiling or "any"
        expected = f"{wanted(case, min_grade)}; layer {case.expected_layer}, rank <= {ceiling}"
    header = [
        f"{case.case_id} [{case.content_type}] {case.path}:{case.line} (entry {case.entry_id})",
        f"expected:  {expected}",
    ]
    found = probe(case, fixture_set, engine_factory, limit, min_grade=min_grade, gain=gain)
    return header + report_lines(found), found.record.passed


def wanted(case: Case, min_grade: int) -> str:
    """What a positive case asks for: its needles, its graded entries, or both."""
    needles = ", ".join(repr(needle) for needle in case.needles)
    if not case.relevant:
        return needles
    graded = sorted(case.relevant.items(), key=lambda item: (-item[1], item[0]))
    entries = ", ".join(f"{entry_id} (grade {grade})" for entry_id, grade in graded)
    counted = f"relevant {entries}, grade >= {min_grade} counts"
    return f"{counted}; each result also holding one of {needles}" if needles else counted
