"""Known failures: a case's `xfail` field, strict, in real pytest sessions."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from pytest_qualbench.fixtures.parsing import parse_entry
from pytest_qualbench.fixtures.schema import ExpectedFailure
from tests.conftest import WriteFixture, case, entry

pytestmark = pytest.mark.usefixtures("word_engine")

HAYSTACK = "# Pool\n\n## Connection Pool Settings\nmaxIdleConns\n\nunrelated pool words"


def known(case_fields: dict[str, Any], xfail: Any) -> dict[str, Any]:
    return {**case_fields, "xfail": xfail}


# The word engine returns the chunks holding every query word, in order: "pool"
# finds the needle at rank 3, over a ceiling of 1 (a rank failure only).
AT_RANK_3 = case("md_001_q1", "pool", ["unrelated pool words"])
PASSING = case("md_001_q2", "maxidleconns", ["maxIdleConns"])
NOT_FOUND = case("md_001_q3", "nowhere", ["maxIdleConns"])


def write(write_fixture: WriteFixture, *cases: dict[str, Any]) -> None:
    write_fixture("markdown.jsonl", [entry("md_001", HAYSTACK, list(cases))])


def test_a_known_failure_that_fails_as_declared_is_xfailed_and_still_counts(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write(write_fixture, known(AT_RANK_3, {"reason": "answer at rank 3", "checks": ["rank"]}))
    result = pytester.runpytest("--qualbench", "-rx")
    result.assert_outcomes(xfailed=1)
    result.stdout.fnmatch_lines(["XFAIL *md_001_q1* - known failure: answer at rank 3"])
    report = json.loads((pytester.path / ".qualbench/report.json").read_text())
    # It counts in the metrics as the failure it is: hit@1 0, MRR 1/3.
    assert report["overall"]["hit@1"] == 0.0
    assert report["overall"]["mrr"] == pytest.approx(1 / 3, abs=1e-6)
    assert [record["passed"] for record in report["cases"]] == [False]


def test_a_bare_reason_accepts_any_check_of_the_case(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write(write_fixture, known(NOT_FOUND, "not found yet"))
    pytester.runpytest("--qualbench").assert_outcomes(xfailed=1)


def test_a_known_failure_that_passes_fails_the_run(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write(write_fixture, known(PASSING, {"reason": "used to miss", "checks": ["rank"]}))
    result = pytester.runpytest("--qualbench")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*[[]qualbench[]] md_001_q2*", "[[]XPASS(strict)[]] known failure: used to miss"]
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_known_failure_that_fails_an_undeclared_check_fails_the_run(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    # Declared: rank. Now the answer is not found at all: needles fail too.
    write(write_fixture, known(NOT_FOUND, {"reason": "answer at rank 4", "checks": ["rank"]}))
    result = pytester.runpytest("--qualbench")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*[[]qualbench[]] md_001_q3*",
            "0 of 1 needles found, missing 'maxIdleConns'; no relevant "
            "result in the 0 returned, ceiling 1; no relevant result, so no layer (expected porter) "
            "(known failure, but needles, layer failed too: its xfail declares rank only, "
            "'answer at rank 4')",
        ]
    )


def test_an_undeclared_layer_failure_fails_the_run(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    # The word engine labels every result porter: a trigram case fails its layer.
    at_rank_3_trigram = {**AT_RANK_3, "expected_layer": "trigram"}
    write(write_fixture, known(at_rank_3_trigram, {"reason": "rank 3", "checks": ["rank"]}))
    result = pytester.runpytest("--qualbench")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["rank 3 > ceiling 1; layer porter, expected trigram (known failure, but layer failed too*"]
    )


def test_an_engine_error_is_never_the_declared_failure(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    pytester.makepyfile(
        broken="""
        from wordengine import WordEngine

        class Broken(WordEngine):
            def search(self, query, **kwargs):
                raise RuntimeError("engine down")
        """
    )
    write(write_fixture, known(AT_RANK_3, "answer at rank 3"))
    result = pytester.runpytest("--qualbench", "--qualbench-engine=broken:Broken")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["FAILED *md_001_q1* - RuntimeError: engine down"])


def test_narrowed_checks_make_a_pass_not_strict(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    # Rank is not checked: the case passes, which says nothing about its known failure.
    write(write_fixture, known(AT_RANK_3, {"reason": "answer at rank 3", "checks": ["rank"]}))
    result = pytester.runpytest("--qualbench", "--qualbench-checks=needles")
    result.assert_outcomes(xpassed=1)
    assert result.ret == pytest.ExitCode.OK


def test_runxfail_reports_known_failures_as_plain_failures(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write(write_fixture, known(AT_RANK_3, "answer at rank 3"))
    result = pytester.runpytest("--qualbench", "--runxfail")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["FAILED *md_001_q1* - rank 3 > ceiling 1"])


def test_junit_shows_a_known_failure_as_skipped_xfail(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write(
        write_fixture,
        known(AT_RANK_3, {"reason": "answer at rank 3", "checks": ["rank"]}),
        known(PASSING, "used to miss"),
    )
    pytester.runpytest("--qualbench", "--junitxml=junit.xml")
    cases = {
        testcase.get("name"): testcase
        for testcase in ET.parse(pytester.path / "junit.xml").iter("testcase")
    }
    skipped = cases["md_001_q1"].find("skipped")
    assert skipped is not None
    assert skipped.get("type") == "pytest.xfail"
    assert skipped.get("message") == "known failure: answer at rank 3"
    failure = cases["md_001_q2"].find("failure")
    assert failure is not None
    assert "XPASS(strict)" in (failure.get("message") or "") + (failure.text or "")


def test_an_impossible_declaration_is_a_located_fixture_error(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    no_ceiling = {**AT_RANK_3, "expected_rank_ceiling": 0}
    write(write_fixture, known(no_ceiling, {"reason": "rank 3", "checks": ["rank"]}))
    result = pytester.runpytest("--qualbench")
    result.stdout.fnmatch_lines(
        [
            "*invalid fixture line: bench_fixtures/markdown.jsonl:1: cases[[]0[]].xfail.checks[[]0[]]: "
            "the case cannot fail 'rank': its expected_rank_ceiling is 0 (no ceiling)"
        ]
    )


def parsed_xfail(xfail: Any, case_fields: dict[str, Any] = AT_RANK_3) -> Any:
    raw = entry("md_001", HAYSTACK, [known(case_fields, xfail)])
    parsed, errors = parse_entry(raw, "f.jsonl", 7)
    if errors:
        return [str(error) for error in errors]
    assert parsed is not None
    return parsed.cases[0].xfail


def test_the_xfail_field_reads_a_reason_or_an_object() -> None:
    assert parsed_xfail("answer  at\nrank 3") == ExpectedFailure("answer at rank 3")
    declared = {"reason": "r", "checks": ["layer", "rank"]}
    at_rank_3_trigram = {**AT_RANK_3, "expected_layer": "trigram"}
    # Kept in the order of the checks, whatever order the file lists them in.
    assert parsed_xfail(declared, at_rank_3_trigram) == ExpectedFailure("r", ("rank", "layer"))


@pytest.mark.parametrize(
    ("xfail", "case_fields", "message"),
    [
        ("", AT_RANK_3, "cases[0].xfail.reason: expected a non-empty string, got ''"),
        (3, AT_RANK_3, 'cases[0].xfail: expected a reason or {"reason": ..., "checks": [...]}'),
        ({"checks": ["rank"]}, AT_RANK_3, "cases[0].xfail.reason: missing required field"),
        ({"reason": "r", "check": ["rank"]}, AT_RANK_3, "unknown field (did you mean 'checks'?)"),
        ({"reason": "r", "checks": []}, AT_RANK_3, "xfail.checks: expected a non-empty list"),
        ({"reason": "r", "checks": ["ranks"]}, AT_RANK_3, "checks[0]: unknown check 'ranks'"),
        ({"reason": "r", "checks": ["rank", "rank"]}, AT_RANK_3, "'rank' is listed twice"),
        (
            {"reason": "r", "checks": ["layer"]},
            {**AT_RANK_3, "expected_layer": "any"},
            "the case cannot fail 'layer': its expected_layer is 'any'",
        ),
        (
            {"reason": "r", "checks": ["negative"]},
            AT_RANK_3,
            "the case cannot fail 'negative': it is not a negative case",
        ),
        (
            {"reason": "r", "checks": ["rank"]},
            case("md_001_q_neg", "zzz", []),
            "the case cannot fail 'rank': a negative case has only the 'negative' check",
        ),
    ],
)
def test_a_bad_xfail_names_file_line_and_field(
    xfail: Any, case_fields: dict[str, Any], message: str
) -> None:
    errors = parsed_xfail(xfail, case_fields)
    assert isinstance(errors, list)
    assert any(error.startswith("f.jsonl:7: ") and message in error for error in errors), errors
