"""Distributed runs: the same report from two workers as from one process."""

from __future__ import annotations

import json
import shutil

import pytest

from pytest_qualbench.report.build import without_timings
from pytest_qualbench.report.model import Report
from tests.conftest import WriteFixture, case, entry, worker_crashing_engine

pytest.importorskip("xdist")


@pytest.fixture
def bench(write_fixture: WriteFixture, word_engine: None) -> None:
    for content_type, prefix in (("markdown", "md"), ("json", "json"), ("plaintext", "txt")):
        write_fixture(
            f"{content_type}.jsonl",
            [
                entry(
                    f"{prefix}_{n:03d}",
                    f"topic{n} shared words\n\nmore about topic{n}",
                    [
                        case(f"{prefix}_{n:03d}_q1", f"topic{n}", [f"topic{n} shared"], ceiling=1),
                        case(f"{prefix}_{n:03d}_q2", "shared", [f"topic{n} shared"], ceiling=2),
                        case(f"{prefix}_{n:03d}_q_neg", "zzyzx", []),
                    ],
                    content_type=content_type,
                )
                for n in range(4)
            ],
        )


def read(pytester: pytest.Pytester, name: str) -> Report:
    data: Report = json.loads((pytester.path / name).read_text())
    return data


def run_crashing_engine(pytester: pytest.Pytester) -> pytest.RunResult:
    """Two workers over the `Crashing` engine of crashing.py, the report in r.json."""
    return pytester.runpytest_subprocess(
        "--qualbench",
        "-n",
        "2",
        "--qualbench-engine=crashing:Crashing",
        "--qualbench-report=r.json",
    )


def crashed_cases(report: Report) -> set[str]:
    """The cases the report holds as errors: those whose worker died on them."""
    return {f["case_id"] for f in report["failures"] if f["type"] == "error"}


@pytest.mark.usefixtures("bench")
def test_two_workers_match_serial(pytester: pytest.Pytester) -> None:
    serial = pytester.runpytest_subprocess("--qualbench", "--qualbench-report=serial.json")
    parallel = pytester.runpytest_subprocess(
        "--qualbench", "-n", "2", "--qualbench-report=parallel.json"
    )
    assert serial.ret == parallel.ret
    serial_report, parallel_report = read(pytester, "serial.json"), read(pytester, "parallel.json")
    assert without_timings(serial_report) == without_timings(parallel_report)
    assert len(parallel_report["cases"]) == 36
    assert sorted(parallel_report["latency"]) == ["json", "markdown", "overall", "plaintext"]
    assert all(row["index_ms"] is not None for row in parallel_report["latency"].values())
    parallel.stdout.fnmatch_lines(["*= qualbench =*", "overall*24*"])


WIRE_PROBE = """
import json

copies = []


def pytest_runtest_logreport(report):
    if report.when == "call":
        copies.append(hasattr(report, "qualbench_case"))


def pytest_sessionfinish(session):
    if not hasattr(session.config, "workeroutput"):
        with open("copies.json", "w") as out:
            json.dump(copies, out)
"""


@pytest.mark.usefixtures("bench")
@pytest.mark.parametrize(("args", "copied"), [((), False), (("-n", "2"), True)])
def test_only_a_workers_records_travel_as_a_wire_copy(
    pytester: pytest.Pytester, args: tuple[str, ...], copied: bool
) -> None:
    # A serial run's collector takes each record from its item: the report is whole
    # though no report carries the copy.
    pytester.makeconftest(WIRE_PROBE)
    pytester.runpytest_subprocess("--qualbench", *args)
    copies = json.loads((pytester.path / "copies.json").read_text())
    assert copies == [copied] * 36
    assert len(read(pytester, ".qualbench/report.json")["cases"]) == 36


# Kills the worker that searches "topic1": json_001_q1, md_001_q1 and txt_001_q1.
CRASHING_ON_TOPIC1 = worker_crashing_engine("topic1")


