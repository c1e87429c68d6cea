"""Index builds: their own line per content type, no case's duration, progress when long."""

from __future__ import annotations

import json
import re

import pytest

from pytest_qualbench.plugin import indexing
from tests.conftest import case, entry, jsonl

SLOW_ENGINE = """
import time
from pytest_qualbench.engine.types import Chunk, Result

class Slow:
    def index(self, entries):
        time.sleep(0.4)
        self._chunks = [Chunk(e.haystack, "", e.source_label, e.source_kind, 0, e.id) for e in entries]

    def chunks(self):
        return tuple(self._chunks)

    def search(self, query, *, limit=10, kinds=()):
        return [Result(c.text, "porter") for c in self._chunks if query in c.text][:limit]
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(slow=SLOW_ENGINE)
    pytester.syspathinsert()
    pytester.makeini("[pytest]\nqualbench_engine = slow:Slow\n")
    (pytester.path / "bench_fixtures").mkdir()
    markdown = [
        entry("md_001", "alpha", [case("md_001_q1", "alpha", ["alpha"])]),
        entry("md_002", "beta", []),
    ]
    (pytester.path / "bench_fixtures" / "markdown.jsonl").write_text(jsonl(markdown))
    return pytester


def test_each_build_has_its_own_line_and_no_case_pays_for_it(project: pytest.Pytester) -> None:
    result = project.runpytest("--qualbench", "--durations=0", "-vv")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["indexing markdown: 2 entries -> 2 chunks, * ms"])
    durations = [
        float(match.group(1))
        for match in re.finditer(
            r"^(\d+\.\d+)s (?:setup|call|teardown) ", result.stdout.str(), re.M
        )
    ]
    assert durations and max(durations) < 0.3


def test_quiet_hides_the_build_line(project: pytest.Pytester) -> None:
    result = project.runpytest("--qualbench", "-q")
    assert "indexing markdown" not in result.stdout.str()


def test_a_long_build_shows_its_elapsed_time(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(indexing, "PROGRESS_AFTER_S", 0.1)
    monkeypatch.setattr(indexing, "LOG_TICK_S", 0.2)
    result = project.runpytest("--qualbench")
    result.stdout.fnmatch_lines(
        ["indexing markdown: 2 entries ... * s", "indexing markdown: 2 entries -> 2 chunks, *ms"]
    )


# The first search of a process pays for lazy setup; the cases' latency must not hold it.
FIRST_SEARCH_SLOW_ENGINE = """
import time
from pytest_qualbench.engine.types import Result

class FirstSlow:
    searched = False

    def index(self, entries):
        self.texts = [e.haystack for e in entries]

    def search(self, query, *, limit=10, kinds=()):
        if not FirstSlow.searched:
            FirstSlow.searched = True
            time.sleep(0.3)
        return [Result(t, "porter") for t in self.texts if query in t][:limit]
"""


def test_the_first_searchs_warm_up_is_kept_out_of_the_latency(project: pytest.Pytester) -> None:
    project.makepyfile(firstslow=FIRST_SEARCH_SLOW_ENGINE)
    result = project.runpytest(
        "--qualbench", "--qualbench-engine=firstslow:FirstSlow", "-v", "-p", "no:randomly"
    )
    result.assert_outcomes(passed=1)
    latency = json.loads((project.path / ".qualbench" / "report.json").read_text())["latency"]
    assert latency["markdown"]["p50_ms"] < 100
    assert latency["markdown"]["warmup_ms"] >= 300
    result.stdout.fnmatch_lines(["latency*p50 ms*p95 ms*index ms*warm-up ms", "markdown *"])
