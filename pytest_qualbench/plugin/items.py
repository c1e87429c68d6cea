"""Collection: a JSONL fixture file is a pytest File, each case an Item.

A broken fixture line becomes its own item that errors at setup, naming
file:line and field, so the rest of the file and the session still run.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_qualbench.evaluation.case_record import CaseRecord
from pytest_qualbench.evaluation.judge import error_record
from pytest_qualbench.evaluation.known_failures import is_strict, undeclared_failures
from pytest_qualbench.evaluation.outcomes import engine_skipped_layer
from pytest_qualbench.evaluation.runner import BenchRun
from pytest_qualbench.fixtures.schema import Case, FixtureError
from pytest_qualbench.plugin.failures import case_failure, engine_failure

if TYPE_CHECKING:
    # pytest types repr_failure's return with this class but does not export it.
    from _pytest._code.code import TerminalRepr

bench_run_key = pytest.StashKey[BenchRun]()
JUNIT_METRICS = (
    "hit@1",
    "hit@3",
    "hit@10",
    "mrr",
    "recall@10",
    "ndcg@10",
    "context_recall",
    "negative_pass",
)


class CaseFailed(Exception):
    """A case whose checks failed; carries the record to render."""

    def __init__(self, record: CaseRecord) -> None:
        super().__init__(record.case_id)
        self.record = record


class KnownCaseFailure(CaseFailed):
    """A case with `xfail` that failed only the checks it declares: pytest's xfailed.

    Its xfail mark takes only this exception (`raises=`), so an undeclared failure
    or an engine error fails the item as usual.
    """


class QualbenchFile(pytest.File):
    """One JSONL fixture file of the session's fixture set."""

    def collect(self) -> Iterator[pytest.Item]:
        bench_run = self.config.stash[bench_run_key]
        fixture_file = bench_run.fixture_set.file(self.path)
        if fixture_file is None:
            return
        for error in fixture_file.errors:
            yield FixtureLineItem.from_parent(
                self, name=f"line{error.line}:{error.field}", error=error
            )
        # One decorator per mark for the whole file: `pytest.mark.<name>` builds a
        # new one on every access (about 5 us), twice per case.
        names = ("qualbench", *bench_run.vocabulary.content_types)
        marks = {name: getattr(pytest.mark, name) for name in names}
        for entry in fixture_file.entries:
            for case in entry.cases:
                item = CaseItem.from_parent(self, name=case.case_id, case=case)
                item.add_marker(marks["qualbench"])
                item.add_marker(marks[case.content_type])
                if case.xfail is not None:
                    strict = is_strict(case, case.xfail, bench_run.checks, bench_run.vocabulary)
                    item.add_marker(
                        pytest.mark.xfail(
                            reason=f"known failure: {case.xfail.reason}",
                            strict=strict,
                            raises=KnownCaseFailure,
                        )
                    )
                yield item


class FixtureLineItem(pytest.Item):
    """Stands for one broken fixture line and reports it as an error at setup."""

    def __init__(self, *, error: FixtureError, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def setup(self) -> None:
        # pytrace=False: the located message is the whole story, a traceback adds noise.
        pytest.fail(f"invalid fixture line: {self.error}", pytrace=False)

    def runtest(self) -> None:
        """Never reached: setup always fails."""

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, self.error.line - 1, f"[qualbench] {self.error.path}:{self.error.line}"


class CaseItem(pytest.Item):
    """One labeled query: search, judge, and fail with a readable account."""

    def __init__(self, *, case: Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.record: CaseRecord | None = None

    def runtest(self) -> None:
        bench_run = self.config.stash[bench_run_key]
        try:
            self.record = bench_run.run_case(self.case)
        except Exception as exc:
            # The case scores 0 and the user sees their engine's own traceback.
            self.record = error_record(self.case, exc)
            raise
        finally:
            if self.record is not None:
                self.user_properties.extend(junit_properties(self.record))
        if not self.record.passed:
            xfail = self.case.xfail
            if xfail is not None and not undeclared_failures(self.record, self.case, xfail):
                raise KnownCaseFailure(self.record)
            raise CaseFailed(self.record)

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, CaseFailed):
            return case_failure(excinfo.value.record, self.case)
        if isinstance(excinfo.value, Exception):
            return engine_failure(excinfo, self.case, self.config)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, self.case.line - 1, f"[qualbench] {self.case.case_id}"


def junit_properties(record: CaseRecord) -> list[tuple[str, object]]:
    """Per-case values as JUnit XML `<property>` elements, for CI dashboards."""
    properties: list[tuple[str, object]] = [
        ("qualbench.content_type", record.content_type),
        ("qualbench.rank", "" if record.rank is None else record.rank),
        ("qualbench.layer", record.layer or ""),
        ("qualbench.result_count", record.result_count),
    ]
    properties += [
        (f"qualbench.{name}", "" if value is None else round(value, 6))
        for name, value in record.metrics.items()
        if name in JUNIT_METRICS
    ]
    if record.relevant:
        # A case judged by entry: the entries it wants and those found, `id=grade` each.
        properties += [
            (
                "qualbench.relevant",
                ",".join(f"{e}={g}" for e, g in record.wanted_entries().items()),
            ),
            (
                "qualbench.relevant_found",
                ",".join(f"{e}={record.relevant[e]}" for e in record.relevant_found),
            ),
        ]
    if engine_skipped_layer(record):
        properties.append(("qualbench.skipped", f"layer: not checked — {record.layer_not_checked}"))
    return properties
