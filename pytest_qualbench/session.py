"""The benchmark session: collection, per-case reports, and the controller's report.

Loaded and registered by `plugin.py` only when the benchmark is on, so a
project's ordinary test runs never import any of this.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_qualbench import __version__
from pytest_qualbench.fixtures import (
    CONTENT_TYPES,
    Case,
    FixtureSet,
    discover_fixture_files,
    load_fixture_set,
)
from pytest_qualbench.index_cache import CACHE_DIR
from pytest_qualbench.items import CaseItem, QualbenchFile, bench_run_key
from pytest_qualbench.judge import CHECKS, CaseRecord, error_record, parse_checks
from pytest_qualbench.plugin import positive_int
from pytest_qualbench.rankers import (
    RankerSpecError,
    resolve_ranker,
)
from pytest_qualbench.report import (
    Floor,
    FloorVerdict,
    build_report,
    check_floors,
    parse_floor,
    summary_lines,
    write_report,
)
from pytest_qualbench.runner import (
    DEFAULT_ENGINE,
    BenchRun,
    EngineFactory,
    EngineSpecError,
    load_engine_factory,
)
from pytest_qualbench.sections import SectionOptions, extra_sections, retrieved_tokens
from pytest_qualbench.tokens import DEFAULT_TOKENS_K

reporter_key = pytest.StashKey["QualbenchReporter"]()


def start_benchmark(config: pytest.Config, paths: Sequence[Path]) -> None:
    """Load the fixture set, make the run's state, and register the benchmark's hooks."""
    config.addinivalue_line("markers", "qualbench: a qualbench search case")
    for content_type in CONTENT_TYPES:
        config.addinivalue_line(
            "markers", f"{content_type}: a qualbench case over {content_type} content"
        )
    files = discover_fixture_files(paths)
    if not files:
        shown = ", ".join(str(path) for path in paths)
        raise pytest.UsageError(f"qualbench: no .jsonl fixture files found in {shown}")
    fixture_set = load_fixture_set(files, config.rootpath)
    bench_run = BenchRun(
        fixture_set=fixture_set,
        engine_factory=_engine_factory(config),
        limit=config.option.qualbench_limit or _ini_value(config, "qualbench_limit", positive_int),
        checks=config.option.qualbench_checks
        or _ini_value(config, "qualbench_checks", _ini_checks),
    )
    config.stash[bench_run_key] = bench_run
    config.pluginmanager.register(sys.modules[__name__], "qualbench-session")
    # Only the controller (or a serial run) aggregates; xdist workers just run cases.
    if not hasattr(config, "workerinput"):
        reporter = QualbenchReporter(
            config,
            fixture_set,
            _floors(config),
            _report_path(config),
            section_options=_section_options(config),
        )
        config.stash[reporter_key] = reporter
        config.pluginmanager.register(reporter, "qualbench-reporter")


def _engine_factory(config: pytest.Config) -> EngineFactory:
    spec = config.option.qualbench_engine or config.getini("qualbench_engine") or DEFAULT_ENGINE
    try:
        default_factory = load_engine_factory(spec)
    except EngineSpecError as exc:
        raise pytest.UsageError(f"qualbench: {exc}") from None

    def make_engine(content_type: str) -> Any:
        engine = config.hook.pytest_qualbench_make_engine(config=config, content_type=content_type)
        return engine if engine is not None else default_factory()

    return make_engine


def _section_options(config: pytest.Config) -> SectionOptions:
    try:
        rankers = tuple((name, resolve_ranker(name)) for name in config.option.qualbench_rankers)
    except RankerSpecError as exc:
        raise pytest.UsageError(f"qualbench: {exc}") from None
    hook_engines = config.hook.pytest_qualbench_make_engine.get_hookimpls()
    return SectionOptions(
        rankers=rankers,
        tokens_k=_tokens_k(config),
        start_times=config.option.qualbench_start_times,
        engine_spec=None
        if hook_engines
        else config.option.qualbench_engine or config.getini("qualbench_engine") or DEFAULT_ENGINE,
        cache_dir=config.rootpath / CACHE_DIR,
        root=config.rootpath,
    )


def _tokens_k(config: pytest.Config) -> int:
    option: int | None = config.option.qualbench_tokens_k
    return DEFAULT_TOKENS_K if option is None else option


def _ini_checks(text: str) -> frozenset[str]:
    """The ini's checks; empty means all of them."""
    return parse_checks(text) if text.strip() else frozenset(CHECKS)


