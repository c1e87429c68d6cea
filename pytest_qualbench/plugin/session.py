"""The benchmark session: loading the fixture set, collection, per-case reports.

Loaded and registered by `pytest_qualbench.plugin` only when the benchmark is on, so a
project's ordinary test runs never import any of this.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_qualbench.evaluation.judge import parse_checks
from pytest_qualbench.evaluation.runner import (
    DEFAULT_ENGINE,
    BenchRun,
    close_problems_line,
    engine_info,
)
from pytest_qualbench.fixtures.discovery import discover_fixture_files
from pytest_qualbench.fixtures.loading import load_fixture_set
from pytest_qualbench.fixtures.schema import (
    CHECKS,
    FixtureSet,
    Vocabulary,
)
from pytest_qualbench.index_cache import CACHE_DIR, IndexCache
from pytest_qualbench.options import gain_name, positive_int, positive_seconds
from pytest_qualbench.plugin.configfile import unread_config_message, unread_project_config
from pytest_qualbench.plugin.engine_config import (
    configured_maker,
    configured_options,
    engine_factory,
    engine_maker,
    engine_vocabulary,
    ini_value,
    startup_message,
)
from pytest_qualbench.plugin.indexing import build_indexes, is_xdist_worker
from pytest_qualbench.plugin.items import CaseItem, QualbenchFile, bench_run_key
from pytest_qualbench.plugin.reporter import QualbenchReporter
from pytest_qualbench.plugin.termination import (
    handle_sigterm,
    terminated_status,
    worker_pid,
    worker_pids_key,
)
from pytest_qualbench.report.floors import Floor, absent_scope, parse_floor, scope_error
from pytest_qualbench.report.targets import UnsafeOutput, checked_output
from pytest_qualbench.report.writing import partial_path, subset_path
from pytest_qualbench.sections.extra import SectionOptions, retrieved_tokens
from pytest_qualbench.sections.rankers import (
    RankerSpecError,
    resolve_ranker,
)
from pytest_qualbench.sections.tokens import DEFAULT_TOKENS_K

reporter_key = pytest.StashKey["QualbenchReporter"]()
session_key = pytest.StashKey[pytest.Session]()
# An xdist worker's message for an engine that could not start, for the controller.
startup_error_key = pytest.StashKey[str]()


def start_benchmark(config: pytest.Config, paths: Sequence[Path]) -> None:
    """Load the fixture set, make the run's state, and register the benchmark's hooks."""
    engine_options = configured_options(config)
    maker, engine_keywords = configured_maker(config, engine_options)
    vocabulary = engine_vocabulary(config, maker)
    config.addinivalue_line("markers", "qualbench: a qualbench search case")
    for content_type in vocabulary.content_types:
        config.addinivalue_line(
            "markers", f"{content_type}: a qualbench case over {content_type} content"
        )
    _require_html_extra(config)
    controller = not hasattr(config, "workerinput")
    config_warning = _config_warning(config) if controller else None
    files = discover_fixture_files(paths)
    if not files:
        shown = ", ".join(str(path) for path in paths)
        hint = f"\n{config_warning}" if config_warning else ""
        raise pytest.UsageError(f"qualbench: no .jsonl fixture files found in {shown}{hint}")
    fixture_set = load_fixture_set(files, config.rootpath, vocabulary)
    bench_run = BenchRun(
        fixture_set=fixture_set,
        engine_factory=engine_factory(config, maker),
        engine_options=engine_keywords,
        limit=config.option.qualbench_limit or ini_value(config, "qualbench_limit", positive_int),
        checks=config.option.qualbench_checks or ini_value(config, "qualbench_checks", _ini_checks),
        vocabulary=vocabulary,
        index_cache=IndexCache(config.rootpath / CACHE_DIR),
        timeout=_timeout(config),
        min_grade=config.option.qualbench_min_grade
        or ini_value(config, "qualbench_min_grade", positive_int),
        gain=ini_value(config, "qualbench_gain", gain_name),
    )
    config.stash[bench_run_key] = bench_run
    config.pluginmanager.register(sys.modules[__name__], "qualbench-session")
    # In xdist workers too: each closes its own engines.
    handle_sigterm(config)
    # Only the controller (or a serial run) aggregates; xdist workers just run cases.
    if controller:
        report_path, html_path, baseline_path = _outputs(config, fixture_set)
        reporter = QualbenchReporter(
            config,
            fixture_set,
            _floors(config, vocabulary, fixture_set),
            report_path,
            section_options=_section_options(config, engine_options),
            html_path=html_path,
            baseline_path=baseline_path,
            config_warning=config_warning,
            report_named=bool(config.option.qualbench_report),
            selected_by=selected_by(config),
        )
        config.stash[reporter_key] = reporter
        config.pluginmanager.register(reporter, "qualbench-reporter")


def _require_html_extra(config: pytest.Config) -> None:
    """A usage error before collection, not a warning after the whole run."""
    if not config.option.qualbench_html:
        return
    from pytest_qualbench.report.html.model import HtmlExtraMissing
    from pytest_qualbench.report.html.render import require_html_extra

    try:
        require_html_extra()
    except HtmlExtraMissing as exc:
        raise pytest.UsageError(f"qualbench: --qualbench-html: {exc}") from None


def _config_warning(config: pytest.Config) -> str | None:
    """A loud warning when the project's own pytest configuration was not read."""
    unread = unread_project_config(config.invocation_params.dir, config.inipath)
    if unread is None:
        return None
    message = unread_config_message(unread, config.rootpath, config.inipath)
    config.issue_config_time_warning(pytest.PytestConfigWarning(message), stacklevel=2)
    return message


