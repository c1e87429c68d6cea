"""The qualstat command, driven through main(argv): output and every exit status."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_qualbench.cli.qualstat import main

REPORTS = Path(__file__).parent / "data" / "reports"
BASE = str(REPORTS / "base.json")


def golden(name: str) -> str:
    return str(REPORTS / f"{name}.json")


def test_one_report_prints_its_tables(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([BASE]) == 0
    out = capsys.readouterr().out
    assert out.startswith("qualbench report: main@a1a1a1a1a1")
    assert "Negative cases" in out


def test_one_report_as_json_is_the_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([BASE, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(Path(BASE).read_text())


def test_identical_runs_exit_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([BASE, golden("head_same")]) == 0
    assert "no regression" in capsys.readouterr().out


def test_improvement_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([BASE, golden("head_improved"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["exit_code"] == 0


def test_regression_exits_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([BASE, golden("head_regression")]) == 1
    out = capsys.readouterr().out
    assert "9 metrics beyond their rule, 4 cases newly failing" in out
    assert "  md_001_q1 [markdown] newly failing (rank): rank 2 -> 5; hit@3 1 -> 0" in out


def test_markdown_format(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([BASE, golden("head_regression"), "--format", "markdown"]) == 1
    assert capsys.readouterr().out.startswith("## qualstat: ")


def test_hash_mismatch_is_refused_with_exit_two(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([BASE, golden("other_dataset")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "refusing to compare" in captured.err
    assert "dataset_hash differs" in captured.err
    assert "--intersect" in captured.err


def test_intersect_lists_added_and_removed_cases(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([BASE, golden("other_dataset"), "--intersect"]) == 0
    out = capsys.readouterr().out
    assert "Removed cases, only in base (1)\n-------------------------------\n\npt_003_q2" in out
    assert "Added cases, only in head (1)\n-----------------------------\n\npt_004_q1" in out


def test_metric_version_mismatch_exits_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head: dict[str, Any] = json.loads(Path(golden("head_same")).read_text())
    head["metric_version"] = 2
    (tmp_path / "head.json").write_text(json.dumps(head))
    assert main([BASE, str(tmp_path / "head.json")]) == 2
    assert "metric_version differs" in capsys.readouterr().err


def test_missing_report_exits_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([BASE, str(tmp_path / "missing.json")]) == 2
    assert "missing.json: no such file" in capsys.readouterr().err


def test_invalid_report_exits_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "broken.json").write_text("{")
    assert main([str(tmp_path / "broken.json")]) == 2
    assert "not valid JSON" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "the following arguments are required: REPORT"),
        ([BASE, BASE, BASE], "more than two reports make a trend"),
        ([BASE, BASE, "--fail-on", "mmr:0.1"], "did you mean mrr?"),
        ([BASE, "--intersect"], "need two reports"),
        ([BASE, "--fail-on", "mrr:0.1"], "need two reports"),
    ],
)
def test_usage_errors_exit_two(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "exit status: 0 clean, 1 regression" in capsys.readouterr().out


def test_fail_on_tightens_a_tolerant_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head = with_case_mrr(json.loads(Path(BASE).read_text()), "md_002_q2", rank=4)
    (tmp_path / "head.json").write_text(json.dumps(head))
    # markdown.mrr drops (1/3 - 1/4) / 6 = 0.0139: inside the default 0.02, beyond 0.01.
    assert main([BASE, str(tmp_path / "head.json")]) == 0
    assert main([BASE, str(tmp_path / "head.json"), "--fail-on", "mrr:0.01"]) == 1
    assert "mrr (allowed 0.01): markdown 0.4167 -> 0.4028" in capsys.readouterr().out


def test_fail_on_loosens_a_strict_rule(tmp_path: Path) -> None:
    head = json.loads(Path(golden("head_same")).read_text())
    # One case loses its layer (passing still, as no check failed): the aggregates follow.
    case = next(c for c in head["cases"] if c["case_id"] == "md_001_q1")
    case["metrics"]["layer_accuracy"] = 0.0
    positives = [c for c in head["cases"] if not c["negative"]]
    markdown = [c for c in positives if c["content_type"] == "markdown"]
    head["overall"]["layer_accuracy"] = 17 / len(positives)
    head["by_content_type"]["markdown"]["layer_accuracy"] = 5 / len(markdown)
    (tmp_path / "head.json").write_text(json.dumps(head))
    argv = [BASE, str(tmp_path / "head.json")]
    assert main(argv) == 1
    assert main([*argv, "--fail-on", "layer_accuracy:0.2"]) == 0


def with_case_mrr(report: dict[str, Any], case_id: str, *, rank: int) -> dict[str, Any]:
    """`report` with one case's rank and mrr moved, and its mrr aggregates recomputed."""
    case = next(c for c in report["cases"] if c["case_id"] == case_id)
    case["rank"] = rank
    case["metrics"]["mrr"] = 1 / rank
    positives = [c for c in report["cases"] if not c["negative"]]
    report["overall"]["mrr"] = sum(c["metrics"]["mrr"] for c in positives) / len(positives)
    same_type = [c for c in positives if c["content_type"] == case["content_type"]]
    report["by_content_type"][case["content_type"]]["mrr"] = sum(
        c["metrics"]["mrr"] for c in same_type
    ) / len(same_type)
    return report


def test_html_page_for_one_report_and_a_trend(tmp_path: Path) -> None:
    pytest.importorskip("pygal")
    out = tmp_path / "one.html"
    assert main([BASE, "--format", "html", "-o", str(out)]) == 0
    assert out.read_text().lstrip().lower().startswith("<!doctype html>")
    trend = tmp_path / "trend.html"
    same = str(Path(BASE).parent / "head_same.json")
    assert main([BASE, same, BASE, "--format", "html", "-o", str(trend)]) == 0
    assert "<svg" in trend.read_text()
