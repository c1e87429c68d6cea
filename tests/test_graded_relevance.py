"""Cases judged by entry (`relevant`): attribution, each entry once, graded metrics by hand."""

from __future__ import annotations

import json
import math
from types import MappingProxyType
from typing import Any

import pytest

from pytest_qualbench.engine.types import Result
from pytest_qualbench.evaluation.case_record import CaseRecord
from pytest_qualbench.evaluation.judge import judge
from pytest_qualbench.evaluation.metrics import (
    exponential_gain,
    graded_case_metrics,
    graded_ndcg_at_k,
    linear_gain,
)
from pytest_qualbench.evaluation.relevance import EntryAttribution, entry_ranking
from pytest_qualbench.fixtures.schema import Case, Entry
from tests.conftest import WriteFixture


def entry(entry_id: str, haystack: str, source: str | None = None) -> Entry:
    return Entry(
        entry_id,
        "plaintext",
        haystack,
        source or f"src-{entry_id}",
        "durable",
        (),
        "f.jsonl",
        1,
    )


ENTRIES = [
    entry("a", "alpha one\n\nalpha two"),
    entry("b", "beta"),
    entry("c", "gamma"),
    entry("d", "delta"),
]
ATTRIBUTION = EntryAttribution(ENTRIES)


def graded(relevant: dict[str, int], needles: tuple[str, ...] = (), ceiling: int = 0) -> Case:
    return Case(
        "q1",
        "query",
        needles,
        "any",
        ceiling,
        "a",
        "plaintext",
        "f.jsonl",
        1,
        relevant=MappingProxyType(relevant),
    )


def hit(entry_id: str, text: str | None = None, layer: str | None = None) -> Result:
    return Result(text or entry_id, layer, source=f"src-{entry_id}")


def test_linear_graded_ndcg_written_out() -> None:
    # Ranked grades 0, 2, 1; judged 2, 1, 1 (one relevant entry never returned).
    dcg = 2 / math.log2(3) + 1 / math.log2(4)
    ideal = 2 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)
    assert graded_ndcg_at_k([0, 2, 1], [2, 1, 1]) == pytest.approx(dcg / ideal, rel=1e-15)


def test_exponential_gain_weighs_grades_as_two_to_the_grade_minus_one() -> None:
    assert [exponential_gain(g) for g in (0, 1, 2, 3)] == [0.0, 1.0, 3.0, 7.0]
    assert [linear_gain(g) for g in (0, 1, 2, 3)] == [0.0, 1.0, 2.0, 3.0]
    dcg = 3 / math.log2(3)
    ideal = 3 / math.log2(2) + 1 / math.log2(3)
    assert graded_ndcg_at_k([0, 2], [2, 1], gain=exponential_gain) == pytest.approx(dcg / ideal)


def test_graded_case_metrics_by_hand() -> None:
    values = graded_case_metrics(
        [0, 2, 0, 1],
        [2, 1, 3, 0],
        min_grade=1,
        gain=linear_gain,
        rank_ceiling=1,
        first_relevant_layer="porter",
        expected_layer="porter",
        layers_reported=True,
    )
    # Three judged entries are relevant (grades 2, 1, 3); the zero does not count.
    assert values["recall@10"] == 2 / 3
    assert values["context_recall"] == 2 / 3
    assert values["mrr"] == 1 / 2
    assert values["hit@1"] == 0.0 and values["hit@3"] == 1.0
    assert values["rank_ceiling_pass"] == 0.0
    ideal = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    dcg = 2 / math.log2(3) + 1 / math.log2(5)
    assert values["ndcg@10"] == pytest.approx(dcg / ideal, rel=1e-15)


def test_min_grade_raises_the_bar_for_binary_metrics_only() -> None:
    values = graded_case_metrics(
        [1, 2],
        [1, 2],
        min_grade=2,
        gain=linear_gain,
        rank_ceiling=0,
        first_relevant_layer=None,
        expected_layer="any",
        layers_reported=False,
    )
    assert values["mrr"] == 1 / 2
    assert values["recall@5"] == 1.0
    # nDCG takes the grades themselves, as trec_eval's ndcg_cut does.
    ideal = 2 + 1 / math.log2(3)
    assert values["ndcg@10"] == pytest.approx((1 + 2 / math.log2(3)) / ideal)


def test_an_entry_counts_once_at_its_best_rank() -> None:
    results = [hit("a", "alpha one"), hit("b"), hit("a", "alpha two"), hit("c")]
    ranking = entry_ranking(results, {"a": 1, "c": 2}, ATTRIBUTION)
    assert [(r.entry_id, r.grade, r.first_result) for r in ranking] == [
        ("a", 1, 0),
        ("b", 0, 1),
        ("c", 2, 3),
    ]
    record = judge(graded({"a": 1, "c": 2}), results, relevant_total=None, attribution=ATTRIBUTION)
    assert record.rank == 1
    assert record.relevant_found == ("a", "c")
    # c sits at document rank 3: the second chunk of a takes no rank.
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert record.metrics["ndcg@10"] == pytest.approx((1 + 2 / math.log2(4)) / ideal)


def test_a_result_without_a_source_is_attributed_by_text() -> None:
    results = [Result("gamma"), Result("alpha two")]
    ranking = entry_ranking(results, {"c": 1}, ATTRIBUTION)
    assert [r.entry_id for r in ranking] == ["c", "a"]


