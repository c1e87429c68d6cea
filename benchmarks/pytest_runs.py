"""Whole pytest runs in a subprocess, timed: the plugin's own cost and its idle cost.

Runs may write bytecode even where PYTHONDONTWRITEBYTECODE is set (it is on this
machine): an installed plugin has its .pyc files, and compiling every module on
every run would be measured as the plugin's cost. Every run gets its own directory with an empty pytest.ini, so the project's own
pytest settings never leak in, and `-p no:cacheprovider` so no run warms the
next. Wall times take the minimum over repeats: on a shared machine the
minimum is the run least disturbed by others.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# hypothesis (about 1 s of imports) and pytest-benchmark are this project's dev tools,
# installed beside the plugin; both arms of every comparison run without them, so
# their start-up noise does not drown the differences measured here.
BASE_ARGS = ("-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:benchmark")
TRIVIAL_TEST = "def test_{number}():\n    assert {number} == {number}\n"


@dataclass(frozen=True)
class QualbenchRun:
    """A timed `pytest --qualbench` run and what its report says the engine spent."""

    wall_ms: float
    index_ms: float
    search_ms: float
    cases: int

    @property
    def own_ms(self) -> float:
        """Wall time not spent indexing or searching: start-up plus the plugin's work."""
        return self.wall_ms - self.index_ms - self.search_ms


def per_item_ms(many_ms: float, one_ms: float, many: int) -> float:
    """Marginal cost of one item: (cost of `many` items - cost of one item) / (many - 1)."""
    return (many_ms - one_ms) / (many - 1)


def run_pytest(directory: Path, args: Sequence[str]) -> float:
    """Wall milliseconds of one pytest run in directory (its exit status is not judged here)."""
    (directory / "pytest.ini").write_text("[pytest]\n")
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pytest", *BASE_ARGS, *args],
        cwd=directory,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return (time.perf_counter() - started) * 1000.0


def fastest_ms(directory: Path, args: Sequence[str], repeats: int) -> float:
    return min(run_pytest(directory, args) for _ in range(repeats))


def write_trivial_suite(directory: Path, count: int) -> Path:
    """A directory holding one test file of `count` trivial passing tests."""
    directory.mkdir(parents=True, exist_ok=True)
    body = "".join(TRIVIAL_TEST.format(number=number) for number in range(count))
    (directory / "test_trivial.py").write_text(body)
    return directory


def qualbench_run(directory: Path, fixtures: Path, repeats: int) -> QualbenchRun:
    """The fastest of `repeats` runs of `pytest --qualbench` over a copy of fixtures."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copytree(fixtures, directory / "bench_fixtures", dirs_exist_ok=True)
    report = directory / "report.json"
    runs = []
    for _ in range(repeats):
        wall = run_pytest(directory, ["--qualbench", f"--qualbench-report={report}"])
        runs.append(engine_time(json.loads(report.read_text()), wall))
    return min(runs, key=lambda run: run.own_ms)


def engine_time(report: dict[str, object], wall_ms: float) -> QualbenchRun:
    """Index and search milliseconds as the report states them (docs/report-format.md)."""
    latency = report["latency"]
    cases = report["cases"]
    assert isinstance(latency, dict) and isinstance(cases, list)
    return QualbenchRun(
        wall_ms=wall_ms,
        index_ms=float(latency["overall"]["index_ms"] or 0.0),
        search_ms=sum(float(case["latency_ms"]) for case in cases),
        cases=len(cases),
    )


def single_case_fixtures(fixtures: Path, directory: Path) -> Path:
    """A fixture set of the first entry of the first file, keeping only its first case."""
    directory.mkdir(parents=True, exist_ok=True)
    first_file = sorted(fixtures.glob("*.jsonl"))[0]
    entry = json.loads(first_file.read_text(encoding="utf-8").splitlines()[0])
    entry["cases"] = entry["cases"][:1]
    (directory / first_file.name).write_text(json.dumps(entry) + "\n", encoding="utf-8")
    return directory


def idle_overhead_ms(directory: Path, repeats: int) -> float:
    """Median paired difference of a plain run with and without the plugin loaded."""
    # One run of each first, so both arms find their bytecode cached.
    run_pytest(directory, [])
    run_pytest(directory, ["-p", "no:qualbench"])
    differences = [
        run_pytest(directory, []) - run_pytest(directory, ["-p", "no:qualbench"])
        for _ in range(repeats)
    ]
    return statistics.median(differences)
