"""A run of some cases (`-k`, `-m`, node ids, `--lf`...) never replaces the full report.

The full report is the baseline CI and qualstat read; a subset run writes
`report.subset.json` beside it, marked with what selected it, unless
`--qualbench-report` names its target.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_qualbench.cli.qualstat import main as qualstat
from tests.conftest import WriteFixture, case, entry


@pytest.fixture
def bench(write_fixture: WriteFixture, word_engine: None) -> Path:
    write_fixture(
        "markdown.jsonl",
        [
            entry("md_a", "alpha beta\n\ngamma delta", [case("md_a_q1", "alpha", ["alpha beta"])]),
            entry("md_b", "omega kappa\n\nsigma theta", [case("md_b_q1", "sigma", ["sigma"])]),
        ],
    )
    return write_fixture(
        "json.jsonl",
        [entry("js_a", '{"port": 8080}', [case("js_a_q1", "port", ["8080"])], content_type="json")],
    )


def report_at(pytester: pytest.Pytester, name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((pytester.path / ".qualbench" / name).read_text())
    return loaded


@pytest.mark.usefixtures("bench")
@pytest.mark.parametrize(
    ("selection", "selected_by", "ran"),
    [
        (["-k", "md_a"], ["-k md_a"], 1),
        (["-m", "json"], ["-m json"], 1),
        (["bench_fixtures/markdown.jsonl::md_b_q1"], ["bench_fixtures/markdown.jsonl::md_b_q1"], 1),
        (["bench_fixtures/json.jsonl"], ["bench_fixtures/json.jsonl"], 1),
        (
            ["--deselect", "bench_fixtures/markdown.jsonl::md_a_q1"],
            ["--deselect bench_fixtures/markdown.jsonl::md_a_q1"],
            2,
        ),
    ],
)
def test_a_subset_run_leaves_the_full_report_byte_identical(
    pytester: pytest.Pytester, selection: list[str], selected_by: list[str], ran: int
) -> None:
    pytester.runpytest("--qualbench").assert_outcomes(passed=3)
    full = (pytester.path / ".qualbench" / "report.json").read_bytes()
    result = pytester.runpytest("--qualbench", *selection)
    result.assert_outcomes(passed=ran)
    assert (pytester.path / ".qualbench" / "report.json").read_bytes() == full
    subset = report_at(pytester, "report.subset.json")
    assert subset["complete"] is True
    assert subset["metadata"]["selection"] == {
        "cases_in_fixture_set": 3,
        "cases_run": ran,
        "subset": True,
        "selected_by": selected_by,
    }
    result.stdout.fnmatch_lines(
        [
            f"subset run ({ran} of 3 cases, selected by {' '.join(selected_by)}): report written "
            "to */.qualbench/report.subset.json; */.qualbench/report.json left as it was"
        ]
    )


@pytest.mark.usefixtures("bench")
def test_last_failed_is_a_subset_too(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write_fixture(
        "plaintext.jsonl",
        [
            entry(
                "txt_a", "lorem", [case("txt_a_q1", "absent", ["lorem"])], content_type="plaintext"
            )
        ],
    )
    pytester.runpytest("--qualbench").assert_outcomes(passed=3, failed=1)
    full = (pytester.path / ".qualbench" / "report.json").read_bytes()
    pytester.runpytest("--qualbench", "--lf").assert_outcomes(failed=1)
    assert (pytester.path / ".qualbench" / "report.json").read_bytes() == full
    selection = report_at(pytester, "report.subset.json")["metadata"]["selection"]
    assert selection["selected_by"] == ["--lf"]
    assert selection["cases_run"] == 1


@pytest.mark.usefixtures("bench")
def test_a_full_run_marks_its_report_as_no_subset(pytester: pytest.Pytester) -> None:
    pytester.runpytest("--qualbench", "bench_fixtures").assert_outcomes(passed=3)
    selection = report_at(pytester, "report.json")["metadata"]["selection"]
    assert selection["subset"] is False
    assert not (pytester.path / ".qualbench" / "report.subset.json").exists()


@pytest.mark.usefixtures("bench")
def test_a_named_report_path_takes_the_subset_report(pytester: pytest.Pytester) -> None:
    pytester.runpytest("--qualbench").assert_outcomes(passed=3)
    full = (pytester.path / ".qualbench" / "report.json").read_bytes()
    pytester.runpytest("--qualbench", "-k", "md_a", "--qualbench-report=md_a.json")
    assert (pytester.path / ".qualbench" / "report.json").read_bytes() == full
    named = json.loads((pytester.path / "md_a.json").read_text())
    assert named["metadata"]["selection"]["subset"] is True
    assert not (pytester.path / ".qualbench" / "report.subset.json").exists()


@pytest.mark.usefixtures("bench")
def test_qualstat_refuses_a_subset_report_as_the_baseline_and_says_why(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    pytester.runpytest("--qualbench").assert_outcomes(passed=3)
    pytester.runpytest("--qualbench", "-k", "md_a").assert_outcomes(passed=1)
    capsys.readouterr()
    reports = pytester.path / ".qualbench"
    assert qualstat([str(reports / "report.subset.json"), str(reports / "report.json")]) == 2
    assert (
        "the base report is a subset run (1 of 3 cases, selected by -k md_a)"
        in capsys.readouterr().err
    )
    assert qualstat([str(reports / "report.json"), str(reports / "report.subset.json")]) == 2
    assert "the head is a subset run, 1 of 3 cases, selected by -k md_a" in capsys.readouterr().err


@pytest.mark.usefixtures("bench")
def test_compare_option_refuses_a_subset_baseline_and_says_why(pytester: pytest.Pytester) -> None:
    pytester.runpytest("--qualbench", "-k", "md_a").assert_outcomes(passed=1)
    result = pytester.runpytest("--qualbench", "--qualbench-compare=.qualbench/report.subset.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["cannot compare with *report.subset.json: the base report is a subset run (1 of 3 *"]
    )


@pytest.mark.usefixtures("bench")
def test_a_subset_run_never_writes_over_its_own_baseline(pytester: pytest.Pytester) -> None:
    pytester.runpytest("--qualbench", "-k", "md_a").assert_outcomes(passed=1)
    baseline = (pytester.path / ".qualbench" / "report.subset.json").read_bytes()
    result = pytester.runpytest(
        "--qualbench", "-k", "md_a", "--qualbench-compare=.qualbench/report.subset.json"
    )
    assert (pytester.path / ".qualbench" / "report.subset.json").read_bytes() == baseline
    result.stdout.fnmatch_lines(
        ["subset run (1 of 3 cases, selected by -k md_a): no report written, "
         "*report.subset.json is the baseline (--qualbench-compare)"]
    )  # fmt: skip