def _section_options(config: pytest.Config, engine_options: dict[str, str]) -> SectionOptions:
    try:
        rankers = tuple(
            (name, resolve_ranker(name, lambda spec: engine_maker(config, spec)))
            for name in config.option.qualbench_rankers
        )
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
        engine_options=engine_options,
        cache_dir=config.rootpath / CACHE_DIR,
        root=config.rootpath,
    )


def _tokens_k(config: pytest.Config) -> int:
    option: int | None = config.option.qualbench_tokens_k
    return DEFAULT_TOKENS_K if option is None else option


def _ini_checks(text: str) -> frozenset[str]:
    """The ini's checks; empty means all of them."""
    return parse_checks(text) if text.strip() else frozenset(CHECKS)


def _timeout(config: pytest.Config) -> float | None:
    """Seconds a search may take: --qualbench-timeout, else ini qualbench_timeout; None: no limit."""
    option: float | None = config.option.qualbench_timeout
    if option is not None:
        return option
    text = str(config.getini("qualbench_timeout")).strip()
    return ini_value(config, "qualbench_timeout", positive_seconds) if text else None


def _floors(config: pytest.Config, vocabulary: Vocabulary, fixture_set: FixtureSet) -> list[Floor]:
    """Floors from the ini file, overridden metric by metric by the command line.

    A floor may name any content type the configured engine accepts, but one on a
    content type the fixture set has no case of could never fail: a usage error.
    """
    floors: dict[str, Floor] = {}
    for line in config.getini("qualbench_floors"):
        try:
            floor = parse_floor(line, vocabulary.content_types, vocabulary.engine)
        except argparse.ArgumentTypeError as exc:
            raise pytest.UsageError(f"qualbench: ini qualbench_floors: {exc}") from None
        floors[floor.name] = floor
    for floor in config.option.qualbench_floors:
        problem = floor.scope and scope_error(
            floor.scope, vocabulary.content_types, vocabulary.engine
        )
        if problem:
            raise pytest.UsageError(f"qualbench: --qualbench-floor {floor.name}: {problem}")
        floors[floor.name] = floor
    for floor in floors.values():
        absent = absent_scope(floor, fixture_set)
        if absent is not None:
            raise pytest.UsageError(f"qualbench: floor {floor.name}:{floor.value:g}: {absent}")
    return list(floors.values())


