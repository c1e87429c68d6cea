"""The controller's reporter: gathers case records, writes the report, enforces floors.

Registered on the controller (or in a serial run) only; xdist workers just run
cases and send their records along with their test reports.
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_qualbench import __version__
from pytest_qualbench.evaluation.judge import CaseRecord, error_record
from pytest_qualbench.evaluation.runner import (
    engine_info,
)
from pytest_qualbench.fixtures.schema import Case, FixtureSet
from pytest_qualbench.plugin.items import bench_run_key
from pytest_qualbench.report.build import build_report
from pytest_qualbench.report.floors import Floor, FloorVerdict, check_floors
from pytest_qualbench.report.terminal import summary
from pytest_qualbench.report.writing import write_report
from pytest_qualbench.sections.extra import SectionOptions, extra_sections, retrieved_tokens


class QualbenchReporter:
    """Controller-side state: gathers case records, writes the report, enforces floors."""

    def __init__(
        self,
        config: pytest.Config,
        fixture_set: FixtureSet,
        floors: Sequence[Floor],
        report_path: Path,
        *,
        section_options: SectionOptions,
    ) -> None:
        self.config = config
        self.section_options = section_options
        self.fixture_set = fixture_set
        self.floors = floors
        self.report_path = report_path
        self.cases: dict[str, Case] = {case.case_id: case for case in fixture_set.cases()}
        self.records: dict[str, CaseRecord] = {}
        # Tokens of each positive case's top-k results, counted in the process that ran it.
        self.retrieved_tokens: dict[str, int] = {}
        self.index_ms: dict[str, float] = {}
        # Where the indexes came from: a content type some process built counts as built.
        self.cached_indexes: set[str] = set()
        self.built_indexes: set[str] = set()
        self.engine: dict[str, Any] | None = None
        self.report: dict[str, Any] | None = None
        self.verdicts: list[FloorVerdict] = []
        self.compare_lines: list[str] = []
        self.baseline: tuple[dict[str, Any], dict[str, Any]] | None = None
        self.html_line: str | None = None
        self.lint_lines: list[str] = []
        self.lint_failed = False

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not self.config.option.qualbench_lint:
            return
        from pytest_qualbench.authoring.lint import has_errors, lint_fixture_set

        bench_run = self.config.stash[bench_run_key]
        findings = lint_fixture_set(self.fixture_set, bench_run.engine_factory)
        self.lint_lines = [str(finding) for finding in findings] or ["no findings"]
        self.lint_failed = has_errors(findings)

    def _case_of(self, nodeid: str) -> Case | None:
        path, _, name = nodeid.rpartition("::")
        return self.cases.get(name) if path.endswith(".jsonl") else None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        wire = getattr(report, "qualbench_case", None)
        if wire is not None:
            self.records[wire["case_id"]] = CaseRecord.from_wire(wire)
            return
        if not report.failed:
            return
        case = self._case_of(report.nodeid)
        if case is not None and case.case_id not in self.records:
            # No record means the case never finished (a crashed worker, a failing
            # setup): it scores 0 rather than leaving the denominators.
            self.records[case.case_id] = error_record(
                case, f"{report.when}: {report.longreprtext[-500:]}"
            )

    # xdist hooks: optional, so the plugin also loads where xdist is not installed.
    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_setupnodes(self, config: pytest.Config, specs: Sequence[Any]) -> None:
        """Fill the index cache before the workers start, so they load it, not each build.

        The controller runs no case, so it keeps no engine: only the build's time.
        """
        bench_run = self.config.stash[bench_run_key]
        if bench_run.index_cache is None:
            return
        for content_type in sorted({entry.content_type for entry in self.fixture_set.entries()}):
            try:
                indexed = bench_run.indexed(content_type)
            except Exception:
                # The worker that runs this content type's first case shows the error.
                continue
            if not indexed.cached:
                self.index_ms[content_type] = indexed.milliseconds
                self.built_indexes.add(content_type)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", {}).get("qualbench")
        if not output:
            return
        for content_type, index_ms in output["index_ms"].items():
            cached = content_type in output["cached_indexes"]
            (self.cached_indexes if cached else self.built_indexes).add(content_type)
            if not (cached and content_type in self.built_indexes):
                # A build's time stands for the run, not the workers' loads after it.
                self.index_ms[content_type] = max(index_ms, self.index_ms.get(content_type, 0.0))
        self.retrieved_tokens.update(output["retrieved_tokens"])
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

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self.records:
            return
        bench_run = self.config.stash[bench_run_key]
        if bench_run.corpora:
            self.index_ms = bench_run.index_times()
            self.cached_indexes = set(bench_run.cached_indexes())
            self.engine = engine_info(bench_run)
            self.retrieved_tokens.update(retrieved_tokens(bench_run, self.section_options.tokens_k))
        full_run = set(self.records) >= set(self.cases)
        ran = [self.cases[case_id] for case_id in sorted(self.records) if case_id in self.cases]
        sections = extra_sections(bench_run, ran, self.section_options, self.retrieved_tokens)
        self.report = build_report(
            list(self.records.values()),
            dataset_hash=self.fixture_set.dataset_hash,
            metadata=self._metadata(),
            index_ms=self.index_ms,
            floors=self.floors,
            floors_enforced=full_run,
            sections=sections,
            cached=self.cached_indexes - self.built_indexes,
        )
        self.verdicts = check_floors(self.report, self.floors, enforced=full_run)
        write_report(self.report_path, self.report)
        gate_failed = self.lint_failed or any(verdict.ok is False for verdict in self.verdicts)
        baseline: str | None = self.config.option.qualbench_compare
        if baseline:
            gate_failed |= self._compare(self.config.invocation_params.dir / baseline, self.report)
        html_path: str | None = self.config.option.qualbench_html
        if html_path:
            self._write_html(self.config.invocation_params.dir / html_path, self.report)
        if gate_failed and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _compare(self, baseline: Path, report: dict[str, Any]) -> bool:
        """Compare with the baseline report; True when that fails the run."""
        from pytest_qualbench.compare.diff import compare_reports
        from pytest_qualbench.compare.loading import ReportError, load_report
        from pytest_qualbench.compare.records import IncomparableReports
        from pytest_qualbench.compare.render import comparison_to_json, render_comparison

        try:
            base = load_report(baseline)
        except ReportError as exc:
            fail: bool = self.config.option.qualbench_compare_missing == "fail"
            self.compare_lines = [f"baseline not used: {exc}" + ("" if fail else " (warning only)")]
            return fail
        try:
            comparison = compare_reports(base, report)
        except IncomparableReports as exc:
            self.compare_lines = [f"cannot compare with {baseline}: {exc}"]
            return True
        self.compare_lines = render_comparison(comparison, "text").splitlines()
        self.baseline = (base, comparison_to_json(comparison))
        return comparison.exit_code != 0

    def _write_html(self, path: Path, report: dict[str, Any]) -> None:
        # The extra's presence was checked before collection (session.start_benchmark).
        from pytest_qualbench.report.html.render import render_html, write_html

        base, comparison = self.baseline if self.baseline is not None else (None, None)
        page = render_html([report] if base is None else [base, report], comparison=comparison)
        write_html(path, page)
        self.html_line = f"html report: {path}"

    def _metadata(self) -> dict[str, Any]:
        engine = self.engine or {"name": None, "config": {}, "lists_chunks": True}
        return {
            "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "git": _git_info(self.config.rootpath),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "plugin_version": __version__,
            "engine": {
                "name": engine["name"],
                "config": engine["config"],
                "warnings": engine.get("warnings", []),
            },
            "relevant_set": "chunks" if engine["lists_chunks"] else "returned",
            "selection": {"cases_in_fixture_set": len(self.cases), "cases_run": len(self.records)},
        }

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.report is None:
            return
        terminalreporter.write_sep("=", "qualbench")
        verbosity = self.config.option.verbose
        for summary_line in summary(self.report, self.report_path, self.verdicts, verbosity):
            markup = {summary_line.colour: True} if summary_line.colour else {}
            terminalreporter.write_line(summary_line.text, bold=summary_line.bold, **markup)
        for warning in self.report["metadata"]["engine"]["warnings"]:
            terminalreporter.write_line(f"engine warning: {warning}", yellow=True)
        if any(not record.layers_reported for record in self.records.values()):
            terminalreporter.write_line("layer checks skipped: the engine labels no layers")
        if self.html_line is not None:
            terminalreporter.write_line(self.html_line)
        if self.lint_lines:
            terminalreporter.write_sep("-", "qualbench lint")
            for line in self.lint_lines:
                terminalreporter.write_line(line)
        if self.compare_lines:
            terminalreporter.write_sep("-", "qualbench compare")
            for line in self.compare_lines:
                terminalreporter.write_line(line)


def _git_info(root: Path) -> dict[str, str] | None:
    """The commit and branch of the checkout, when there is one."""

    def git(*args: str) -> str | None:
        try:
            completed = subprocess.run(
                ["git", *args],
                cwd=root,
                capture_output=True,
                text=True,
                timeout=5,
                check=False,
                env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return completed.stdout.strip() if completed.returncode == 0 else None

    sha = git("rev-parse", "HEAD")
    if sha is None:
        return None
    return {"sha": sha, "branch": git("rev-parse", "--abbrev-ref", "HEAD") or ""}
