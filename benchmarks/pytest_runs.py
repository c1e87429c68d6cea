"""Whole pytest runs in a subprocess, timed: the plugin's own cost and its idle cost.

Runs may write bytecode even where PYTHONDONTWRITEBYTECODE is set (it is on this
machine): an installed plugin has its .pyc files, and compiling every module on
every run would be measured as the plugin's cost. Every run gets its own
directory with an empty pytest.ini, so the project's own pytest settings never
leak in, and `-p no:cacheprovider` so no run warms the next.

The per-case cost is measured in rounds of four runs, back to back: the full
qualbench run, a run of one case per content type (both index and warm up every
content type, so only what grows with the cases differs), and trivial suites of
as many tests as each of the two has cases. Each is timed around pytest.main
(timed_pytest.py) a few times and the fastest kept: a run slowed by a burst of
other work on the machine is dropped. The machine changes pace by up to 1.8x
from one few-second stretch to the next, so every run's time is brought to a
common pace by the fixed loop timed around it before runs are subtracted; each
round gives a ratio, and the median round is kept.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.corpus import build_corpus

# hypothesis (about 1 s of imports) and pytest-benchmark are this project's dev tools,
# installed beside the plugin; both arms of every comparison run without them, so
# their start-up noise does not drown the differences measured here.
BASE_ARGS = ("-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:benchmark")
TRIVIAL_TEST = "def test_{number}():\n    assert {number} == {number}\n"
# pytest's own per-test work that a run of tens of thousands of cases can switch off
# (README, "Tens of thousands of cases"): the failure summary's scan, log and output
# capture around every phase, and the fault, thread and unraisable-exception checks.
LEAN_PYTEST_ARGS = (
    "--tb=line",
    "-p",
    "no:logging",
    "--capture=no",
    "-p",
    "no:faulthandler",
    "-p",
    "no:threadexception",
    "-p",
    "no:unraisableexception",
)
# A collector of plain items, as the plugin's cases are: no test module to import (a
# module of 50k test functions took longer to assertion-rewrite and compile than its
# tests took to run) and no fixture machinery, which a test function carries and a
# case item does not.
PLAIN_ITEMS_CONFTEST = """\
import pytest


class PlainItem(pytest.Item):
    def runtest(self):
        pass

    def reportinfo(self):
        return self.path, None, self.name


class PlainItems(pytest.File):
    def collect(self):
        for number in range(int(self.path.read_text())):
            yield PlainItem.from_parent(self, name=f"item_{number}")


def pytest_collect_file(file_path, parent):
    if file_path.name == "items.count":
        return PlainItems.from_parent(parent, path=file_path)
"""
# An engine that looks nothing up: each case's query is answered with the case's own
# entry first and nine fixed others, read off the fixture set at index time. A run
# with it does every bit of the plugin's and pytest's work per case, without the
# engine's work or its memory traffic, which slows the code that runs between searches.
REPLAY_ENGINE_MODULE = "replay_engine"
REPLAY_ENGINE = f"{REPLAY_ENGINE_MODULE}:ReplayEngine"
REPLAY_ENGINE_SOURCE = """\
from pytest_qualbench.engine.types import Chunk, Result, Results

LAYER = "rrf(porter+trigram)"


class ReplayEngine:
    def __init__(self):
        self.answers = {}
        self.indexed = []

    def index(self, entries):
        self.indexed = [
            Chunk(text=e.haystack, title=e.id, source=e.source_label, kind=e.source_kind,
                  position=0, entry_id=e.id)
            for e in entries
        ]
        results = [
            Result(text=c.text, layer=LAYER, title=c.title, score=1.0, source=c.source)
            for c in self.indexed
        ]
        for own, entry in zip(results, entries):
            others = [result for result in results[:10] if result is not own][:9]
            for case in entry.cases:
                self.answers[case.query] = [own, *others]

    def search(self, query, *, limit=10, kinds=()):
        return Results(self.answers.get(query, [])[:limit])

    def chunks(self):
        return self.indexed
