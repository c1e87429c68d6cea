"""Metric formulas on inputs small enough to compute by hand."""

from __future__ import annotations

import math

import pytest

from pytest_qualbench.evaluation.metrics import (
    METRIC_NAMES,
    dcg_at_k,
    first_relevant_rank,
    grouped_means,
    hit_at_k,
    mean_metrics,
    ndcg_at_k,
    needle_matches,
    needle_recall,
    negative_case_metrics,
    percentile,
    positive_case_metrics,
    reciprocal_rank,
)

F, T = False, True


def test_first_relevant_rank() -> None:
    assert first_relevant_rank([F, F, T, T]) == 3
    assert first_relevant_rank([F, F]) is None
    assert first_relevant_rank([]) is None


@pytest.mark.parametrize(
    ("relevance", "k", "expected"),
    [
        ([F, F, T], 1, 0.0),
        ([F, F, T], 3, 1.0),
        ([T], 10, 1.0),
        ([], 5, 0.0),
        ([F] * 10 + [T], 10, 0.0),
    ],
)
def test_hit_at_k(relevance: list[bool], k: int, expected: float) -> None:
    assert hit_at_k(relevance, k) == expected


def test_reciprocal_rank() -> None:
    assert reciprocal_rank(first_relevant_rank([F, F, T])) == 1 / 3
    assert reciprocal_rank(first_relevant_rank([T, T])) == 1.0
    assert reciprocal_rank(first_relevant_rank([F, F])) == 0.0
    assert reciprocal_rank(first_relevant_rank([])) == 0.0


def test_dcg_binary_gain() -> None:
    assert dcg_at_k([T, F, T], 10) == pytest.approx(1 / math.log2(2) + 1 / math.log2(4))
    assert dcg_at_k([F, T, T], 2) == pytest.approx(1 / math.log2(3))


def test_ndcg_ideal_from_relevant_set_size() -> None:
    # One relevant result at rank 2, |R| = 2: IDCG = 1/log2(2) + 1/log2(3).
    assert ndcg_at_k([F, T, F], relevant_total=2) == pytest.approx(
        (1 / math.log2(3)) / (1 / math.log2(2) + 1 / math.log2(3))
    )
    assert ndcg_at_k([T, T], relevant_total=2) == pytest.approx(1.0)


def test_ndcg_ideal_is_capped_at_k() -> None:
    # |R| = 15 but only 10 ranks count: all ten relevant is perfect.
    assert ndcg_at_k([T] * 10, relevant_total=15) == pytest.approx(1.0)


def test_ndcg_never_exceeds_one_when_results_outnumber_relevant_chunks() -> None:
    assert ndcg_at_k([T, T, T], relevant_total=1) == pytest.approx(1.0)


def test_ndcg_of_nothing_is_zero() -> None:
    assert ndcg_at_k([], relevant_total=3) == 0.0
    assert ndcg_at_k([F, F], relevant_total=0) == 0.0


def test_needle_recall_counts_distinct_needles() -> None:
    texts = ["alpha beta", "gamma"]
    assert needle_recall(needle_matches(texts, ["alpha", "gamma", "delta"])) == 2 / 3
    assert needle_recall(needle_matches(texts, ["alpha", "gamma", "delta"]), 1) == 1 / 3
    assert needle_recall(needle_matches(texts, ["alpha", "alpha"])) == 1.0
    assert needle_recall(needle_matches(texts, ["Alpha"])) == 0.0  # case-sensitive
    assert needle_recall(needle_matches(texts, [])) == 0.0


def test_needle_matches_checks_each_text_for_each_distinct_needle() -> None:
    matches = needle_matches(["noise", "beta alpha", "alpha"], ["alpha", "beta", "alpha", "zeta"])
    assert matches.needles == ("alpha", "beta", "zeta")
    assert matches.relevance == (False, True, True)
    assert matches.first_ranks == {"alpha": 2, "beta": 2}
    assert matches.found() == ("alpha", "beta")
    assert matches.found(1) == ()
    assert needle_matches(["gamma alpha"], ["gamma", "alpha", "zeta"]).found() == ("gamma", "alpha")


def test_percentile_interpolates_like_numpy() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert percentile([10.0], 0.95) == 10.0
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 0.95) == pytest.approx(4.8)
    assert percentile([], 0.5) is None


def test_positive_case_metrics_by_hand() -> None:
    texts = ["noise", "has alpha", "noise", "has beta", "noise", "has alpha again"]
    values = positive_case_metrics(
        needle_matches(texts, ["alpha", "beta"]),
        relevant_total=3,
        rank_ceiling=1,
        first_relevant_layer="porter",
        expected_layer="porter",
        layers_reported=True,
    )
    assert values["hit@1"] == 0.0
    assert values["hit@3"] == 1.0
    assert values["precision@1"] == 0.0
    assert values["recall@5"] == 2 / 2
    assert values["mrr"] == 1 / 2
    ideal = 1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)
    assert values["ndcg@10"] == pytest.approx(
        (1 / math.log2(3) + 1 / math.log2(5) + 1 / math.log2(7)) / ideal
    )
    assert values["context_recall"] == 1.0
    assert values["rank_ceiling_pass"] == 0.0
    assert values["layer_accuracy"] == 1.0
    assert list(values) == list(METRIC_NAMES)


def test_empty_result_scores_zero_and_stays_in_denominator() -> None:
    values = positive_case_metrics(
        needle_matches([], ["x"]), relevant_total=1, rank_ceiling=3, first_relevant_layer=None,
        expected_layer="porter", layers_reported=True,
    )  # fmt: skip
    assert all(value == 0.0 for value in values.values())


def test_undefined_checks_are_none() -> None:
    values = positive_case_metrics(
        needle_matches(["x"], ["x"]), relevant_total=1, rank_ceiling=0, first_relevant_layer=None,
        expected_layer="porter", layers_reported=False,
    )  # fmt: skip
    assert values["rank_ceiling_pass"] is None
    assert values["layer_accuracy"] is None


def test_negative_pass() -> None:
    assert negative_case_metrics(0) == {"negative_pass": 1.0}
    assert negative_case_metrics(2) == {"negative_pass": 0.0}


def test_means_skip_undefined_values() -> None:
    cases: list[dict[str, float | None]] = [
        {"mrr": 1.0, "rank_ceiling_pass": None},
        {"mrr": 0.5, "rank_ceiling_pass": 1.0},
    ]
    assert mean_metrics(cases, ["mrr", "rank_ceiling_pass", "hit@1"]) == {
        "mrr": (1.0 + 0.5) / 2,
        "rank_ceiling_pass": 1.0,
        "hit@1": None,
    }


def test_grouped_means_sorted_by_group() -> None:
    cases = [{"mrr": 1.0}, {"mrr": 0.0}, {"mrr": 0.5}]
    groups = ["json", "markdown", "json"]
    assert grouped_means(cases, lambda i: groups[i], ["mrr"]) == {
        "json": {"mrr": (1.0 + 0.5) / 2},
        "markdown": {"mrr": 0.0},
    }
