"""Judging one case: relevance, checks, and the record that travels to the controller."""

from __future__ import annotations

from pytest_qualbench.engine.types import Result
from pytest_qualbench.evaluation.judge import CaseRecord, error_record, judge, snippet
from pytest_qualbench.fixtures.schema import Case


def make_case(
    needles: tuple[str, ...] = ("alpha",), layer: str = "porter", ceiling: int = 2
) -> Case:
    return Case(
        case_id="md_001_q1",
        query="alpha",
        needles=needles,
        expected_layer=layer if needles else "none",
        expected_rank_ceiling=ceiling if needles else 0,
        entry_id="md_001",
        content_type="markdown",
        path="bench_fixtures/markdown.jsonl",
        line=1,
    )


def test_passing_case() -> None:
    results = [Result("beta", "trigram"), Result("has alpha", "porter")]
    record = judge(make_case(), results, relevant_total=1)
    assert record.passed
    assert (record.rank, record.layer, record.result_count) == (2, "porter", 2)
    assert record.metrics["mrr"] == 1 / 2
    assert record.needles_found == ("alpha",)


def test_every_failed_check_is_listed() -> None:
    results = [Result("beta", "porter"), Result("gamma", "porter"), Result("alpha", "trigram")]
    record = judge(make_case(("alpha", "delta")), results, relevant_total=1)
    assert [(f.type, f.expected, f.actual) for f in record.failures] == [
        ("needles", ["alpha", "delta"], ["alpha"]),
        ("rank", 2, 3),
        ("layer", "porter", "trigram"),
    ]


def test_checks_filter_failures() -> None:
    results = [Result("alpha", "trigram")]
    assert judge(make_case(), results, relevant_total=1, checks={"needles", "rank"}).passed


def test_negative_case() -> None:
    assert judge(make_case(()), [], relevant_total=0).passed
    failed = judge(make_case(()), [Result("x", "porter")], relevant_total=0)
    assert [(f.type, f.expected, f.actual) for f in failed.failures] == [("negative", 0, 1)]
    assert failed.metrics == {"negative_pass": 0.0}


def test_engine_without_layers_skips_the_layer_check() -> None:
    record = judge(make_case(), [Result("alpha")], relevant_total=1)
    assert record.passed
    assert record.metrics["layer_accuracy"] is None
    assert not record.layers_reported


def test_relevant_total_falls_back_to_returned_relevant_results() -> None:
    # Two relevant results returned at ranks 2 and 3, |R| unknown: IDCG from 2 hits.
    results = [Result("x", "porter"), Result("alpha", "porter"), Result("alpha 2", "porter")]
    fallback = judge(make_case(ceiling=0), results, relevant_total=None)
    exact = judge(make_case(ceiling=0), results, relevant_total=2)
    assert fallback.metrics["ndcg@10"] == exact.metrics["ndcg@10"]


def test_error_record_scores_zero() -> None:
    record = error_record(make_case(), ValueError("boom"))
    assert record.failures[0].type == "error"
    assert record.failures[0].actual == "ValueError: boom"
    assert record.metrics["mrr"] == 0.0


def test_wire_round_trip() -> None:
    record = judge(
        make_case(), [Result("beta", "porter", "T")], relevant_total=1, corrected_query="alpa"
    )
    assert CaseRecord.from_wire(record.to_wire()) == record


def test_failed_record_carries_top_results_in_report() -> None:
    record = judge(make_case(), [Result("beta", "porter", "T")], relevant_total=1)
    assert record.to_json()["top_results"] == [
        {"rank": 1, "layer": "porter", "title": "T", "snippet": "beta", "needle": None}
    ]
    passed = judge(make_case(), [Result("alpha", "porter")], relevant_total=1)
    assert "top_results" not in passed.to_json()
    assert passed.top_results == ()


def test_snippet_centres_the_needle() -> None:
    text = "a" * 300 + " NEEDLE " + "b" * 300
    shown = snippet(text, "NEEDLE", width=20)
    assert "NEEDLE" in shown
    assert shown.startswith("…") and shown.endswith("…")
    assert snippet("short   text\nhere", None) == "short text here"