def _ini_value(config: pytest.Config, name: str, parse: Any) -> Any:
    try:
        return parse(str(config.getini(name)))
    except argparse.ArgumentTypeError as exc:
        raise pytest.UsageError(f"qualbench: ini {name}: {exc}") from None


def _floors(config: pytest.Config) -> list[Floor]:
    """Floors from the ini file, overridden metric by metric by the command line."""
    floors: dict[str, Floor] = {}
    for line in config.getini("qualbench_floors"):
        try:
            floor = parse_floor(line)
        except argparse.ArgumentTypeError as exc:
            raise pytest.UsageError(f"qualbench: ini qualbench_floors: {exc}") from None
        floors[floor.name] = floor
    for floor in config.option.qualbench_floors:
        floors[floor.name] = floor
    return list(floors.values())


def _report_path(config: pytest.Config) -> Path:
    option: str | None = config.option.qualbench_report
    if option:
        return config.invocation_params.dir / option
    return config.rootpath / str(config.getini("qualbench_report"))


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> QualbenchFile | None:
    bench_run = parent.config.stash.get(bench_run_key, None)
    if bench_run is None or file_path.suffix != ".jsonl":
        return None
    if bench_run.fixture_set.file(file_path) is None:
        return None
    # Named by stem: `-k` matches node names as substrings, and every "*.jsonl"
    # name would otherwise match `-k json`.
    return QualbenchFile.from_parent(parent, path=file_path, name=file_path.stem)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if isinstance(item, CaseItem) and call.when == "call" and item.record is not None:
        # A report attribute travels with the report from xdist workers to the controller.
        report.qualbench_case = item.record.to_wire()
    return report


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    bench_run = config.stash.get(bench_run_key, None)
    if bench_run is not None and hasattr(config, "workeroutput"):
        config.workeroutput["qualbench"] = {
            "index_ms": bench_run.index_times(),
            "engine": _engine_info(bench_run),
            "retrieved_tokens": retrieved_tokens(bench_run, _tokens_k(config)),
        }


def _engine_info(bench_run: BenchRun) -> dict[str, Any] | None:
    """Name, config and indexing warnings of the engines this process built."""
    for corpus in bench_run.corpora.values():
        engine = corpus.engine
        config = getattr(engine, "config", {})
        return {
            "name": f"{type(engine).__module__}:{type(engine).__qualname__}",
            "config": dict(config) if isinstance(config, dict) else {},
            "lists_chunks": bench_run.lists_chunks(),
            "warnings": sorted(
                str(warning)
                for indexed in bench_run.corpora.values()
                for warning in getattr(indexed.engine, "warnings", ())
            ),
        }
    return None


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
        from pytest_qualbench.lint import has_errors, lint_fixture_set

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

    # An xdist hook: optional, so the plugin also loads where xdist is not installed.
    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", {}).get("qualbench")
        if not output:
            return
        for content_type, index_ms in output["index_ms"].items():
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
            self.engine = _engine_info(bench_run)
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
        from pytest_qualbench.compare import (
            IncomparableReports,
            ReportError,
            compare_reports,
            comparison_to_json,
            load_report,
            render_comparison,
        )

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
        from pytest_qualbench.html_report import HtmlExtraMissing, render_html, write_html

        base, comparison = self.baseline if self.baseline is not None else (None, None)
        try:
            page = render_html([report] if base is None else [base, report], comparison=comparison)
        except HtmlExtraMissing as exc:
            self.html_line = f"html report not written: {exc}"
            return
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
        for line in summary_lines(self.report, self.report_path):
            terminalreporter.write_line(line)
        selection = self.report["metadata"]["selection"]
        if selection["cases_run"] < selection["cases_in_fixture_set"]:
            terminalreporter.write_line(
                f"floors not enforced: {selection['cases_run']} of "
                f"{selection['cases_in_fixture_set']} cases ran"
            )
        for warning in self.report["metadata"]["engine"]["warnings"]:
            terminalreporter.write_line(f"engine warning: {warning}", yellow=True)
        if any(not record.layers_reported for record in self.records.values()):
            terminalreporter.write_line("layer checks skipped: the engine labels no layers")
        for verdict in self.verdicts:
            if verdict.ok is False:
                terminalreporter.write_line(verdict.describe(), red=True, bold=True)
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
