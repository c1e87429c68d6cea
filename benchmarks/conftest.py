"""Benchmark session wiring: --scale and --corpus, their order, the closing table.

A test asking for `scale` runs at every chosen scale but 1M (test_million's alone), one asking for
`corpus_name` on every chosen corpus (corpora.CORPORA), one asking for `system`
once per system (systems.SYSTEMS) and corpus and scale. Tests run scale by scale
and corpus by corpus; within each, one test function's systems run one after
another, and each (corpus, scale) starts one system later than the one before,
so no system always runs first (on cold caches) or last.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

import pytest

from benchmarks.corpora import CORPORA
from benchmarks.corpus import MILLION, SCALES
from benchmarks.ledger import Ledger
from benchmarks.quality import QualityRun, fold_lines, table_lines
from benchmarks.systems import SYSTEMS
from benchmarks.workbench import Workbench

LEDGER = pytest.StashKey[Ledger]()
WORKBENCH = pytest.StashKey[Workbench]()
QUALITY = pytest.StashKey[list[QualityRun]]()


def choice_list(known: Sequence[str], what: str) -> Callable[[str], list[str]]:
    """A parser of a comma-separated subset of `known`, kept in the order of `known`."""

    def parse(value: str) -> list[str]:
        chosen = [part.strip() for part in value.split(",") if part.strip()]
        unknown = [part for part in chosen if part not in known]
        if unknown or not chosen:
            raise argparse.ArgumentTypeError(
                f"unknown {what} {', '.join(unknown) or value!r}; choose from {', '.join(known)}"
            )
        return [name for name in known if name in chosen]

    return parse


def rotated(systems: Sequence[str], shift: int) -> list[str]:
    """The systems starting `shift` places later, wrapping around."""
    start = shift % len(systems)
    return [*systems[start:], *systems[:start]]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--scale",
        dest="bench_scales",
        type=choice_list([*SCALES, MILLION], "scale"),
        default=list(SCALES),
        help=(
            f"corpus sizes to benchmark, comma-separated from {','.join([*SCALES, MILLION])} "
            f"(default: {','.join(SCALES)}; {MILLION} runs only the 1M build test)"
        ),
    )
    parser.addoption(
        "--corpus",
        dest="bench_corpora",
        type=choice_list(list(CORPORA), "corpus"),
        default=list(CORPORA),
        help=f"corpora to benchmark, comma-separated from {','.join(CORPORA)} (default: all)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.stash[LEDGER] = Ledger()
    config.stash[WORKBENCH] = Workbench()
    config.stash[QUALITY] = []
    config.addinivalue_line("markers", "quality: retrieval quality on the shared IR collections")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    corpora = metafunc.config.option.bench_corpora
    scales = [scale for scale in metafunc.config.option.bench_scales if scale in SCALES]
    if "system" in metafunc.fixturenames:
        metafunc.parametrize(
            ("corpus_name", "scale", "system"),
            [
                (corpus, scale, system)
                for corpus in corpora
                for scale in scales
                for system in rotated(
                    SYSTEMS, list(CORPORA).index(corpus) + list(SCALES).index(scale)
                )
            ],
        )
        return
    if "corpus_name" in metafunc.fixturenames:
        metafunc.parametrize("corpus_name", corpora)
    if "scale" in metafunc.fixturenames:
        metafunc.parametrize("scale", scales)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Scale by scale, then corpus by corpus, so the workbench holds one corpus's indexes
    # at a time; the sort is stable, which keeps the systems' order within each.
    scales = list(SCALES)
    corpora = list(CORPORA)

    def rank(item: pytest.Item) -> tuple[int, int]:
        callspec = getattr(item, "callspec", None)
        params = callspec.params if callspec is not None else {}
        scale = params.get("scale")
        corpus = params.get("corpus_name")
        return (
            -1 if scale is None else scales.index(scale),
            -1 if corpus is None else corpora.index(corpus),
        )

    items.sort(key=rank)


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
