"""Collect: the controller takes in case records and index facts, its own and its workers'.

The first of the reporter's three parts (collect, gate, outputs). Its hooks only
gather; `collected()` hands a frozen `Collected` to the gate at session end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_qualbench.evaluation.case_record import CaseRecord
from pytest_qualbench.evaluation.judge import error_record
from pytest_qualbench.evaluation.runner import BenchRun, engine_info
from pytest_qualbench.fixtures.schema import Case, FixtureSet
from pytest_qualbench.plugin.items import CaseItem
from pytest_qualbench.sections.extra import retrieved_tokens


@dataclass(frozen=True)
class Collected:
    """Everything the run produced that the report is built from."""

    # By case id; a case that never finished has an error record.
    records: Mapping[str, CaseRecord]
    # The fixture set's cases that have no record: a subset run (`-k`, `-m`, ...).
    subset: bool
    # Tests pytest selected, and how many of them no report came back for.
    selected: int
    never_ran: int
    index_ms: Mapping[str, float]
    warmup_ms: Mapping[str, float]
    # Content types whose index every process loaded from the cache (none built it).
    cached: frozenset[str]
    # The engine's name, config, options, warnings, lists_chunks (None: no engine ran).
    engine: Mapping[str, Any] | None
    retrieved_tokens: Mapping[str, int]
    tokens_error: str | None
    # Engines the workers could not close (a serial run shows its own at unconfigure).
    close_problems: tuple[str, ...]


class Collector:
    """The controller's intake: records from test reports, index facts from workers."""

    def __init__(self, fixture_set: FixtureSet) -> None:
        self.cases: dict[str, Case] = {case.case_id: case for case in fixture_set.cases()}
        self.records: dict[str, CaseRecord] = {}
        # Tokens of each positive case's top-k results, counted in the process that ran it.
        self.retrieved_tokens: dict[str, int] = {}
        self.tokens_error: str | None = None
        # Node id -> case id, from the reports of the item itself (xdist's crash report
        # carries only the node id, and a case_id may contain "::").
        self.case_of_node: dict[str, str] = {}
        self.index_ms: dict[str, float] = {}
        self.warmup_ms: dict[str, float] = {}
        # Where the indexes came from: a content type some process built counts as built.
        self.cached_indexes: set[str] = set()
        self.built_indexes: set[str] = set()
        self.engine: dict[str, Any] | None = None
        self.close_problems: list[str] = []
        # The engine could not start (plugin.session, or a worker's build): no report.
        self.startup_error: str | None = None
        # Node ids pytest selected to run, and those a report came back for. One selected
        # and never reported means the session ended before it (xdist out of replacement
        # workers, say): the run did not finish, which is not a subset run.
        self.selected: set[str] = set()
        self.reported: set[str] = set()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # A serial run's items; xdist's controller collects none (its workers' ids below).
        self.selected.update(item.nodeid for item in session.items)

    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> None:
        # A case this process ran: the record itself; only a worker's record needs the
        # copy through its wire form (to_wire, from_wire).
        if isinstance(item, CaseItem) and call.when == "call" and item.record is not None:
            self.records[item.case.case_id] = item.record

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.reported.add(report.nodeid)
        wire = getattr(report, "qualbench_case", None)
        if wire is not None:
            self.records[wire["case_id"]] = CaseRecord.from_wire(wire)
            return
        case_id: str | None = getattr(report, "qualbench_case_id", None)
        if case_id is not None:
            self.case_of_node[report.nodeid] = case_id
        if not report.failed:
            return
        case = self.cases.get(case_id or self.case_of_node.get(report.nodeid, ""))
        if case is None and report.when not in ("setup", "call", "teardown"):
            case = self._crashed_case(report.nodeid)
        if case is not None and case.case_id not in self.records:
            # No record means the case never finished (a crashed worker, a failing
            # setup): it scores 0 rather than leaving the denominators.
            self.records[case.case_id] = error_record(
                case, f"{report.when}: {report.longreprtext[-500:]}"
            )

    def _crashed_case(self, nodeid: str) -> Case | None:
        """The case of an item whose worker died before the item sent any report.

        A worker that crashes while indexing, before the item's setup, leaves only
        xdist's crash report, with the node id `<file>::<case_id>`. A case_id may
        hold "::": the longest case id that ends the node id, in a file of its name.
        """
        matches = [
            case
            for case in self.cases.values()
            if nodeid.endswith(f"::{case.case_id}")
            and nodeid[: -len(case.case_id) - 2].endswith(Path(case.path).name)
        ]
        return max(matches, key=lambda case: len(case.case_id), default=None)

    # xdist hooks: optional, so the plugin also loads where xdist is not installed.
    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        self.selected.update(ids)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", {}).get("qualbench")
        if not output:
            return
        self.startup_error = self.startup_error or output.get("startup_error")
        for content_type, index_ms in output["index_ms"].items():
            cached = content_type in output["cached_indexes"]
            (self.cached_indexes if cached else self.built_indexes).add(content_type)
            if not (cached and content_type in self.built_indexes):
                # A build's time stands for the run, not the workers' loads after it.
                self.index_ms[content_type] = max(index_ms, self.index_ms.get(content_type, 0.0))
        self.close_problems += output.get("close_problems", [])
        for content_type, warmup_ms in output.get("warmup_ms", {}).items():
            self.warmup_ms[content_type] = max(warmup_ms, self.warmup_ms.get(content_type, 0.0))
        self.retrieved_tokens.update(output["retrieved_tokens"])
        self.tokens_error = self.tokens_error or output.get("tokens_error")
        engine = output["engine"]
        if engine is None:
            return
        if self.engine is None:
            self.engine = engine
        else:
            # Each worker indexed only the content types it ran: their warnings add up.
            warnings = set(self.engine["warnings"]) | set(engine["warnings"])
            lists_chunks = self.engine["lists_chunks"] and engine["lists_chunks"]
            self.engine = {
                **self.engine,
                "warnings": sorted(warnings),
                "lists_chunks": lists_chunks,
            }

    def collected(self, bench_run: BenchRun, tokens_k: int) -> Collected:
        """What was gathered, with this process's own engines when it ran cases itself."""
        if bench_run.corpora:
            self.index_ms = bench_run.index_times()
            self.warmup_ms = bench_run.warmup_times()
            self.cached_indexes = set(bench_run.cached_indexes())
            self.engine = engine_info(bench_run)
            tokens = retrieved_tokens(bench_run, tokens_k)
            self.retrieved_tokens.update(tokens.counts)
            self.tokens_error = self.tokens_error or tokens.error
        return Collected(
            records=dict(self.records),
            subset=not set(self.records) >= set(self.cases),
            selected=len(self.selected),
            never_ran=len(self.selected - self.reported),
            index_ms=dict(self.index_ms),
            warmup_ms=dict(self.warmup_ms),
            cached=frozenset(self.cached_indexes - self.built_indexes),
            engine=self.engine,
            retrieved_tokens=dict(self.retrieved_tokens),
            tokens_error=self.tokens_error,
            close_problems=tuple(self.close_problems),
        )

    def ran(self) -> list[Case]:
        """The cases that have a record, by case id."""
        return [self.cases[case_id] for case_id in sorted(self.records) if case_id in self.cases]
