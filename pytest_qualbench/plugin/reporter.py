"""The controller's reporter: gathers case records, writes the report, enforces floors.

Registered on the controller (or in a serial run) only; xdist workers just run
cases and send their records along with their test reports.
"""

from __future__ import annotations

import datetime
import errno
import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_qualbench import __version__
from pytest_qualbench.evaluation.judge import CaseRecord, error_record
from pytest_qualbench.evaluation.outcomes import not_checked_lines
from pytest_qualbench.evaluation.runner import (
    EngineStartupError,
    close_problems_line,
    engine_info,
)
from pytest_qualbench.fixtures.schema import CHECKS, Case, FixtureSet
from pytest_qualbench.plugin.engine_config import startup_message
from pytest_qualbench.plugin.items import bench_run_key
from pytest_qualbench.report.build import build_report, subset_reason
from pytest_qualbench.report.floors import Floor, FloorVerdict, check_floors
from pytest_qualbench.report.libraries import library_versions
from pytest_qualbench.report.terminal import summary
from pytest_qualbench.report.writing import partial_path, subset_path, write_report
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
        html_path: Path | None = None,
        baseline_path: Path | None = None,
        config_warning: str | None = None,
        report_named: bool = False,
        selected_by: Sequence[str] = (),
    ) -> None:
        self.config_warning = config_warning
        # --qualbench-report named the target: a subset run writes there too.
        self.report_named = report_named
        self.selected_by = tuple(selected_by)
        self.subset = False
        # The engine could not start (plugin.session): no report, one usage error.
        self.startup_error: str | None = None
        self.config = config
        self.html_path = html_path
        self.baseline_path = baseline_path
        # Read before anything runs or is written, so no output of this run can replace it.
        self.base = _read_baseline(baseline_path)
        self.section_options = section_options
        self.fixture_set = fixture_set
        self.floors = floors
        self.report_path = report_path
        self.cases: dict[str, Case] = {case.case_id: case for case in fixture_set.cases()}
        self.records: dict[str, CaseRecord] = {}
        # Tokens of each positive case's top-k results, counted in the process that ran it.
        self.retrieved_tokens: dict[str, int] = {}
        self.tokens_error: str | None = None
        # Node id -> case id, from the reports of the item itself (xdist's crash report
        # carries only the node id, and a case_id may contain "::").
        self.case_of_node: dict[str, str] = {}
        self.written_path: Path | None = None
        # An output that could not be written (a full disk, a read-only mount): one
        # line each, the run's last, and the exit status says so.
        self.write_errors: list[str] = []
        self.session: pytest.Session | None = None
        # Why no report was written, when none was.
        self.unwritten: str | None = None
        self.unfinished: str | None = None
        self.index_ms: dict[str, float] = {}
        self.warmup_ms: dict[str, float] = {}
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
        # Under -q each optional section is its verdict alone (pytest_terminal_summary).
        self.lint_verdict = ""
        self.compare_verdict = ""
        self.lint_failed = False
        self.gate_regressions = ""
        # Engines the workers could not close (a serial run shows its own at unconfigure).
        self.close_problems: list[str] = []

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not self.config.option.qualbench_lint:
            return
        from pytest_qualbench.authoring.lint import ERROR, has_errors, lint_fixture_set

        bench_run = self.config.stash[bench_run_key]
        try:
            findings = lint_fixture_set(self.fixture_set, bench_run.engine_factory)
        except EngineStartupError as exc:
            self.startup_error = startup_message(
                self.config, exc, "no case ran and no report was written"
            )
            raise pytest.UsageError(self.startup_error) from None
        self.lint_lines = [str(finding) for finding in findings] or ["no findings"]
        self.lint_failed = has_errors(findings)
        errors = sum(1 for finding in findings if finding.level == ERROR)
        self.lint_verdict = (
            f"lint: {len(findings)} finding(s), {errors} error(s)"
            if findings
            else "lint: no findings"
        )

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
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

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.session = session
        if self.startup_error is not None:
            return  # no case ran: nothing to report, and the last report stays
        if session.exitstatus == pytest.ExitCode.USAGE_ERROR and not self.records:
            return  # pytest refused the command line (a path that does not exist): no run
        bench_run = self.config.stash[bench_run_key]
        if bench_run.corpora:
            self.index_ms = bench_run.index_times()
            self.warmup_ms = bench_run.warmup_times()
            self.cached_indexes = set(bench_run.cached_indexes())
            self.engine = engine_info(bench_run)
            tokens = retrieved_tokens(bench_run, self.section_options.tokens_k)
            self.retrieved_tokens.update(tokens.counts)
            self.tokens_error = self.tokens_error or tokens.error
        self.unfinished = _unfinished(session, bool(self.records))
        self.subset = not set(self.records) >= set(self.cases)
        full_run = not self.subset and self.unfinished is None
        ran = [self.cases[case_id] for case_id in sorted(self.records) if case_id in self.cases]
        sections = extra_sections(
            bench_run, ran, self.section_options, self.retrieved_tokens, self.tokens_error
        )
        self.report = build_report(
            list(self.records.values()),
            dataset_hash=self.fixture_set.dataset_hash,
            dataset_files=[digest.to_json() for digest in self.fixture_set.dataset_files],
            metadata=self._metadata(),
            index_ms=self.index_ms,
            warmup_ms=self.warmup_ms,
            floors=self.floors,
            floors_enforced=full_run,
            sections=sections,
            cached=self.cached_indexes - self.built_indexes,
            complete=self.unfinished is None,
        )
        self.verdicts = check_floors(self.report, self.floors, enforced=full_run)
        self.written_path = self._write_report(self.report)
        if self.unfinished is not None:
            # Nothing to gate on: pytest's own status already says the run did not finish.
            return
        gate_failed = self.lint_failed or any(verdict.ok is False for verdict in self.verdicts)
        if self.baseline_path is not None:
            gate_failed |= self._compare(self.baseline_path, self.report)
        if self.html_path is not None:
            self._write_html(self.html_path, self.report)
        if gate_failed and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _write_report(self, report: dict[str, Any]) -> Path | None:
        """A complete run of every case replaces the report; any other writes a sibling.

        A run that did not finish writes `report.partial.json`; one that ran only some
        cases (`-k`, `-m`, node ids...) `report.subset.json`, unless --qualbench-report
        named its target. The full report, the baseline CI and qualstat read, stays.
        None when it cannot be written: the file there (if any) is left whole.
        """
        partial = partial_path(self.report_path)
        if self.unfinished is not None:
            target = partial
        elif self.subset and not self.report_named:
            target = subset_path(self.report_path)
            if self.baseline_path is not None and same_file(target, self.baseline_path):
                self.unwritten = f"{target} is the baseline (--qualbench-compare)"
                return None
        else:
            target = self.report_path
        try:
            write_report(target, report)
            if target != partial:
                # A partial report left by an earlier run must not outlive a complete one.
                partial.unlink(missing_ok=True)
        except OSError as exc:
            self.write_errors.append(unwritable("report", target, exc))
            return None
        return target

    def _compare(self, baseline: Path, report: dict[str, Any]) -> bool:
        """Compare with the baseline report; True when that fails the run."""
        from pytest_qualbench.compare.diff import compare_reports
        from pytest_qualbench.compare.headline import regression_summary
        from pytest_qualbench.compare.records import IncomparableReports
        from pytest_qualbench.compare.render import comparison_to_json, render_comparison

        base = self.base
        if isinstance(base, str):
            fail: bool = self.config.option.qualbench_compare_missing == "fail"
            self.compare_lines = [
                f"baseline not used: {base}" + ("" if fail else " (warning only)")
            ]
            return fail
        assert base is not None, "read in __init__ whenever a baseline path is given"
        try:
            comparison = compare_reports(base, report)
        except IncomparableReports as exc:
            self.compare_lines = [f"cannot compare with {baseline}: {exc}"]
            self.gate_regressions = "no comparison possible"
            if base["dataset_hash"] != report["dataset_hash"]:
                self.compare_lines += DIFFERENT_FIXTURES_REMEDY
            return True
        self.compare_lines = render_comparison(comparison, "text").splitlines()
        self.baseline = (base, comparison_to_json(comparison))
        if comparison.regressions:
            self.gate_regressions = regression_summary(comparison)
        self.compare_verdict = (
            f"compare with {baseline}: {regression_summary(comparison)}"
            f"{'' if comparison.exit_code == 0 else ', the run fails'}"
        )
        return comparison.exit_code != 0

    def _write_html(self, path: Path, report: dict[str, Any]) -> None:
        # The extra's presence was checked before collection (session.start_benchmark).
        from pytest_qualbench.report.html.render import render_html, write_html

        base, comparison = self.baseline if self.baseline is not None else (None, None)
        page = render_html([report] if base is None else [base, report], comparison=comparison)
        try:
            write_html(path, page)
        except OSError as exc:
            self.write_errors.append(unwritable("HTML report", path, exc))
            return
        self.html_line = f"html report: {path}"

    def _metadata(self) -> dict[str, Any]:
        engine = self.engine or {"name": None, "config": {}, "lists_chunks": True}
        bench_run = self.config.stash[bench_run_key]
        return {
            "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "git": _git_info(self.config.rootpath),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "plugin_version": __version__,
            "engine": {
                "name": engine["name"],
                "config": engine["config"],
                "options": engine.get("options", {}),
                "warnings": engine.get("warnings", []),
            },
            "libraries": library_versions(engine["name"]),
            "limit": bench_run.limit,
            "checks": [check for check in CHECKS if check in bench_run.checks],
            "relevant_set": "chunks" if engine["lists_chunks"] else "returned",
            "selection": {
                "cases_in_fixture_set": len(self.cases),
                "cases_run": len(self.records),
                "subset": self.subset,
                "selected_by": list(self.selected_by),
            },
        }

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.report is None:
            return
        terminalreporter.write_sep("=", "qualbench")
        verbosity = self.config.option.verbose
        for summary_line in summary(self.report, self.written_path, self.verdicts, verbosity):
            markup = {summary_line.colour: True} if summary_line.colour else {}
            terminalreporter.write_line(summary_line.text, bold=summary_line.bold, **markup)
        if self.config_warning is not None:
            terminalreporter.write_line(self.config_warning, red=True, bold=True)
        if self.unfinished is not None and self.written_path is not None:
            terminalreporter.write_line(
                f"run did not finish ({self.unfinished}): partial report (complete: false) "
                f"written to {self.written_path}; {self.report_path} left as it was",
                red=True,
                bold=True,
            )
        elif self.unwritten is not None:
            terminalreporter.write_line(
                f"subset run ({subset_reason(self.report)}): no report written, {self.unwritten}",
                red=True,
            )
        elif self.written_path != self.report_path:
            terminalreporter.write_line(
                f"subset run ({subset_reason(self.report)}): report written to "
                f"{self.written_path}; {self.report_path} left as it was",
                yellow=True,
            )
        for warning in self.report["metadata"]["engine"]["warnings"]:
            terminalreporter.write_line(f"engine warning: {warning}", yellow=True)
        for line in not_checked_lines(record.layer_not_checked for record in self.records.values()):
            terminalreporter.write_line(line)
        if self.close_problems:
            terminalreporter.write_line(close_problems_line(self.close_problems), yellow=True)
        if self.html_line is not None:
            terminalreporter.write_line(self.html_line)
        # -q: the gate's verdicts only; an optional section is one line or none (the
        # rankers, tokens and start-time tables, report.terminal), in full by default.
        quiet = verbosity < 0
        if self.lint_lines and quiet:
            terminalreporter.write_line(self.lint_verdict)
        elif self.lint_lines:
            terminalreporter.write_sep("-", "qualbench lint")
            for line in self.lint_lines:
                terminalreporter.write_line(line)
        if self.compare_lines and quiet:
            terminalreporter.write_line(self.compare_verdict or self.compare_lines[0])
        elif self.compare_lines:
            terminalreporter.write_sep("-", "qualbench compare")
            for line in self.compare_lines:
                terminalreporter.write_line(line)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """The last line of the run: red, naming what failed the gate, after pytest's counts."""
        reasons = [verdict.describe() for verdict in self.verdicts if verdict.ok is False]
        if self.lint_failed:
            reasons.append("lint errors")
        if self.gate_regressions:
            reasons.append(f"{self.gate_regressions} against {self.baseline_path}")
        terminal = config.pluginmanager.get_plugin("terminalreporter")
        if reasons and terminal is not None:
            terminal.write_sep("=", "qualbench FAILED: " + "; ".join(reasons), red=True, bold=True)
        if not self.write_errors:
            return
        if self.session is not None:
            # Not a failing case: the run's output is missing, as with any internal error.
            self.session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        for error in self.write_errors:
            if terminal is not None:
                terminal.write_line(error, red=True, bold=True)
            else:
                print(error, file=sys.stderr)