"""
TIMED_PYTEST = Path(__file__).with_name("timed_pytest.py")
_WORD = re.compile(r"[a-z]{5,}")


@dataclass(frozen=True)
class TimedRun:
    """pytest.main's wall time, and the pace loop's time around it (timed_pytest.py)."""

    wall_ms: float
    loop_ms: float

    def at_pace(self, milliseconds: float, loop_ms: float) -> float:
        """What `milliseconds` measured during this run would be at the pace of `loop_ms`."""
        return milliseconds * loop_ms / self.loop_ms


@dataclass(frozen=True)
class QualbenchRun:
    """A timed `pytest --qualbench` run and what its report says the engine spent."""

    timed: TimedRun
    index_ms: float
    search_ms: float
    cases: int

    @property
    def own_ms(self) -> float:
        """Wall time not spent indexing or searching: start-up plus the plugin's work."""
        return self.timed.wall_ms - self.index_ms - self.search_ms


def per_item_ms(many_ms: float, few_ms: float, many: int, few: int) -> float:
    """Marginal cost of one item: (cost of `many` items - cost of `few`) / (many - few)."""
    return (many_ms - few_ms) / (many - few)


@dataclass(frozen=True)
class CostRound:
    """One round's four runs, back to back: the full qualbench run and one of a case per
    content type; as many trivial tests as each has cases."""

    full: QualbenchRun
    few: QualbenchRun
    many: TimedRun
    one_per_case: TimedRun

    def plugin_ms(self, loop_ms: float) -> float:
        """The plugin's own marginal cost per case, at the pace of `loop_ms`.

        Both runs index and warm up every content type, so what a content type costs
        once (an engine, its cache load, its relevant-set index) is not counted per case.
        """
        full = self.full.timed.at_pace(self.full.own_ms, loop_ms)
        few = self.few.timed.at_pace(self.few.own_ms, loop_ms)
        return per_item_ms(full, few, self.full.cases, self.few.cases)

    def pytest_ms(self, loop_ms: float) -> float:
        """pytest's marginal cost per trivial item, at the pace of `loop_ms`."""
        many = self.many.at_pace(self.many.wall_ms, loop_ms)
        few = self.one_per_case.at_pace(self.one_per_case.wall_ms, loop_ms)
        return per_item_ms(many, few, self.full.cases, self.few.cases)

    @property
    def ratio(self) -> float:
        # Independent of the pace both are brought to.
        return self.plugin_ms(1.0) / self.pytest_ms(1.0)

    @property
    def fastest_loop_ms(self) -> float:
        runs = (self.full.timed, self.few.timed, self.many, self.one_per_case)
        return min(run.loop_ms for run in runs)


@dataclass(frozen=True)
class CostDirectories:
    """Where a round's four runs happen: the full and the case-per-content-type fixture
    sets, and a trivial suite of as many tests as each has cases."""

    full: Path
    few: Path
    many: Path
    one_per_case: Path


def cost_round(directories: CostDirectories, repeats: int) -> CostRound:
    """Each of the round's four runs `repeats` times, the fastest of each kept (at a
    common pace): a run slowed by a burst of other work on the machine is dropped."""
    return CostRound(
        full=fastest_qualbench_run(directories.full, repeats),
        few=fastest_qualbench_run(directories.few, repeats),
        many=fastest_timed_pytest(directories.many, repeats),
        one_per_case=fastest_timed_pytest(directories.one_per_case, repeats),
    )


def fastest_qualbench_run(directory: Path, repeats: int) -> QualbenchRun:
    runs = [qualbench_run(directory) for _ in range(repeats)]
    return min(runs, key=lambda run: run.timed.at_pace(run.own_ms, 1.0))


def fastest_timed_pytest(directory: Path, repeats: int) -> TimedRun:
    runs = [timed_pytest(directory, []) for _ in range(repeats)]
    return min(runs, key=lambda run: run.at_pace(run.wall_ms, 1.0))


