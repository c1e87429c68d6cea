"""The qualbench terminal section by verbosity: short under -q, every floor under -v."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_qualbench.engine.types import Result
from pytest_qualbench.evaluation.judge import judge
from pytest_qualbench.fixtures import Case
from pytest_qualbench.report import Floor, build_report, check_floors
from pytest_qualbench.report.gate import judge_run
from pytest_qualbench.report.model import Report
from pytest_qualbench.report.terminal import GREEN, RED, YELLOW, summary
from tests.html_sample import metadata


def case(case_id: str, needles: tuple[str, ...]) -> Case:
    return Case(
        case_id,
        "q",
        needles,
        "porter" if needles else "none",
        0,
        "md_001",
        "markdown",
        "m.jsonl",
        1,
    )


def report(floors: list[Floor], *, enforced: bool = True) -> Report:
    records = [
        judge(
            case("md_001_q1", ("alpha",)),
            [Result("beta", "porter"), Result("alpha", "porter")],
            relevant_total=1,
        ),
        judge(case("md_001_q_neg", ()), [], relevant_total=0),
    ]
    built = build_report(
        records,
        dataset_hash="sha256:x",
        metadata=metadata(cases_in_fixture_set=3 if not enforced else 2, cases_run=2),
        index_ms={"markdown": 1.0},
    )
    verdict = judge_run(built, floors, unfinished=None, subset=not enforced, lint_failed=False)
    return verdict.report


FLOORS = [Floor("mrr", None, 0.9), Floor("hit@3", None, 0.5)]


def texts(lines: list[Any]) -> list[str]:
    return [line.text for line in lines]


def test_quiet_is_headline_negatives_failing_floors_and_report_path() -> None:
    built = report(FLOORS)
    lines = summary(built, Path("r.json"), check_floors(built, FLOORS, enforced=True), -1)
    assert texts(lines) == [
        "1 cases: hit@1 0.000  hit@3 1.000  mrr 0.500  ndcg@10 0.631  ctx_rec 1.000  layer 1.000",
        "negatives: 1 of 1 returned nothing",
        "floors: 1 of 2 not met",
        "  mrr 0.500 < floor 0.900",
        "report: r.json",
    ]
    assert [line.colour for line in lines] == [None, GREEN, RED, RED, None]


def test_default_has_the_table_and_only_failing_floors() -> None:
    built = report(FLOORS)
    lines = texts(summary(built, None, check_floors(built, FLOORS, enforced=True), 0))
    assert lines[0].startswith("content type   cases")
    assert lines[1].startswith("markdown")
    assert "  hit@3 1.000 >= floor 0.500" not in lines
    assert not any("latency" in line for line in lines)


def test_verbose_adds_latency_and_every_floor() -> None:
    built = report(FLOORS)
    lines = texts(summary(built, None, check_floors(built, FLOORS, enforced=True), 1))
    assert "  hit@3 1.000 >= floor 0.500" in lines
    assert any(line.startswith("latency") for line in lines)


def test_no_floors_are_said_to_be_none_not_unenforced() -> None:
    built = report([], enforced=False)
    lines = texts(summary(built, None, [], -1))
    assert [line for line in lines if "floor" in line] == [
        "floors: none configured (ini qualbench_floors, --qualbench-floor)"
    ]


def test_unenforced_floors_say_how_much_ran() -> None:
    built = report(FLOORS, enforced=False)
    lines = summary(built, None, check_floors(built, FLOORS, enforced=False), -1)
    assert (lines[2].text, lines[2].colour) == ("floors not enforced: 2 of 3 cases ran", YELLOW)
    assert len(lines) == 3


WORD_FIXTURE = (
    '{"id": "md_001", "content_type": "markdown", "haystack": "alpha", "source_label": "s", '
    '"source_kind": "durable", "cases": [{"case_id": "md_001_q1", "query": "alpha", '
    '"needles": ["alpha"], "expected_layer": "rrf(porter+trigram)", "expected_rank_ceiling": 3}]}\n'
)


def test_colour_goes_through_pytest_so_color_no_is_honoured(pytester: pytest.Pytester) -> None:
    (pytester.path / "bench_fixtures").mkdir()
    (pytester.path / "bench_fixtures" / "m.jsonl").write_text(WORD_FIXTURE)
    floor = "--qualbench-floor=mrr:1.0"
    coloured = pytester.runpytest("--qualbench", "-q", "--color=yes", floor).stdout.str()
    assert "\x1b[32mfloors: all 1 met" in coloured
    plain = pytester.runpytest("--qualbench", "-q", "--color=no", floor).stdout.str()
    assert "floors: all 1 met" in plain
    assert "\x1b[" not in plain
