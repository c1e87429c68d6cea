"""Benchmark session wiring: the --scale option, scale-ordered tests, the closing table."""

from __future__ import annotations

import argparse

import pytest

from benchmarks.corpus import SCALES
from benchmarks.ledger import Ledger
from benchmarks.quality import QualityRun, fold_lines, table_lines
from benchmarks.workbench import Workbench

LEDGER = pytest.StashKey[Ledger]()
WORKBENCH = pytest.StashKey[Workbench]()
QUALITY = pytest.StashKey[list[QualityRun]]()


def scale_list(value: str) -> list[str]:
    """Parse --scale: a comma-separated subset of the known scales, kept in size order."""
    chosen = [part.strip() for part in value.split(",") if part.strip()]
    unknown = [part for part in chosen if part not in SCALES]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(
            f"unknown scale {', '.join(unknown) or value!r}; choose from {', '.join(SCALES)}"
        )
    return [scale for scale in SCALES if scale in chosen]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--scale",
        dest="bench_scales",
        type=scale_list,
        default=list(SCALES),
        help=f"corpus sizes to benchmark, comma-separated from {','.join(SCALES)} (default: all)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.stash[LEDGER] = Ledger()
    config.stash[WORKBENCH] = Workbench()
    config.stash[QUALITY] = []
    config.addinivalue_line("markers", "quality: retrieval quality on the shared IR collections")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "scale" in metafunc.fixturenames:
        metafunc.parametrize("scale", metafunc.config.option.bench_scales)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Run scale by scale, so the workbench holds one scale's indexes at a time.
    order = list(SCALES)

    def scale_rank(item: pytest.Item) -> int:
        callspec = getattr(item, "callspec", None)
        scale = callspec.params.get("scale") if callspec is not None else None
        return -1 if scale is None else order.index(scale)

    items.sort(key=scale_rank)


@pytest.fixture(scope="session")
def ledger(pytestconfig: pytest.Config) -> Ledger:
    return pytestconfig.stash[LEDGER]


@pytest.fixture(scope="session")
def quality_table(pytestconfig: pytest.Config) -> list[QualityRun]:
    """The quality run of this session, filled by the quality benchmark, shown at the end."""
    return pytestconfig.stash[QUALITY]


@pytest.fixture(scope="session")
def workbench(pytestconfig: pytest.Config) -> Workbench:
    return pytestconfig.stash[WORKBENCH]


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    lines = config.stash[LEDGER].table()
    if len(lines) > 2:
        terminalreporter.section("qualbench performance: engine and peers, same run")
        for line in lines:
            terminalreporter.write_line(line)
    for quality in config.stash[QUALITY]:
        terminalreporter.section(
            "qualbench quality: CISI, MEDLINE, CACM, NPL; engine vs bm25s and tantivy, same run"
        )
        for line in [*table_lines(quality.rows), "", *fold_lines(quality.folds)]:
            terminalreporter.write_line(line)
