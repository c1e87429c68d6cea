"""The controller's reporter: collect, gate, outputs, called in that order at session end.

Registered on the controller (or in a serial run) only; xdist workers just run
cases and send their records along with their test reports. The three parts:
`plugin.collect` takes the records in, `report.gate` judges the floors and the
comparison once into a frozen `Verdict`, `plugin.outputs` writes the JSON
report, the HTML page and the terminal section from it.
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_qualbench import __version__
from pytest_qualbench.evaluation.outcomes import not_checked_lines
from pytest_qualbench.evaluation.runner import EngineStartupError
from pytest_qualbench.fixtures.schema import CHECKS, FixtureSet
from pytest_qualbench.plugin.collect import Collected, Collector
from pytest_qualbench.plugin.engine_config import startup_message
from pytest_qualbench.plugin.items import bench_run_key
from pytest_qualbench.plugin.outputs import Lint, Outputs, Written
from pytest_qualbench.report.build import build_report
from pytest_qualbench.report.floors import Floor
from pytest_qualbench.report.gate import Verdict, judge_run
from pytest_qualbench.report.libraries import library_versions
from pytest_qualbench.report.model import Git, Metadata, Report
from pytest_qualbench.sections.extra import SectionOptions, extra_sections


class QualbenchReporter:
    """The controller's session end: the collector's records, the gate's verdict, the outputs."""

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
        self.config = config
        self.fixture_set = fixture_set
        self.floors = floors
        self.section_options = section_options
        self.selected_by = tuple(selected_by)
        self.baseline_path = baseline_path
        # Read before anything runs or is written, so no output of this run can replace it.
        self.base = _read_baseline(baseline_path)
        self.collector = Collector(fixture_set)
        config.pluginmanager.register(self.collector, "qualbench-collector")
        self.outputs = Outputs(report_path, html_path, baseline_path, config_warning, report_named)
        self.lint = Lint()
        self.session: pytest.Session | None = None
        self.verdict: Verdict | None = None
        self.written: Written | None = None
        # pytest shows no terminal summary after an internal error (outputs.final_lines).
        self.summarised = False

    @property
    def startup_error(self) -> str | None:
        """Why the engine could not start (plugin.session, or a worker): no report then."""
        return self.collector.startup_error

    @startup_error.setter
    def startup_error(self, message: str | None) -> None:
        self.collector.startup_error = message

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
        errors = sum(1 for finding in findings if finding.level == ERROR)
        self.lint = Lint(
            tuple(str(finding) for finding in findings) or ("no findings",),
            f"lint: {len(findings)} finding(s), {errors} error(s)"
            if findings
            else "lint: no findings",
            has_errors(findings),
        )

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.session = session
        if self.startup_error is not None:
            return  # no case ran: nothing to report, and the last report stays
        if session.exitstatus == pytest.ExitCode.USAGE_ERROR and not self.collector.records:
            return  # pytest refused the command line (a path that does not exist): no run
        bench_run = self.config.stash[bench_run_key]
        collected = self.collector.collected(bench_run, self.section_options.tokens_k)
        self.verdict = self._judged(session, collected)
        self.written = self.outputs.write(self.verdict)
        if self.verdict.fails and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _judged(self, session: pytest.Session, collected: Collected) -> Verdict:
        """The report of the collected records, through the gate."""
        unfinished = _unfinished(session, collected)
        sections = extra_sections(
            self.config.stash[bench_run_key],
            self.collector.ran(),
            self.section_options,
            collected.retrieved_tokens,
            collected.tokens_error,
        )
        report = build_report(
            list(collected.records.values()),
            dataset_hash=self.fixture_set.dataset_hash,
            dataset_files=[digest.to_json() for digest in self.fixture_set.dataset_files],
            metadata=self._metadata(collected),
            index_ms=collected.index_ms,
            warmup_ms=collected.warmup_ms,
            sections=sections,
            cached=collected.cached,
            complete=unfinished is None,
        )
        baseline = None
        if self.baseline_path is not None:
            assert self.base is not None, "read in __init__ whenever a baseline path is given"
            baseline = (self.baseline_path, self.base)
        return judge_run(
            report,
            self.floors,
            unfinished=unfinished,
            subset=collected.subset,
            lint_failed=self.lint.failed,
            baseline=baseline,
            missing_baseline_fails=self.config.option.qualbench_compare_missing == "fail",
        )

    def _metadata(self, collected: Collected) -> Metadata:
        engine: Mapping[str, Any] = collected.engine or {
            "name": None,
            "config": {},
            "lists_chunks": True,
        }
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
                "cases_in_fixture_set": len(self.collector.cases),
                "cases_run": len(collected.records),
                "subset": collected.subset,
                "selected_by": list(self.selected_by),
            },
        }

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.verdict is None or self.written is None:
            return
        self.summarised = True
        records = self.collector.records.values()
        self.outputs.terminal_summary(
            terminalreporter,
            self.verdict,
            self.written,
            verbosity=self.config.option.verbose,
            not_checked=not_checked_lines(record.layer_not_checked for record in records),
            close_problems=self.collector.close_problems,
            lint=self.lint,
        )

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.verdict is not None and self.written is not None:
            self.outputs.final_lines(
                config, self.verdict, self.written, self.session, summarised=self.summarised
            )


def _read_baseline(path: Path | None) -> Report | str | None:
    """The baseline report, the reason it cannot be used, or None when none was asked for."""
    if path is None:
        return None
    from pytest_qualbench.compare.loading import ReportError, load_report

    try:
        return load_report(path)
    except ReportError as exc:
        return str(exc)


def _unfinished(session: pytest.Session, collected: Collected) -> str | None:
    """Why the run did not finish, or None when every selected case ran."""
    if session.exitstatus == pytest.ExitCode.INTERRUPTED:
        return "interrupted"
    if session.exitstatus == pytest.ExitCode.INTERNAL_ERROR:
        # A hook or xdist failed mid-run: the cases it never reported are not a subset.
        return "internal error"
    if session.shouldstop or session.shouldfail:
        return f"stopped early: {session.shouldstop or session.shouldfail}"
    if not collected.records:
        return "no case ran"
    if collected.never_ran:
        return f"{collected.never_ran} of {collected.selected} selected tests never ran"
    return None


def _git_info(root: Path) -> Git | None:
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
