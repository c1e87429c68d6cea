"""pytest hooks: options, and turning the benchmark on.

This module is imported by every pytest run of every project that has the
plugin installed, so it imports nothing of the package but the hook specs: the
benchmark machinery (`pytest_qualbench.plugin.session`, and through it the engine) loads
and registers its hooks only when `--qualbench`, the ini switch or a `.jsonl`
path turns the benchmark on.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_qualbench.options import (
    checks_option,
    engine_option,
    floor_option,
    non_negative_int,
    positive_int,
    positive_seconds,
    rankers_option,
)
from pytest_qualbench.plugin import hookspecs

DEFAULT_REPORT = ".qualbench/report.json"
DEFAULT_PATHS = ("bench_fixtures",)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("qualbench", "retrieval-quality benchmark (pytest-qualbench)")
    group.addoption(
        "--qualbench",
        action="store_true",
        dest="qualbench",
        help="run the fixture set (ini qualbench_paths) as test items, report and enforce floors",
    )
    group.addoption(
        "--qualbench-report",
        dest="qualbench_report",
        metavar="PATH",
        help=f"where to write the JSON report (default: ini qualbench_report, {DEFAULT_REPORT})",
    )
    group.addoption(
        "--qualbench-floor",
        dest="qualbench_floors",
        action="append",
        default=[],
        type=floor_option,
        metavar="METRIC:VALUE",
        help="fail the run when METRIC (e.g. mrr, json.mrr) is below VALUE; repeatable",
    )
    group.addoption(
        "--qualbench-limit",
        dest="qualbench_limit",
        type=positive_int,
        metavar="N",
        help="results requested per query (default: ini qualbench_limit, 10)",
    )
    group.addoption(
        "--qualbench-checks",
        dest="qualbench_checks",
        type=checks_option,
        metavar="LIST",
        help="per-case checks that fail an item, comma-separated from needles,rank,layer,negative "
        "(default: all)",
    )
    group.addoption(
        "--qualbench-engine",
        dest="qualbench_engine",
        metavar="NAME",
        help="engine to benchmark: builtin, bm25s, tantivy, postgres, dense, hybrid, a name "
        "registered by another package, or package.module:factory "
        "(default: ini qualbench_engine, else builtin)",
    )
    group.addoption(
        "--qualbench-engine-option",
        dest="qualbench_engine_options",
        action="append",
        type=engine_option,
        default=[],
        metavar="KEY=VALUE",
        help="keyword argument of the engine factory, typed by its annotation (repeatable; "
        "adds to and overrides ini qualbench_engine_options)",
    )
    group.addoption(
        "--qualbench-compare",
        dest="qualbench_compare",
        metavar="BASE.json",
        help="compare this run's report with a baseline report (as qualstat does); fail on a regression",
    )
    group.addoption(
        "--qualbench-compare-missing",
        dest="qualbench_compare_missing",
        choices=("warn", "fail"),
        default="warn",
        help="what a missing or unreadable baseline does (default: warn)",
    )
    group.addoption(
        "--qualbench-lint",
        dest="qualbench_lint",
        action="store_true",
        help="lint the fixture set before running it (as `qualbench lint`); lint errors fail the run",
    )
    group.addoption(
        "--qualbench-html",
        dest="qualbench_html",
        metavar="PATH",
        help="also write a self-contained HTML report (needs the [html] extra)",
    )
    group.addoption(
        "--qualbench-rankers",
        dest="qualbench_rankers",
        type=rankers_option,
        default=(),
        metavar="LIST",
        help="head-to-head table of these rankers over the engine's chunks, comma-separated "
        "names (flatfile, bm25, engine, quality, an engine short name, or registered ones) "
        "or package.module:factory",
    )
    group.addoption(
        "--qualbench-tokens-k",
        dest="qualbench_tokens_k",
        type=non_negative_int,
        default=None,
        metavar="K",
        help="token cost of the top K results against the whole corpus (default 3; 0: skip)",
    )
    group.addoption(
        "--qualbench-timeout",
        dest="qualbench_timeout",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="fail a case whose search (or its corpus's indexing) takes longer than SECONDS "
        "(default: ini qualbench_timeout, else no limit)",
    )
    group.addoption(
        "--qualbench-min-grade",
        dest="qualbench_min_grade",
        type=positive_int,
        default=None,
        metavar="GRADE",
        help="in cases judged by entry (relevant), the grade that counts as relevant for hit, "
        "recall and MRR (default: ini qualbench_min_grade, else 1)",
    )
    group.addoption(
        "--qualbench-start-times",
        dest="qualbench_start_times",
        action="store_true",
        help="time cold (index build) against seeded (index cache under .qualbench/) starts",
    )
    parser.addini(
        "qualbench_paths",
        "fixture files or directories of the benchmark",
        type="linelist",
        default=list(DEFAULT_PATHS),
    )
    parser.addini(
        "qualbench_enabled", "collect the benchmark without --qualbench", type="bool", default=False
    )
    parser.addini(
        "qualbench_floors", "metric floors, one METRIC:VALUE per line", type="linelist", default=[]
    )
    parser.addini("qualbench_report", "where to write the JSON report", default=DEFAULT_REPORT)
    parser.addini("qualbench_limit", "results requested per query", default="10")
    parser.addini(
        "qualbench_checks", "per-case checks that fail an item (default: all)", default=""
    )
    parser.addini(
        "qualbench_timeout", "seconds a search may take before its case fails", default=""
    )
    parser.addini(
        "qualbench_min_grade", "grade a relevant entry needs for hit, recall, MRR", default="1"
    )
    parser.addini(
        "qualbench_gain",
        "nDCG gain of graded cases: linear (trec_eval) or exponential",
        default="linear",
    )
    parser.addini(
        "qualbench_engine",
        "engine short name or package.module:factory (default: builtin)",
        default="",
    )
    parser.addini(
        "qualbench_postgres_dsn",
        "PostgreSQL DSN of the postgres engine (default: $QUALBENCH_POSTGRES_DSN)",
        default="",
    )
    parser.addini(
        "qualbench_engine_options",
        "keyword arguments of the engine factory, one KEY=VALUE per line",
        type="linelist",
        default=[],
    )


def pytest_configure(config: pytest.Config) -> None:
    paths = _fixture_paths(config)
    if paths is None:
        return
    from pytest_qualbench.plugin.session import start_benchmark

    start_benchmark(config, paths)


def _fixture_paths(config: pytest.Config) -> list[Path] | None:
    """The fixture set's files and directories, or None when the plugin stays idle.

    `--qualbench` without positional arguments collects exactly the configured
    paths; the ini switch adds them to the ordinary run; a `.jsonl` file named
    on the command line is collected in any case.
    """
    invocation_dir = config.invocation_params.dir
    arg_paths = [invocation_dir / arg.split("::")[0] for arg in config.args]
    named_files = [path for path in arg_paths if path.suffix == ".jsonl"]
    flag = bool(config.option.qualbench)
    enabled = flag or bool(config.getini("qualbench_enabled"))
    if not enabled and not named_files:
        return None
    ini_dir = config.inipath.parent if config.inipath is not None else config.rootpath
    configured = [ini_dir / entry for entry in config.getini("qualbench_paths")]
    existing = [str(path) for path in configured if path.exists()]
    named = config.args_source == pytest.Config.ArgsSource.ARGS
    if not named:
        config.args = existing if flag else [*config.args, *existing]
    # Only directories the user named join the fixture set: testpaths or the
    # invocation directory may hold unrelated .jsonl files that would change the hash.
    extra = [path for path in arg_paths if path.is_dir()] if enabled and named else []
    return [*configured, *named_files, *extra]
