"""What the benchmarks read back from a pytest-benchmark benchmark: its timed rounds."""

from __future__ import annotations

import pytest
from pytest_benchmark.fixture import BenchmarkFixture


def skip_unless_timed(benchmark: BenchmarkFixture) -> None:
    """Skip the test when pytest-benchmark times nothing: its figures are those timings."""
    # --benchmark-disable (and xdist) run the target once, untimed, with no stats.
    if benchmark.disabled:
        pytest.skip("pytest-benchmark is disabled: these figures are its timings")


def rounds_s(benchmark: BenchmarkFixture) -> list[float]:
    """The seconds of each round pytest-benchmark timed, in the order they ran."""
    metadata = benchmark.stats
    assert metadata is not None, "the benchmark has not run"
    data: list[float] = metadata.stats.data
    return list(data)
