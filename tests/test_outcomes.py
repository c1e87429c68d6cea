"""Each check's outcome in words: what failure messages, short summaries and `show` print."""

from __future__ import annotations

from pytest_qualbench.engine.types import Result
from pytest_qualbench.evaluation.judge import error_record, judge
from pytest_qualbench.evaluation.outcomes import check_outcomes, failure_reason
from pytest_qualbench.fixtures import Case


def make_case(needles: tuple[str, ...] = ("alpha",), ceiling: int = 3) -> Case:
    return Case(
        case_id="md_001_q1",
        query="alpha",
        needles=needles,
        expected_layer="porter" if needles else "none",
        expected_rank_ceiling=ceiling if needles else 0,
        entry_id="md_001",
        content_type="markdown",
        path="m.jsonl",
        line=1,
    )


def ranked(*texts: str, layer: str | None = "porter") -> list[Result]:
    return [Result(text, layer) for text in texts]


def test_a_rank_above_the_ceiling_reads_as_a_comparison() -> None:
    record = judge(make_case(), ranked("b", "c", "d", "e", "alpha"), relevant_total=1)
    assert failure_reason(record) == "rank 5 > ceiling 3"


def test_nothing_relevant_is_said_in_words() -> None:
    record = judge(make_case(("alpha", "omega")), ranked("b", layer="trigram"), relevant_total=1)
    assert failure_reason(record) == (
        "0 of 2 needles found, missing 'alpha', 'omega'; "
        "no relevant result in the 1 returned, ceiling 3; "
        "no relevant result, so no layer (expected porter)"
    )


def test_every_check_has_an_outcome_and_a_passing_one_says_so() -> None:
    record = judge(make_case(ceiling=0), ranked("b", "alpha", layer="trigram"), relevant_total=1)
    assert [(o.check, o.passed, o.text) for o in check_outcomes(record)] == [
        ("needles", True, "1 of 1 needles found"),
        ("rank", None, "rank 2 (no ceiling)"),
        ("layer", False, "layer trigram, expected porter"),
    ]


def test_an_unselected_check_is_shown_as_not_checked() -> None:
    record = judge(
        make_case(), ranked("alpha", layer="trigram"), relevant_total=1, checks={"needles"}
    )
    assert record.passed
    assert check_outcomes(record, {"needles"})[2].text == (
        "layer trigram, expected porter (not checked)"
    )
    assert failure_reason(record) == ""


def test_an_engine_without_layers_is_not_held_to_one() -> None:
    record = judge(make_case(), ranked("alpha", layer=None), relevant_total=1)
    assert check_outcomes(record)[2].text == "not checked: the engine labels no layers"


def test_negative_and_error_outcomes() -> None:
    negative = judge(make_case(()), ranked("x", "y"), relevant_total=0)
    assert failure_reason(negative) == "2 results for a negative case, expected none"
    error = error_record(make_case(), ValueError("boom"))
    assert failure_reason(error) == "ValueError: boom"
