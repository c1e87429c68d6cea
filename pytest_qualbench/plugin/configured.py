"""The project's benchmark configuration outside a test run, read by pytest itself.

`qualbench add/case/show/lint` must search with the engine `pytest --qualbench`
would use: the ini's `qualbench_engine`, the `--qualbench-engine` options, or a
conftest.py `pytest_qualbench_make_engine` hook. So the command runs inside
pytest's own configuration (ini file, conftest files, option parsing and its
errors) and stops before any collection: `pytest_cmdline_main` answers first.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_qualbench.evaluation.relevance import DEFAULT_GAIN, DEFAULT_MIN_GRADE
from pytest_qualbench.evaluation.runner import EngineFactory, EngineStartupError

USAGE_ERROR = 2


@dataclass(frozen=True)
class BenchConfig:
    """What an authoring command needs of the project's configuration."""

    engine_factory: EngineFactory
    # The ini's qualbench_paths, relative to the ini file's folder.
    fixture_paths: tuple[Path, ...]
    limit: int
    # Cases judged by `relevant`: the ini's qualbench_min_grade and qualbench_gain.
    min_grade: int = DEFAULT_MIN_GRADE
    gain: str = DEFAULT_GAIN


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """The plugin's engine options, for a command that searches."""
    parser.add_argument(
        "--engine",
        metavar="MODULE:FACTORY",
        help="engine factory, as --qualbench-engine (default: ini qualbench_engine, else the "
        "built-in engine; a conftest.py pytest_qualbench_make_engine hook overrides both)",
    )
    parser.add_argument(
        "--engine-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="keyword argument of the engine factory, as --qualbench-engine-option (repeatable)",
    )


def engine_options(arguments: argparse.Namespace) -> list[str]:
    """The parsed engine options as pytest options, for pytest to check and apply."""
    engine = ["--qualbench-engine", arguments.engine] if arguments.engine else []
    return engine + [f"--qualbench-engine-option={option}" for option in arguments.engine_option]


def run_configured(options: Sequence[str], command: Callable[[BenchConfig], int]) -> int:
    """Run `command` with the configuration pytest reads for these (engine) options."""

    class Command:
        @pytest.hookimpl(tryfirst=True)
        def pytest_cmdline_main(self, config: pytest.Config) -> int:
            try:
                bench = bench_config(config)
            except pytest.UsageError as exc:
                print(exc, file=sys.stderr)
                return USAGE_ERROR
            try:
                return command(bench)
            except EngineStartupError as exc:
                from pytest_qualbench.plugin.engine_config import startup_message

                print(startup_message(config, exc, "nothing was written"), file=sys.stderr)
                return USAGE_ERROR

    # -s: the command prints to the terminal; no cache: nothing is written but fixtures.
    status = pytest.main(["-s", "-p", "no:cacheprovider", *options], plugins=[Command()])
    return USAGE_ERROR if status == pytest.ExitCode.USAGE_ERROR else int(status)


def bench_config(config: pytest.Config) -> BenchConfig:
    from pytest_qualbench.options import gain_name, positive_int
    from pytest_qualbench.plugin.engine_config import engine_factory, ini_value

    ini_dir = config.inipath.parent if config.inipath is not None else config.rootpath
    return BenchConfig(
        engine_factory=engine_factory(config),
        fixture_paths=tuple(ini_dir / entry for entry in config.getini("qualbench_paths")),
        limit=config.option.qualbench_limit or ini_value(config, "qualbench_limit", positive_int),
        min_grade=ini_value(config, "qualbench_min_grade", positive_int),
        gain=ini_value(config, "qualbench_gain", gain_name),
    )
