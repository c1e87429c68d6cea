"""Judging one case: relevance, checks, and the record that travels to the controller."""

from __future__ import annotations

import math

import pytest

from pytest_qualbench.engine.types import Result
from pytest_qualbench.evaluation.case_record import CaseRecord
from pytest_qualbench.evaluation.judge import error_record, judge, settle_layers, snippet
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


def test_a_chunk_returned_twice_counts_once() -> None:
    # [noise, rel, rel, rel] is judged as [noise, rel]: one relevant chunk at rank 2,
    # so with |R| = 1: nDCG@10 = (1/log2(3)) / 1, MRR = 1/2, hit@1 = 0.
    noise = Result("beta", "porter", source="a", position=0)
    relevant = Result("alpha", "porter", source="b", position=0)
    repeated = judge(make_case(ceiling=0), [noise, relevant, relevant, relevant], relevant_total=1)
    honest = judge(make_case(ceiling=0), [noise, relevant], relevant_total=1)
    assert repeated.metrics == honest.metrics
    assert repeated.metrics["ndcg@10"] == pytest.approx(1 / math.log2(3))
    assert repeated.metrics["mrr"] == 0.5
    assert (repeated.duplicate_results, honest.duplicate_results) == (2, 0)
    assert repeated.result_count == 2
    assert repeated.to_json()["duplicate_results"] == 2


def test_results_with_only_text_are_told_apart_by_text() -> None:
    # A custom engine that sets no source or position: the same text twice is one chunk.
    results = [Result("beta"), Result("alpha"), Result("alpha"), Result("alpha 2")]
    record = judge(make_case(ceiling=0), results, relevant_total=2)
    assert record.duplicate_results == 1
    # Two distinct relevant chunks at ranks 2 and 3 over an ideal of ranks 1 and 2.
    ideal = 1 + 1 / math.log2(3)
    assert record.metrics["ndcg@10"] == pytest.approx((1 / math.log2(3) + 1 / 2) / ideal)
    # The same text in another source is another chunk.
    apart = [Result("alpha", source="a"), Result("alpha", source="b")]
    assert judge(make_case(ceiling=0), apart, relevant_total=2).duplicate_results == 0


def test_an_errored_case_does_not_say_the_engine_labels_layers() -> None:
    layerless = judge(make_case(), [Result("alpha")], relevant_total=1)
    errored = error_record(make_case(), RuntimeError("boom"))
    assert errored.layers_reported is None
    settled = settle_layers([layerless, errored])
    assert [record.metrics["layer_accuracy"] for record in settled] == [None, None]
    # Beside a case that shows labels, the errored case scores 0 like every other metric.
    labelled = judge(make_case(), [Result("alpha", "porter")], relevant_total=1)
    settled = settle_layers([labelled, errored])
    assert [record.metrics["layer_accuracy"] for record in settled] == [1.0, 0.0]
