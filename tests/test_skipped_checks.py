"""Checks an engine does not take read as skipped everywhere: failure block, summary, JUnit, HTML."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from pytest_qualbench.engine.types import Result
from pytest_qualbench.evaluation.judge import judge
from pytest_qualbench.evaluation.outcomes import check_outcomes, failure_reason
from pytest_qualbench.fixtures.schema import Case, Vocabulary
from tests.conftest import WriteFixture, case, entry

# The word engine's results, labelled with the one layer this engine declares.
DENSE_ENGINE = """
import dataclasses

from wordengine import WordEngine

class Dense(WordEngine):
    layers = ("dense",)

    def search(self, query, **kwargs):
        return [dataclasses.replace(r, layer="dense") for r in super().search(query, **kwargs)]
"""

HAYSTACK = "# Pool\n\n## Connection Pool Settings\nmaxIdleConns\n\nunrelated pool words"


@pytest.fixture
def dense_project(pytester: pytest.Pytester, write_fixture: WriteFixture) -> pytest.Pytester:
    from tests.conftest import WORD_ENGINE

    pytester.makepyfile(wordengine=WORD_ENGINE, dense=DENSE_ENGINE)
    pytester.syspathinsert()
    pytester.makeini("[pytest]\nqualbench_engine = dense:Dense\n")
    builtin_layer = "rrf(porter+trigram)"
    write_fixture(
        "markdown.jsonl",
        [
            entry(
                "md_001",
                HAYSTACK,
                [
                    # Rank 3 over a ceiling of 1: fails rank; its layer is not checked.
                    case("md_001_q1", "pool", ["unrelated pool words"], layer=builtin_layer),
                    case("md_001_q2", "maxidleconns", ["maxIdleConns"], layer=builtin_layer),
                ],
            )
        ],
    )
    return pytester


REASON = "engine dense:Dense does not report the built-in layers"


def test_the_failure_block_shows_the_layer_as_skipped_with_why(
    dense_project: pytest.Pytester,
) -> None:
    result = dense_project.runpytest("--qualbench", "-rf")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "rank 3 > ceiling 1; layer not checked",
            "*checks:",
            "  needles  pass  1 of 1 needles found",
            "  rank     FAIL  rank 3 > ceiling 1",
            f"  layer    skip  not checked: {REASON}; first relevant result from dense",
        ]
    )
    result.stdout.no_fnmatch_line("*layer*FAIL*")
    result.stdout.fnmatch_lines(["FAILED *md_001_q1 - rank 3 > ceiling 1; layer n*"])
    # One summary line says why, for every case it concerns.
    result.stdout.fnmatch_lines([f"layer: not checked — {REASON} (2 positive cases)"])


def test_junit_and_the_report_name_the_skipped_check(dense_project: pytest.Pytester) -> None:
    dense_project.runpytest("--qualbench", "--junitxml=junit.xml")
    properties = {
        prop.get("name"): prop.get("value")
        for testcase in ET.parse(dense_project.path / "junit.xml").iter("testcase")
        if testcase.get("name") == "md_001_q1"
        for prop in testcase.iter("property")
    }
    assert properties["qualbench.skipped"] == f"layer: not checked — {REASON}"
    report = json.loads((dense_project.path / ".qualbench/report.json").read_text())
    assert [c["layer_not_checked"] for c in report["cases"]] == [REASON, REASON]
    assert report["overall"]["layer_accuracy"] is None


def test_the_html_report_shows_the_skipped_check_and_why(dense_project: pytest.Pytester) -> None:
    pytest.importorskip("jinja2")
    dense_project.runpytest("--qualbench", "--qualbench-html=report.html")
    page = (dense_project.path / "report.html").read_text()
    assert f'<p class="hint">layer: not checked — {REASON} (2 positive cases)</p>' in page
    assert f"skipped: not checked — {REASON}</td>" in page


def test_a_case_asking_for_any_layer_is_not_shown_as_failing_its_layer() -> None:
    # Before: the outcome compared `porter` with `any` and said FAIL, though the judge
    # had not applied the check.
    any_case = Case("q", "pool", ("pool",), "any", 1, "e", "markdown", "f", 1)
    results = [Result("pool", "porter", "t", 1.0, "s", 0)]
    vocabulary = Vocabulary(engine="builtin")
    record = judge(
        any_case,
        results,
        relevant_total=1,
        layer_not_checked=vocabulary.layer_not_checked("any"),
    )
    layer = check_outcomes(record)[2]
    assert (layer.passed, layer.text) == (
        None,
        "not checked: the case accepts any layer; first relevant result from porter",
    )
    # The case's own choice, not the engine's: no "layer not checked" in the one line.
    assert failure_reason(record) == ""
