"""Nothing hangs the gate: slow searches time out, crashed workers are accounted for.

Issue 16. Every run here is a subprocess with a timeout, so a regression fails
the test instead of hanging the suite.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import WriteFixture, case, entry, jsonl, worker_crashing_engine

SLOW_ENGINE = """
import time
import wordengine

class Slow(wordengine.WordEngine):
    def search(self, query, *, limit=10, kinds=()):
        if query == "sigma":
            time.sleep(120)
        return super().search(query, limit=limit, kinds=kinds)
"""

CRASHING_ENGINE = worker_crashing_engine("sigma")


def cases(prefix: str, content_type: str, crash_id: str = "") -> list[dict[str, Any]]:
    return [
        entry(
            f"{prefix}_a",
            "alpha beta\n\ngamma delta",
            [case(f"{prefix}_a_q1", "alpha", ["alpha beta"])],
            content_type=content_type,
        ),
        entry(
            f"{prefix}_b",
            "omega kappa\n\nsigma theta",
            [case(crash_id or f"{prefix}::b::q1", "sigma", ["sigma theta"])],
            content_type=content_type,
        ),
    ]


def read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@pytest.mark.usefixtures("word_engine")
@pytest.mark.parametrize("where", ["option", "ini"])
def test_search_past_the_timeout_fails_its_case_and_the_run_goes_on(
    pytester: pytest.Pytester, write_fixture: WriteFixture, where: str
) -> None:
    write_fixture("markdown.jsonl", cases("md", "markdown"))
    pytester.makepyfile(slow=SLOW_ENGINE)
    args = ["--qualbench", "--qualbench-engine=slow:Slow", "-p", "no:cacheprovider"]
    if where == "option":
        args.append("--qualbench-timeout=1")
    else:
        ini = (pytester.path / "tox.ini").read_text()
        (pytester.path / "tox.ini").write_text(ini + "\nqualbench_timeout = 1\n")
    result = pytester.runpytest_subprocess(*args, timeout=60)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*md::b::q1*", "*timed out after 1*s*"])
    report = read(pytester.path / ".qualbench" / "report.json")
    assert len(report["cases"]) == 2
    assert any("timed out" in str(f["actual"]) for f in report["failures"])


# Every mode docs/distributed.md lists; loadfile, loadscope and loadgroup requeue the
# crashed case in xdist's own schedulers, and a case that always crashes then hangs.
DIST_MODES = ["load", "worksteal", "loadgroup", "loadfile", "loadscope"]


@pytest.mark.usefixtures("word_engine")
@pytest.mark.parametrize("mode", DIST_MODES)
def test_every_dist_mode_survives_a_worker_crash(
    pytester: pytest.Pytester, write_fixture: WriteFixture, mode: str
) -> None:
    pytest.importorskip("xdist")
    write_fixture("markdown.jsonl", cases("md", "markdown"))
    write_fixture("json.jsonl", cases("js", "json"))
    pytester.makepyfile(crashing=CRASHING_ENGINE)
    result = pytester.runpytest_subprocess(
        "--qualbench",
        "-n",
        "2",
        "--dist",
        mode,
        "--qualbench-engine=crashing:Crashing",
        # Up to three worker start-ups in a row: slow on a loaded machine, never endless.
        timeout=240,
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    report = read(pytester.path / ".qualbench" / "report.json")
    crashed = {f["case_id"] for f in report["failures"] if f["type"] == "error"}
    assert "md::b::q1" in crashed or "js::b::q1" in crashed
    assert report["overall"]["cases"] == 4


@pytest.mark.usefixtures("word_engine")
@pytest.mark.parametrize(("outside_rootdir", "crash_id"), [(False, "md::b::q1"), (True, "md_b_q1")])
def test_crashed_case_is_attributed_from_the_items_own_data(
    pytester: pytest.Pytester,
    tmp_path_factory: pytest.TempPathFactory,
    outside_rootdir: bool,
    crash_id: str,
) -> None:
    pytest.importorskip("xdist")
    folder = tmp_path_factory.mktemp("outside") if outside_rootdir else pytester.path / "bench"
    folder.mkdir(exist_ok=True)
    (folder / "markdown.jsonl").write_text(jsonl(cases("md", "markdown", crash_id)))
    ini = (pytester.path / "tox.ini").read_text()
    (pytester.path / "tox.ini").write_text(ini + f"\nqualbench_paths = {folder}\n")
    pytester.makepyfile(crashing=CRASHING_ENGINE)
    result = pytester.runpytest_subprocess(
        "--qualbench", "-n", "2", "--qualbench-engine=crashing:Crashing", timeout=120
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    report = read(pytester.path / ".qualbench" / "report.json")
    assert {c["case_id"] for c in report["cases"]} == {"md_a_q1", crash_id}
    assert report["overall"]["cases"] == 2
    assert report["overall"]["mrr"] == 0.5


# index() misbehaving in every process: forever, or by killing the process (abort()
# is what a crashing native library does). Issue 25 finding 3: under xdist the
# controller built every index itself, outside the timeout and outside any worker.
HANGING_INDEX_ENGINE = """
import time
import wordengine