@pytest.mark.usefixtures("bench")
def test_crashed_worker_keeps_its_case_in_the_denominator(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(crashing=CRASHING_ON_TOPIC1)
    result = run_crashing_engine(pytester)
    report = read(pytester, "r.json")
    assert crashed_cases(report) == {"json_001_q1", "md_001_q1", "txt_001_q1"}
    assert len(report["cases"]) == 36
    assert report["overall"]["cases"] == 24
    assert result.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.usefixtures("bench")
def test_out_of_replacement_workers_the_run_is_unfinished_not_a_subset(
    pytester: pytest.Pytester,
) -> None:
    pytester.runpytest("--qualbench")
    report = pytester.path / ".qualbench" / "report.json"
    complete = report.read_bytes()
    pytester.makepyfile(crashing=CRASHING_ON_TOPIC1)
    # No worker is replaced: xdist stops handing out cases at the first crash.
    result = pytester.runpytest_subprocess(
        "--qualbench", "-n", "2", "--max-worker-restart=0", "--qualbench-engine=crashing:Crashing"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert report.read_bytes() == complete
    assert not (pytester.path / ".qualbench" / "report.subset.json").exists()
    partial = read(pytester, ".qualbench/report.partial.json")
    assert partial["complete"] is False
    ran = len(partial["cases"])
    assert 0 < ran < 36
    result.stdout.fnmatch_lines(
        [f"*run did not finish ({36 - ran} of 36 selected tests never ran)*"]
    )


# The race of xdist issue #204, made certain. `load` hands json_000_q1 to one worker
# and json_002_q1 to the other, in their first four cases; each dies on it. The
# controller reads the second worker's last report slowly, so it has not yet seen
# that worker go when it handles the first one's death, and hands it the first one's
# unfinished cases.
SLOW_TO_SEE_THE_SECOND_DEATH = """
import pathlib, time

def pytest_report_from_serializable(config, data):
    # Runs in the thread that reads the worker: its end of file waits behind this.
    if data.get("nodeid", "").endswith("json_002_q1") and data.get("when") == "setup":
        time.sleep(3)

def pytest_testnodedown(node, error):
    # The main thread: both workers are dead before it reschedules.
    deadline = time.monotonic() + 30
    while len(list(pathlib.Path().glob("crashed.*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)
"""

CRASHING_TWO_CASES = """
import os, pathlib
import wordengine

class Crashing(wordengine.WordEngine):
    def search(self, query, *, limit=10, kinds=()):
        results = super().search(query, limit=limit, kinds=kinds)
        # The json index's engine: md_000_q1 and the others asking the same stay.
        if query in ("topic0", "topic2") and results[0].source.startswith("bench-json"):
            pathlib.Path(f"crashed.{query}").touch()
            os._exit(1)
        return results
"""


@pytest.mark.usefixtures("bench")
def test_cases_handed_to_a_worker_already_dead_are_run_by_its_replacement(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(SLOW_TO_SEE_THE_SECOND_DEATH)
    pytester.makepyfile(crashing=CRASHING_TWO_CASES)
    result = run_crashing_engine(pytester)
    assert "INTERNALERROR" not in result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    report = read(pytester, "r.json")
    assert report["complete"] is True
    assert len(report["cases"]) == 36
    assert crashed_cases(report) == {"json_000_q1", "json_002_q1"}


# Logs which process indexed which content type: indexing is lazy, per process.
LOGGING_ENGINE = """
import os
import wordengine

class Logging(wordengine.WordEngine):
    def index(self, entries):
        with open("index.log", "a") as log:
            worker = os.environ.get("PYTEST_XDIST_WORKER", "serial")
            log.write(f"{worker} {entries[0].content_type}\\n")
        super().index(entries)
"""


@pytest.mark.usefixtures("bench")
def test_loadfile_on_auto_workers_matches_serial_and_indexes_each_type_once(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(logging_engine=LOGGING_ENGINE)
    engine = "--qualbench-engine=logging_engine:Logging"
    # In-process is enough for the serial reference, and saves a subprocess start.
    serial = pytester.runpytest("--qualbench", engine, "--qualbench-report=serial.json")
    (pytester.path / "index.log").unlink()
    # Without the serial run's index cache, so the parallel run has to index.
    shutil.rmtree(pytester.path / ".qualbench" / "index-cache")
    parallel = pytester.runpytest_subprocess(
        "--qualbench", engine, "-n", "auto", "--dist", "loadfile", "--qualbench-report=auto.json"
    )
    assert serial.ret == parallel.ret
    assert without_timings(read(pytester, "serial.json")) == without_timings(
        read(pytester, "auto.json")
    )
    # Each type is indexed once (by the controller, before the workers load it).
    indexed = sorted(
        line.split()[1] for line in (pytester.path / "index.log").read_text().splitlines()
    )
    assert indexed == ["json", "markdown", "plaintext"]
