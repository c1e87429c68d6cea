"""Report assembly, floors and atomic writing, from hand-made case records."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from pytest_qualbench.engine.types import Result
from pytest_qualbench.evaluation.judge import judge
from pytest_qualbench.fixtures.schema import Case
from pytest_qualbench.report.build import aggregate, build_report
from pytest_qualbench.report.floors import Floor, check_floors, parse_floor
from pytest_qualbench.report.writing import report_text, write_report
from tests.html_sample import metadata


def make_case(
    case_id: str, content_type: str, needles: tuple[str, ...], layer: str = "porter"
) -> Case:
    return Case(
        case_id, "q", needles, layer if needles else "none", 0, case_id[:6], content_type, "f", 1
    )


RECORDS = [
    judge(make_case("md_001_q1", "markdown", ("a",)), [Result("a", "porter")], relevant_total=1),
    judge(
        make_case("md_002_q1", "markdown", ("a",)),
        [Result("x", "porter"), Result("a", "porter")],
        relevant_total=1,
    ),
    judge(make_case("js_001_q1", "json", ("a",), "trigram"), [], relevant_total=1),
    judge(make_case("md_001_q_neg", "markdown", ()), [], relevant_total=0),
]


def test_aggregate_tables() -> None:
    tables = aggregate(RECORDS)
    assert tables["overall"]["cases"] == 3
    assert tables["overall"]["mrr"] == (1 + 1 / 2 + 0) / 3
    assert tables["by_content_type"]["markdown"]["mrr"] == (1 + 1 / 2) / 2
    assert tables["by_content_type"]["json"]["hit@10"] == 0.0
    assert tables["by_layer"]["trigram"]["cases"] == 1
    assert tables["negatives"] == {
        "cases": 1,
        "negative_pass": 1.0,
        "by_content_type": {"markdown": {"cases": 1, "negative_pass": 1.0}},
    }


def test_floors_overall_scoped_and_negative() -> None:
    report = build_report(RECORDS, dataset_hash="sha256:x", metadata=metadata(), index_ms={})
    verdicts = check_floors(
        report,
        [parse_floor("mrr:0.5"), parse_floor("json.mrr:0.1"), parse_floor("negative_pass:1"),
         parse_floor("plaintext.mrr:0.1")],
        enforced=True,
    )  # fmt: skip
    assert [(v.floor.name, v.value, v.ok) for v in verdicts] == [
        ("mrr", 0.5, True),
        ("json.mrr", 0.0, False),
        ("negative_pass", 1.0, True),
        ("plaintext.mrr", None, None),
    ]
    assert verdicts[1].describe() == "json.mrr 0.000 < floor 0.100"


def test_parse_floor() -> None:
    assert parse_floor("json.ndcg@10:0.75") == Floor("ndcg@10", "json", 0.75)
    with pytest.raises(argparse.ArgumentTypeError, match="between 0 and 1"):
        parse_floor("mrr:1.5")


def test_report_text_puts_each_case_on_one_line() -> None:
    report = {
        "b": 1,
        "cases": [{"y": 1, "x": "é"}, {"x": None}],
        "a": {"k": [1, 2]},
        "failures": [],
    }
    assert report_text(report) == (
        "{\n"
        '  "a": {\n    "k": [\n      1,\n      2\n    ]\n  },\n'
        '  "b": 1,\n'
        '  "cases": [\n    {"x": "é", "y": 1},\n    {"x": null}\n  ],\n'
        '  "failures": []\n'
        "}\n"
    )
    assert json.loads(report_text(report)) == report


def test_write_is_atomic_and_sorted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "sub" / "report.json"
    write_report(target, {"b": 1, "a": 2})
    assert target.read_text() == '{\n  "a": 2,\n  "b": 1\n}\n'

    def broken_replace(source: str, destination: Path) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("os.replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_report(target, {"c": 3})
    assert json.loads(target.read_text()) == {"a": 2, "b": 1}
    assert [p.name for p in target.parent.iterdir()] == ["report.json"]