class HangingIndex(wordengine.WordEngine):
    def index(self, entries):
        time.sleep(600)
"""

ABORTING_INDEX_ENGINE = """
import os
import wordengine

class AbortingIndex(wordengine.WordEngine):
    def index(self, entries):
        os.abort()
"""


@pytest.mark.usefixtures("word_engine")
def test_a_hanging_index_under_xdist_stops_the_run_within_the_timeout(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    pytest.importorskip("xdist")
    write_fixture("markdown.jsonl", cases("md", "markdown"))
    write_fixture("json.jsonl", cases("js", "json"))
    pytester.makepyfile(hanging=HANGING_INDEX_ENGINE)
    result = pytester.runpytest_subprocess(
        "--qualbench",
        "-n",
        "2",
        "--qualbench-timeout=3",
        "--qualbench-engine=hanging:HangingIndex",
        timeout=150,
    )
    # An index build past the timeout is an engine that could not start (issue 26).
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.assert_outcomes()
    result.stderr.fnmatch_lines(
        ["ERROR: qualbench: engine hanging:HangingIndex could not start for *: "
         "DeadlineExceeded: indexing * timed out after 3 s*",
         "  fix: *",
         "  no case ran and no report was written"]
    )  # fmt: skip
    assert "raised at" not in result.stderr.str()  # no frame of the engine shows a hang
    assert not (pytester.path / ".qualbench" / "report.json").exists()


@pytest.mark.usefixtures("word_engine")
def test_an_aborting_index_under_xdist_fails_its_cases_and_the_report_is_written(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    pytest.importorskip("xdist")
    write_fixture("markdown.jsonl", cases("md", "markdown"))
    pytester.makepyfile(aborting=ABORTING_INDEX_ENGINE)
    result = pytester.runpytest_subprocess(
        "--qualbench", "-n", "2", "--qualbench-engine=aborting:AbortingIndex", timeout=240
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*= qualbench =*", "overall*2*"])
    report = read(pytester.path / ".qualbench" / "report.json")
    assert {f["case_id"] for f in report["failures"]} == {"md_a_q1", "md::b::q1"}


# Every engine call runs under the timeout, not only index() and search() (finding 5).
SLOW_EXTRAS_ENGINE = """
import time
import wordengine

class SlowChunks(wordengine.WordEngine):
    def chunks(self):
        time.sleep(600)
        return super().chunks()

class SlowCorrection(wordengine.WordEngine):
    def corrected_query(self, query):
        if query == "sigma":
            time.sleep(600)
        return None
"""


@pytest.mark.usefixtures("word_engine")
def test_a_hanging_chunks_stops_the_run_within_the_timeout(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write_fixture("markdown.jsonl", cases("md", "markdown"))
    pytester.makepyfile(slowextras=SLOW_EXTRAS_ENGINE)
    result = pytester.runpytest_subprocess(
        "--qualbench", "--qualbench-timeout=2", "--qualbench-engine=slowextras:SlowChunks",
        timeout=120,
    )  # fmt: skip
    # chunks() is part of indexing the content type: past the timeout, the engine
    # could not start, and the run stops before its cases (issue 26).
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.assert_outcomes()
    result.stderr.fnmatch_lines(
        ["ERROR: qualbench: engine slowextras:SlowChunks could not start for markdown: "
         "DeadlineExceeded: chunks() of markdown timed out after 2 s*"]
    )  # fmt: skip
    assert not (pytester.path / ".qualbench" / "report.json").exists()


@pytest.mark.usefixtures("word_engine")
def test_a_hanging_corrected_query_fails_its_case_within_the_timeout(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write_fixture("markdown.jsonl", cases("md", "markdown"))
    pytester.makepyfile(slowextras=SLOW_EXTRAS_ENGINE)
    result = pytester.runpytest_subprocess(
        "--qualbench", "--qualbench-timeout=2", "--qualbench-engine=slowextras:SlowCorrection",
        timeout=120,
    )  # fmt: skip
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*md::b::q1 timed out after 2 s*"])
    assert len(read(pytester.path / ".qualbench" / "report.json")["cases"]) == 2