def _report_path(config: pytest.Config) -> Path:
    option: str | None = config.option.qualbench_report
    if option:
        return config.invocation_params.dir / option
    return config.rootpath / str(config.getini("qualbench_report"))


def _outputs(
    config: pytest.Config, fixture_set: FixtureSet
) -> tuple[Path, Path | None, Path | None]:
    """The report, HTML and baseline paths, once each output is known to be safe to write.

    Nothing is written over a special file, a fixture file, the baseline or the
    other output; the check runs before any case, so a refusal touches nothing.
    """
    invocation_dir = config.invocation_params.dir
    report = _report_path(config)
    html_option: str | None = config.option.qualbench_html
    html = invocation_dir / html_option if html_option else None
    baseline_option: str | None = config.option.qualbench_compare
    baseline = invocation_dir / baseline_option if baseline_option else None
    protected = {f.path: f"the fixture file {f.display_path}" for f in fixture_set.files}
    if baseline is not None:
        protected[baseline] = "the baseline (--qualbench-compare)"
    reports = {
        report: "the JSON report",
        partial_path(report): "the partial JSON report",
        subset_path(report): "the subset JSON report",
    }
    try:
        checked_output(
            report, "report", {**protected, **({html: "the HTML report"} if html else {})}
        )
        checked_output(partial_path(report), "partial report", protected)
        # A full run may compare with the last subset run's report: the subset path is
        # refused only when a subset run would write it (QualbenchReporter._write_report).
        fixture_files = {path: what for path, what in protected.items() if path != baseline}
        checked_output(subset_path(report), "subset report", fixture_files)
        if html is not None:
            checked_output(html, "--qualbench-html", {**protected, **reports})
    except UnsafeOutput as exc:
        raise pytest.UsageError(f"qualbench: {exc}") from None
    return report, html, baseline


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[session_key] = session


