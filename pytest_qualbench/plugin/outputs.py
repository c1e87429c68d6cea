"""Outputs: the JSON report, the HTML page and the terminal section, each from the verdict.

The third of the reporter's three parts (collect, gate, outputs). Nothing here
judges: every output reads the same frozen `report.gate.Verdict`.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_qualbench.evaluation.runner import close_problems_line
from pytest_qualbench.report.build import subset_reason
from pytest_qualbench.report.gate import Verdict
from pytest_qualbench.report.terminal import summary
from pytest_qualbench.report.writing import partial_path, subset_path, write_report


@dataclass(frozen=True)
class Written:
    """Where this run's outputs went, and what could not be written."""

    # None when no report was written (`unwritten` or an error says why).
    report: Path | None
    html: Path | None = None
    # Why a subset run wrote no report (its target is the baseline).
    unwritten: str | None = None
    # One line per output that could not be written (a full disk, a read-only mount).
    errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class Lint:
    """`--qualbench-lint`'s findings, judged before any case ran."""

    lines: tuple[str, ...] = ()
    # The findings as one line, for -q.
    verdict_line: str = ""
    failed: bool = False


@dataclass(frozen=True)
class Outputs:
    """The run's output paths and what the terminal section adds to the verdict."""

    report_path: Path
    html_path: Path | None = None
    baseline_path: Path | None = None
    config_warning: str | None = None
    # --qualbench-report named the target: a subset run writes there too.
    report_named: bool = False

    def write(self, verdict: Verdict) -> Written:
        """The JSON report, then (for a finished run) the HTML page."""
        report_file, unwritten, errors = self._write_report(verdict)
        if verdict.unfinished is not None or self.html_path is None:
            return Written(report_file, None, unwritten, errors)
        # The extra's presence was checked before collection (session.start_benchmark).
        from pytest_qualbench.report.html.render import render_html, write_html

        baseline = verdict.baseline
        if baseline is None or baseline.base is None:
            page = render_html([verdict.report])
        else:
            page = render_html([baseline.base, verdict.report], comparison=baseline.comparison)
        try:
            write_html(self.html_path, page)
        except OSError as exc:
            errors += (unwritable("HTML report", self.html_path, exc),)
            return Written(report_file, None, unwritten, errors)
        return Written(report_file, self.html_path, unwritten, errors)

    def _write_report(self, verdict: Verdict) -> tuple[Path | None, str | None, tuple[str, ...]]:
        """A complete run of every case replaces the report; any other writes a sibling.

        A run that did not finish writes `report.partial.json`; one that ran only some
        cases (`-k`, `-m`, node ids...) `report.subset.json`, unless --qualbench-report
        named its target. The full report, the baseline CI and qualstat read, stays.
        The path is None when nothing was written: the file there (if any) is left whole.
        """
        partial = partial_path(self.report_path)
        if verdict.unfinished is not None:
            target = partial
        elif verdict.subset and not self.report_named:
            target = subset_path(self.report_path)
            if self.baseline_path is not None and same_file(target, self.baseline_path):
                return None, f"{target} is the baseline (--qualbench-compare)", ()
        else:
            target = self.report_path
        try:
            write_report(target, verdict.report)
            if target != partial:
                # A partial report left by an earlier run must not outlive a complete one.
                partial.unlink(missing_ok=True)
        except OSError as exc:
            return None, None, (unwritable("report", target, exc),)
        return target, None, ()

    def terminal_summary(
        self,
        terminalreporter: Any,
        verdict: Verdict,
        written: Written,
        *,
        verbosity: int,
        not_checked: Sequence[str],
        close_problems: Sequence[str],
        lint: Lint,
    ) -> None:
        """The qualbench section: summary tables, warnings, lint and comparison."""
        terminalreporter.write_sep("=", "qualbench")
        report = verdict.report
        for summary_line in summary(report, written.report, list(verdict.floors), verbosity):
            markup = {summary_line.colour: True} if summary_line.colour else {}
            terminalreporter.write_line(summary_line.text, bold=summary_line.bold, **markup)
        if self.config_warning is not None:
            terminalreporter.write_line(self.config_warning, red=True, bold=True)
        unfinished = self.unfinished_line(verdict, written)
        if unfinished is not None:
            terminalreporter.write_line(unfinished, red=True, bold=True)
        elif written.unwritten is not None:
            terminalreporter.write_line(
                f"subset run ({subset_reason(report)}): no report written, {written.unwritten}",
                red=True,
            )
        elif written.report != self.report_path:
            terminalreporter.write_line(
                f"subset run ({subset_reason(report)}): report written to "
                f"{written.report}; {self.report_path} left as it was",
                yellow=True,
            )
        for warning in report["metadata"]["engine"]["warnings"]:
            terminalreporter.write_line(f"engine warning: {warning}", yellow=True)
        for line in not_checked:
            terminalreporter.write_line(line)
        if close_problems:
            terminalreporter.write_line(close_problems_line(close_problems), yellow=True)
        if written.html is not None:
            terminalreporter.write_line(f"html report: {written.html}")
        # -q: the gate's verdicts only; an optional section is one line or none (the
        # rankers, tokens and start-time tables, report.terminal), in full by default.
        quiet = verbosity < 0
        compare_lines = verdict.baseline.lines if verdict.baseline is not None else ()
        compare_line = verdict.baseline.verdict_line if verdict.baseline is not None else ""
        sections = (
            ("qualbench lint", lint.lines, lint.verdict_line),
            ("qualbench compare", compare_lines, compare_line),
        )
        for title, lines, verdict_line in sections:
            if lines and quiet:
                terminalreporter.write_line(verdict_line or lines[0])
            elif lines:
                terminalreporter.write_sep("-", title)
                for line in lines:
                    terminalreporter.write_line(line)

    def unfinished_line(self, verdict: Verdict, written: Written) -> str | None:
        """Where a run that did not finish put its report, or None for a finished run."""
        if verdict.unfinished is None or written.report is None:
            return None
        return (
            f"run did not finish ({verdict.unfinished}): partial report (complete: false) "
            f"written to {written.report}; {self.report_path} left as it was"
        )

    def final_lines(
        self,
        config: pytest.Config,
        verdict: Verdict,
        written: Written,
        session: pytest.Session | None,
        *,
        summarised: bool,
    ) -> None:
        """The run's last lines, after pytest's counts: what failed the gate, in red, then
        each output that could not be written (the exit status then says so).

        `summarised` is False when pytest showed no terminal summary (it skips it on an
        internal error): the partial report's line is then here, or nobody sees it.
        """
        reasons = verdict.reasons()
        terminal = config.pluginmanager.get_plugin("terminalreporter")
        unfinished = None if summarised else self.unfinished_line(verdict, written)
        if unfinished is not None and terminal is not None:
            terminal.write_line(unfinished, red=True, bold=True)
        if reasons and terminal is not None:
            terminal.write_sep("=", "qualbench FAILED: " + "; ".join(reasons), red=True, bold=True)
        if not written.errors:
            return
        if session is not None:
            # Not a failing case: the run's output is missing, as with any internal error.
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        for error in written.errors:
            if terminal is not None:
                terminal.write_line(error, red=True, bold=True)
            else:
                print(error, file=sys.stderr)


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
