"""Ordinary runs reuse a content type's index from the on-disk cache; xdist workers too."""

from __future__ import annotations

import json

import pytest

from pytest_qualbench.report.build import without_timings
from pytest_qualbench.report.model import Report
from tests.conftest import WriteFixture, case, entry

# The stand-in engine of tests/conftest.py, logging each build to a file, so a test
# can count how many processes built an index rather than loading it.
COUNTING_ENGINE = """
import os
from wordengine import WordEngine

class CountingEngine(WordEngine):
    def index(self, entries):
        with open(os.environ["BUILD_LOG"], "a") as log:
            log.write(entries[0].content_type + "\\n")
        super().index(entries)
"""


@pytest.fixture
def bench(write_fixture: WriteFixture, word_engine: None, pytester: pytest.Pytester) -> None:
    for content_type, prefix in (("markdown", "md"), ("json", "js")):
        write_fixture(
            f"{content_type}.jsonl",
            [
                entry(
                    f"{prefix}_{n:03d}",
                    f"topic{n} shared words\n\nmore about topic{n}",
                    [case(f"{prefix}_{n:03d}_q1", f"topic{n}", [f"topic{n} shared"])],
                    content_type=content_type,
                )
                for n in range(3)
            ],
        )
    pytester.makepyfile(countingengine=COUNTING_ENGINE)
    pytester.makeini("[pytest]\nqualbench_engine = countingengine:CountingEngine\n")


def report(pytester: pytest.Pytester) -> Report:
    data: Report = json.loads((pytester.path / ".qualbench" / "report.json").read_text())
    return data


def builds(pytester: pytest.Pytester) -> list[str]:
    log = pytester.path / "builds.log"
    return sorted(log.read_text().split()) if log.exists() else []


@pytest.mark.usefixtures("bench")
def test_a_second_run_loads_the_index_it_built(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BUILD_LOG", str(pytester.path / "builds.log"))
    first = pytester.runpytest("--qualbench")
    first.stdout.fnmatch_lines(
        ["indexing json: * -> 6 chunks, built in * ms", "indexing markdown: *, built in * ms"]
    )
    first_report = report(pytester)
    assert first_report["latency"]["markdown"]["index"] == "built"
    assert builds(pytester) == ["json", "markdown"]
    # The relevant sets' substring indexes are cached beside the engine's.
    substrings = pytester.path / ".qualbench" / "index-cache" / "substrings"
    stored = {path.name: path.stat().st_ino for path in substrings.iterdir()}
    assert {name for name in stored if name.endswith(".idx")} == {"json.idx", "markdown.idx"}
    assert len([name for name in stored if name.endswith(".arrays")]) == 2
    second = pytester.runpytest("--qualbench")
    second.stdout.fnmatch_lines(
        [
            "indexing json: * -> 6 chunks, cached (* ms)",
            "indexing markdown: *, cached (* ms)",
        ]
    )
    assert builds(pytester) == ["json", "markdown"]
    assert {path.name: path.stat().st_ino for path in substrings.iterdir()} == stored
    second_report = report(pytester)
    assert second_report["latency"]["json"]["index"] == "cached"
    assert without_timings(second_report) == without_timings(first_report)


@pytest.mark.usefixtures("bench")
def test_an_edited_fixture_rebuilds_its_index(
    pytester: pytest.Pytester, write_fixture: WriteFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BUILD_LOG", str(pytester.path / "builds.log"))
    pytester.runpytest("--qualbench")
    write_fixture(
        "json.jsonl",
        [
            entry(
                "js_000",
                "topic0 shared",
                [case("js_000_q1", "topic0", ["topic0"])],
                content_type="json",
            )
        ],
    )
    result = pytester.runpytest("--qualbench")
    # The dataset hash covers every fixture byte, so both keys changed.
    result.stdout.fnmatch_lines(
        ["indexing json: *, built in * ms", "indexing markdown: *, built in * ms"]
    )
    assert builds(pytester) == ["json", "json", "markdown", "markdown"]


@pytest.mark.usefixtures("bench")
def test_xdist_workers_load_the_index_the_controller_built(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("xdist")
    monkeypatch.setenv("BUILD_LOG", str(pytester.path / "builds.log"))
    result = pytester.runpytest_subprocess("--qualbench", "-n", "2")
    assert result.ret == 0
    # One build per content type (the controller's), however many workers ran its cases.
    assert builds(pytester) == ["json", "markdown"]
    parallel = report(pytester)
    assert len(parallel["cases"]) == 6
    assert {parallel["latency"][name]["index"] for name in ("json", "markdown")} == {"built"}
