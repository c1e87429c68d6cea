"""How a failed case reads in pytest's output: the failure section and the summary line.

The first line says which check failed (`rank 5 > ceiling 3`), so pytest's short
test summary says it too; then the case, the query, each check's outcome and the
top results with the needle marked. Colour goes through pytest's terminal writer,
so `--color=no` is honoured.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest
from _pytest._code.code import ReprFileLocation, TerminalRepr
from _pytest._io import TerminalWriter

from pytest_qualbench.engine.returned import EngineReturnError
from pytest_qualbench.evaluation.case_record import CaseRecord
from pytest_qualbench.evaluation.known_failures import declared_checks, undeclared_failures
from pytest_qualbench.evaluation.outcomes import (
    VERDICT_WORDS,
    check_outcomes,
    failure_reason,
    marked,
)
from pytest_qualbench.evaluation.runner import EngineStartupError, SharedEngine
from pytest_qualbench.fixtures.schema import Case
from pytest_qualbench.plugin.engine_errors import engine_error_repr

VERDICT_MARKUP = {True: {"green": True}, False: {"red": True}, None: {}}


@dataclasses.dataclass(frozen=True)
class Line:
    text: str
    markup: dict[str, bool] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(eq=False)
class CaseFailureRepr(TerminalRepr):
    """Lines to write, then (for an engine error) pytest's own traceback repr.

    `reprcrash` is what pytest's short test summary and JUnit's failure message read.
    """

    lines: Sequence[Line]
    reprcrash: ReprFileLocation
    traceback: TerminalRepr | None = None

    def toterminal(self, tw: TerminalWriter) -> None:
        for line in self.lines:
            tw.line(line.text, **line.markup)
        if self.traceback is not None:
            self.traceback.toterminal(tw)


def case_failure(record: CaseRecord, case: Case) -> CaseFailureRepr:
    """The failed checks first, then the case, each check's outcome and the top results."""
    reason = failure_reason(record) + _not_as_declared(record, case)
    lines = [
        Line(reason, {"red": True, "bold": True}),
        Line(f"case:      {record.case_id} [{record.content_type}] {case.path}:{case.line}"),
        Line(f"query:     {record.query!r}"),
    ]
    if record.corrected_query is not None:
        lines.append(Line(f"corrected: {record.corrected_query!r}"))
    lines.append(Line("checks:"))
    for outcome in check_outcomes(record):
        verdict = VERDICT_WORDS[outcome.passed]
        lines.append(
            Line(f"  {outcome.check:<9}{verdict:<5} {outcome.text}", VERDICT_MARKUP[outcome.passed])
        )
    lines += _top_results(record)
    return CaseFailureRepr(lines, ReprFileLocation(case.path, case.line, reason))


def _not_as_declared(record: CaseRecord, case: Case) -> str:
    """For a known failure that failed otherwise: which checks its xfail does not name."""
    if case.xfail is None:
        return ""
    undeclared = dict.fromkeys(
        failure.type for failure in undeclared_failures(record, case, case.xfail)
    )
    if not undeclared:
        return ""
    declared = ", ".join(declared_checks(case, case.xfail))
    return (
        f" (known failure, but {', '.join(undeclared)} failed too: its xfail declares "
        f"{declared} only, {case.xfail.reason!r})"
    )


def _top_results(record: CaseRecord) -> list[Line]:
    if not record.top_results:
        return [] if record.negative else [Line("top results: none returned")]
    lines = [Line(f"top results ({record.result_count} returned):")]
    for shown in record.top_results:
        snippet = marked(shown.snippet, shown.needle)
        title = f" {shown.title} |" if shown.title else ""
        lines.append(Line(f"  {shown.rank:>2}. [{shown.layer or 'no layer'}]{title} {snippet}"))
    return lines


def engine_failure(
    excinfo: pytest.ExceptionInfo[BaseException], case: Case, config: pytest.Config
) -> CaseFailureRepr:
    """The engine's exception: the case and query, then only the engine's frames."""
    error = excinfo.value
    where = f"{case.case_id} [{case.content_type}] {case.path}:{case.line}"
    if isinstance(error, EngineStartupError | EngineReturnError | SharedEngine):
        # A wrong return type or a shared engine is the whole story (no frame of the
        # engine shows it); a start-up error never gets this far (plugin.session stops
        # the run first) and is kept short if one does.
        crash = ReprFileLocation(case.path, case.line, str(error))
        return CaseFailureRepr([Line(str(error), {"red": True}), Line(f"case:  {where}")], crash)
    crash = ReprFileLocation(case.path, case.line, f"{type(error).__name__}: {error}")
    lines = [
        Line(
            f"the engine raised {type(error).__name__} on case {where}", {"red": True, "bold": True}
        ),
        Line(f"query: {case.query!r}"),
    ]
    return CaseFailureRepr(lines, crash, engine_error_repr(excinfo, config))