def selected_by(config: pytest.Config) -> tuple[str, ...]:
    """The options and arguments of this run that select or deselect cases, as typed.

    Recorded in a subset run's report and summary, so a reader sees why it is not
    the whole fixture set (a conftest or plugin deselecting leaves this empty).
    """
    option = config.option
    chosen = [
        *([f"-k {option.keyword}"] if getattr(option, "keyword", "") else []),
        *([f"-m {option.markexpr}"] if getattr(option, "markexpr", "") else []),
        *(["--lf"] if getattr(option, "lf", False) else []),
        *(["--sw"] if getattr(option, "stepwise", False) else []),
        *(f"--deselect {node}" for node in getattr(option, "deselect", None) or ()),
    ]
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        chosen += config.args
    return tuple(chosen)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Skip a directory symlink that points back at one of its own ancestors (a loop)."""
    if not collection_path.is_symlink() or not collection_path.is_dir():
        return None
    target = collection_path.resolve()
    parent = collection_path.parent.resolve()
    return True if target == parent or target in parent.parents else None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> QualbenchFile | None:
    bench_run = parent.config.stash.get(bench_run_key, None)
    if bench_run is None or file_path.suffix != ".jsonl":
        return None
    fixture_file = bench_run.fixture_set.file(file_path)
    if fixture_file is None:
        return None
    # Each real file once, however many symlinked directories lead to it; pytest itself
    # collects a directory again for each argument inside it, by the same path.
    first_path = bench_run.collected_files.setdefault(fixture_file.path, file_path)
    if first_path != file_path:
        return None

    # Named by stem: `-k` matches node names as substrings, and every "*.jsonl"
    # name would otherwise match `-k json`.
    return QualbenchFile.from_parent(parent, path=file_path, name=file_path.stem)


STARTUP_FAILED = "qualbench: the engine could not start"
NOTHING_RAN = "no case ran and no report was written"


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Any:
    config = session.config
    bench_run = config.stash.get(bench_run_key, None)
    # An xdist worker indexes only the content types it is sent (pytest_runtest_protocol).
    if bench_run is not None and not config.option.collectonly and not is_xdist_worker(config):
        failed = build_indexes(session, bench_run)
        if failed is not None:
            _startup_failed(config, startup_message(config, failed, NOTHING_RAN))
    try:
        return (yield)
    except BaseException:
        # xdist's controller stops with Interrupted when a worker's engine could not start.
        reporter = config.stash.get(reporter_key, None)
        if reporter is not None and reporter.startup_error is not None:
            raise pytest.UsageError(reporter.startup_error) from None
        raise


def _startup_failed(config: pytest.Config, message: str) -> None:
    """Stop the run before its cases: nothing is reported, one usage error says why."""
    reporter = config.stash.get(reporter_key, None)
    if reporter is not None:
        reporter.startup_error = message
    raise pytest.UsageError(message)


def pytest_runtest_protocol(item: pytest.Item) -> bool | None:
    # Before the item's setup, call and teardown are timed: a build is no case's duration.
    if not isinstance(item, CaseItem):
        return None
    bench_run = item.config.stash[bench_run_key]
    bench_run.prepare(item.case.content_type)
    failed = bench_run.startup_error(item.case.content_type)
    if failed is None:
        return None
    # Only an xdist worker gets here (a serial run stopped before its cases): it runs
    # no case, stops, and hands the message to the controller (pytest_sessionfinish).
    item.config.stash[startup_error_key] = startup_message(item.config, failed, NOTHING_RAN)
    item.session.shouldstop = STARTUP_FAILED
    return True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if isinstance(item, CaseItem):
        # Report attributes travel with the report from xdist workers to the controller:
        # the case id lets a crash later in the same item be attributed without parsing
        # its node id (a case_id may hold "::").
        report.qualbench_case_id = item.case.case_id
        # Only a worker's record travels as a copy; a serial run's collector takes the
        # record from the item itself (Collector.pytest_runtest_makereport).
        if is_xdist_worker(item.config) and call.when == "call" and item.record is not None:
            report.qualbench_case = item.record.to_wire()
    return report


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    from pytest_qualbench.plugin.scheduling import crash_safe_scheduler

    return crash_safe_scheduler(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodeready(node: Any) -> None:
    pid = worker_pid(node)
    if pid is not None:
        node.config.stash.setdefault(worker_pids_key, set()).add(pid)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    pid = worker_pid(node)
    node.config.stash.get(worker_pids_key, set()).discard(pid)


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    bench_run = config.stash.get(bench_run_key, None)
    if bench_run is not None and hasattr(config, "workeroutput"):
        tokens = retrieved_tokens(bench_run, _tokens_k(config))
        output = {
            "index_ms": bench_run.index_times(),
            "warmup_ms": bench_run.warmup_times(),
            "cached_indexes": bench_run.cached_indexes(),
            "engine": engine_info(bench_run),
            "retrieved_tokens": tokens.counts,
            "tokens_error": tokens.error,
            "startup_error": config.stash.get(startup_error_key, None),
        }
        # Here, not at unconfigure: once this hook returns, xdist reports the worker
        # finished and the controller may end it before it unconfigures. The
        # controller shows what could not be closed (a worker has no terminal).
        config.workeroutput["qualbench"] = {**output, "close_problems": bench_run.close()}


def pytest_unconfigure(config: pytest.Config) -> None:
    # After the reporter's sections, which still search the engines.
    session = config.stash.get(session_key, None)
    if session is not None:
        session.exitstatus = terminated_status(config, session.exitstatus)
    bench_run = config.stash.get(bench_run_key, None)
    if bench_run is None:
        return
    problems = bench_run.close()
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    if problems and terminal is not None:
        terminal.write_line(close_problems_line(problems), yellow=True)