DIFFERENT_FIXTURES_REMEDY = [
    "To gate a change that edits fixtures, make the baseline from these fixture files: "
    "run the base engine on these fixtures (check out the base commit, put this run's "
    "fixture files in its place, run `pytest --qualbench --qualbench-report=base.json` "
    "there; docs/qualstat.md shows the CI recipe).",
    "To compare only the cases both runs share: qualstat --intersect BASE.json REPORT.json",
]


def unwritable(what: str, path: Path, exc: OSError) -> str:
    """One line: which output, where, why, and what became of the file already there."""
    cause = exc.strerror or str(exc)
    code = errno.errorcode.get(exc.errno) if exc.errno is not None else None
    if code is not None:
        cause = f"{cause} ({code})"
    kept = f"the {what} already there is left as it was" if path.exists() else "nothing written"
    return f"qualbench ERROR: cannot write the {what} {path}: {cause}; {kept}"


def same_file(path: Path, other: Path) -> bool:
    return path.resolve() == other.resolve()


def _read_baseline(path: Path | None) -> dict[str, Any] | str | None:
    """The baseline report, the reason it cannot be used, or None when none was asked for."""
    if path is None:
        return None
    from pytest_qualbench.compare.loading import ReportError, load_report

    try:
        return load_report(path)
    except ReportError as exc:
        return str(exc)


def _unfinished(session: pytest.Session, any_case_ran: bool) -> str | None:
    """Why the run did not finish, or None when every selected case ran."""
    if session.exitstatus == pytest.ExitCode.INTERRUPTED:
        return "interrupted"
    if session.shouldstop or session.shouldfail:
        return f"stopped early: {session.shouldstop or session.shouldfail}"
    if not any_case_ran:
        return "no case ran"
    return None


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
