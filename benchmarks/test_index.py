"""Index build time and index size: the engine against FTS5 building both tables."""

from __future__ import annotations

import gc

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from benchmarks.corpus import SCALES
from benchmarks.ledger import BUILD_S, MEMORY_MB, Ledger
from benchmarks.measure import deep_size_bytes
from benchmarks.workbench import ENGINE, FTS5, SIDES, EngineSide, Fts5Side, Workbench

# A 100k build takes tens of seconds; one round is what the time budget allows.
BUILD_ROUNDS = {"1k": 2, "10k": 1, "100k": 1}


@pytest.mark.parametrize("side", SIDES)
def test_index_build(
    benchmark: BenchmarkFixture, workbench: Workbench, ledger: Ledger, scale: str, side: str
) -> None:
    workbench.corpus(scale)
    gc.collect()
    benchmark.group = f"index build {scale}"
    # pytest-benchmark ships no type hints.
    benchmark.pedantic(  # type: ignore[no-untyped-call]
        workbench.build, args=(scale, side), rounds=BUILD_ROUNDS[scale], iterations=1
    )
    assert benchmark.stats is not None
    # The fastest round: the first one also pays one-off imports (nltk) and cold memos.
    seconds = benchmark.stats.stats.min
    benchmark.extra_info["chunks"] = SCALES[scale]
    ledger.record(scale, BUILD_S, side, seconds)


def test_engine_keeps_one_chunk_per_entry(workbench: Workbench, scale: str) -> None:
    """The corpus is built so that each entry is one chunk; sizes mean what they say."""
    built = workbench.built(scale, ENGINE)
    assert isinstance(built, EngineSide)
    assert built.chunk_count() == SCALES[scale]


def test_index_memory(workbench: Workbench, ledger: Ledger, scale: str) -> None:
    """Deep size of the built engine's objects against the FTS5 database's pages."""
    engine = workbench.built(scale, ENGINE)
    reference = workbench.built(scale, FTS5)
    assert isinstance(engine, EngineSide) and isinstance(reference, Fts5Side)
    megabyte = 1024 * 1024
    engine_mb = deep_size_bytes(engine.engine) / megabyte
    ledger.record(scale, MEMORY_MB, ENGINE, engine_mb)
    ledger.record(scale, MEMORY_MB, FTS5, reference.size_bytes() / megabyte)
    assert engine_mb > 0