def median_round(rounds: Sequence[CostRound]) -> CostRound:
    """The round of median ratio (the upper one of an even count)."""
    ordered = sorted(rounds, key=lambda round_: round_.ratio)
    return ordered[len(ordered) // 2]


def run_in(directory: Path, command: Sequence[str]) -> int:
    """Run a pytest command in directory, under an empty pytest.ini, output discarded;
    its exit status."""
    (directory / "pytest.ini").write_text("[pytest]\n")
    return subprocess.run(
        command,
        cwd=directory,
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    ).returncode


def pytest_command(args: Sequence[str]) -> list[str]:
    """A pytest process with the arguments every timed run shares."""
    return [sys.executable, "-m", "pytest", *BASE_ARGS, *args]


def run_pytest(directory: Path, args: Sequence[str]) -> float:
    """Wall milliseconds of one pytest process in directory, start-up included."""
    started = time.perf_counter()
    run_in(directory, pytest_command(args))
    return (time.perf_counter() - started) * 1000.0


def timed_pytest(directory: Path, args: Sequence[str]) -> TimedRun:
    """pytest.main in a fresh process, the heavy imports done first (timed_pytest.py)."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "timed.json"
        run_in(directory, [sys.executable, str(TIMED_PYTEST), str(out), *BASE_ARGS, *args])
        timed = json.loads(out.read_text())
    return TimedRun(wall_ms=timed["wall_ms"], loop_ms=timed["loop_ms"])


def write_trivial_suite(directory: Path, count: int) -> Path:
    """A directory holding one test file of `count` trivial passing tests."""
    directory.mkdir(parents=True, exist_ok=True)
    body = "".join(TRIVIAL_TEST.format(number=number) for number in range(count))
    (directory / "test_trivial.py").write_text(body)
    return directory


def plain_items_ms(directory: Path, count: int, args: Sequence[str] = ()) -> float:
    """Wall milliseconds of a pytest process (with `args`) running `count` plain passing
    items, which a conftest in `directory` collects from one file."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "conftest.py").write_text(PLAIN_ITEMS_CONFTEST)
    (directory / "items.count").write_text(f"{count}\n")
    started = time.perf_counter()
    status = run_in(directory, pytest_command(args))
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    # A reference that collected nothing would time pytest's start-up alone.
    if status != 0:
        raise RuntimeError(f"{count} plain items in {directory} did not all pass: exit {status}")
    return elapsed_ms


def write_replay_engine(directory: Path) -> str:
    """Put the replaying engine where a pytest run in `directory` imports it from
    (`python -m` puts the working directory on sys.path); its --qualbench-engine value."""
    (directory / f"{REPLAY_ENGINE_MODULE}.py").write_text(REPLAY_ENGINE_SOURCE)
    return REPLAY_ENGINE


def write_fixture_set(directory: Path, chunks: int) -> Path:
    """bench_fixtures/perf.jsonl: each entry with one case asking for three of its words."""
    lines = []
    for entry in build_corpus(chunks, query_count=0).entries:
        words = sorted(set(_WORD.findall(entry.haystack)), key=lambda word: (-len(word), word))
        case = {
            "case_id": f"{entry.id}_q1",
            "query": " ".join(words[:3]),
            "needles": words[:1],
            "expected_layer": "rrf(porter+trigram)",
            "expected_rank_ceiling": 10,
        }
        line = {
            "id": entry.id,
            "content_type": entry.content_type,
            "haystack": entry.haystack,
            "source_label": entry.source_label,
            "source_kind": entry.source_kind,
            "cases": [case] if words else [],
        }
        lines.append(json.dumps(line))
    (directory / "bench_fixtures").mkdir(parents=True)
    (directory / "bench_fixtures" / "perf.jsonl").write_text("\n".join(lines) + "\n")
    return directory


def copy_fixtures(fixtures: Path, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copytree(fixtures, directory / "bench_fixtures", dirs_exist_ok=True)
    return directory


def qualbench_run(directory: Path) -> QualbenchRun:
    """One timed `pytest --qualbench` run over directory/bench_fixtures."""
    report_path = directory / "report.json"
    timed = timed_pytest(directory, ["--qualbench", f"--qualbench-report={report_path}"])
    report = json.loads(report_path.read_text())
    latency = report["latency"]
    cases = report["cases"]
    # Index and search milliseconds as the report states them (docs/report-format.md).
    return QualbenchRun(
        timed=timed,
        index_ms=float(latency["overall"]["index_ms"] or 0.0),
        search_ms=sum(float(case["latency_ms"]) for case in cases),
        cases=len(cases),
    )


def case_per_file_fixtures(fixtures: Path, directory: Path) -> Path:
    """A directory whose bench_fixtures/ holds, of each file of `fixtures`, the first case
    of its first entry: one case per content type (a file holds one content type)."""
    (directory / "bench_fixtures").mkdir(parents=True, exist_ok=True)
    for fixture_file in sorted(fixtures.glob("*.jsonl")):
        entry = json.loads(fixture_file.read_text(encoding="utf-8").splitlines()[0])
        entry["cases"] = entry["cases"][:1]
        (directory / "bench_fixtures" / fixture_file.name).write_text(
            json.dumps(entry) + "\n", encoding="utf-8"
        )
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