def test_a_result_no_single_entry_holds_errors_the_case_and_says_why() -> None:
    twins = EntryAttribution([entry("x", "same text"), entry("y", "same text")])
    record = judge(graded({"x": 1}), [Result("same text")], relevant_total=None, attribution=twins)
    assert [failure.type for failure in record.failures] == ["error"]
    assert "its text is in 2 entries (x, y)" in record.failures[0].actual
    assert "set Result.source" in record.failures[0].actual


def test_a_shared_source_label_falls_back_to_the_text() -> None:
    shared = EntryAttribution([entry("x", "one", "same"), entry("y", "two", "same")])
    assert shared.entry_of(Result("two", source="same")) == "y"


def test_with_needles_too_a_result_counts_only_when_it_holds_one() -> None:
    results = [hit("a", "alpha one"), hit("a", "alpha two")]
    record = judge(
        graded({"a": 1}, needles=("two",)), results, relevant_total=None, attribution=ATTRIBUTION
    )
    assert record.rank == 2
    assert record.metrics["mrr"] == 1 / 2


def test_missing_relevant_entries_fail_with_their_grades() -> None:
    record = judge(
        graded({"a": 1, "c": 2, "d": 0}, ceiling=1),
        [hit("b"), hit("a", "alpha one")],
        relevant_total=None,
        attribution=ATTRIBUTION,
    )
    assert [(f.type, f.expected, f.actual) for f in record.failures] == [
        ("needles", {"a": 1, "c": 2}, {"a": 1}),
        ("rank", 1, 2),
    ]


def test_the_record_travels_and_its_definition_covers_the_grades() -> None:
    record = judge(
        graded({"a": 1, "c": 2}), [hit("a", "alpha one")], relevant_total=None,
        attribution=ATTRIBUTION, min_grade=1,
    )  # fmt: skip
    assert CaseRecord.from_wire(record.to_wire()) == record
    assert record.to_json()["relevant_found"] == {"a": 1}
    other = judge(
        graded({"a": 2, "c": 2}), [hit("a", "alpha one")], relevant_total=None,
        attribution=ATTRIBUTION,
    )  # fmt: skip
    assert other.definition != record.definition


def test_a_failure_names_the_missing_entries_with_their_grades() -> None:
    from pytest_qualbench.evaluation.outcomes import failure_reason

    record = judge(
        graded({"a": 1, "c": 2}), [hit("a", "alpha one")], relevant_total=None,
        attribution=ATTRIBUTION,
    )  # fmt: skip
    # The result carries no layer label, so the short line also says the layer was not checked.
    assert failure_reason(record) == (
        "1 of 2 relevant entries found, missing c (grade 2); layer not checked"
    )


GRADED_FIXTURE: list[dict[str, Any]] = [
    {
        "id": "md_001",
        "content_type": "markdown",
        "haystack": "# Pool\n\nConnection pooling keeps idle connections warm.",
        "source_label": "doc-1",
        "source_kind": "durable",
        "cases": [
            {
                "case_id": "md_001_q1",
                "query": "connection pooling",
                "relevant": {"md_001": 2, "md_002": 1},
                "expected_rank_ceiling": 1,
            },
            {
                "case_id": "md_001_q2",
                "query": "idle connections",
                "relevant": {"md_002": 2},
                "expected_rank_ceiling": 0,
            },
            {
                "case_id": "md_001_q_neg",
                "query": "anomalocaris opabinia",
                "needles": [],
                "expected_rank_ceiling": 0,
            },
        ],
    },
    {
        "id": "md_002",
        "content_type": "markdown",
        "haystack": "# Idle\n\nIdle connections close after five minutes; pooling reuses them.",
        "source_label": "doc-2",
        "source_kind": "durable",
        "cases": [],
    },
    {
        "id": "md_003",
        "content_type": "markdown",
        "haystack": "# Deploy\n\nBlue-green deployment.",
        "source_label": "doc-3",
        "source_kind": "durable",
        "cases": [],
    },
]


def test_a_fixture_using_only_relevant_runs_green(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write_fixture("graded.jsonl", GRADED_FIXTURE)
    result = pytester.runpytest("--qualbench", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    report = json.loads((pytester.path / ".qualbench" / "report.json").read_text())
    cases = {case["case_id"]: case for case in report["cases"]}
    assert cases["md_001_q1"]["relevant_found"] == {"md_001": 2, "md_002": 1}
    assert cases["md_001_q1"]["metrics"]["ndcg@10"] == 1.0
    assert cases["md_001_q2"]["rank"] in (1, 2)


def test_min_grade_leaves_lower_grades_out_of_the_binary_metrics(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write_fixture("graded.jsonl", GRADED_FIXTURE)
    result = pytester.runpytest("--qualbench", "--qualbench-min-grade=2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    report = json.loads((pytester.path / ".qualbench" / "report.json").read_text())
    q1 = next(case for case in report["cases"] if case["case_id"] == "md_001_q1")
    assert q1["relevant_found"] == {"md_001": 2}
    assert q1["min_grade"] == 2
    assert q1["metrics"]["recall@10"] == 1.0


def test_junit_properties_name_the_wanted_and_found_entries() -> None:
    from pytest_qualbench.plugin.items import junit_properties

    record = judge(
        graded({"a": 1, "c": 2, "d": 0}), [hit("a", "alpha one")], relevant_total=None,
        attribution=ATTRIBUTION,
    )  # fmt: skip
    properties = dict(junit_properties(record))
    assert properties["qualbench.relevant"] == "c=2,a=1"
    assert properties["qualbench.relevant_found"] == "a=1"
