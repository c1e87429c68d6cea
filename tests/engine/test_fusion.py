"""Reciprocal Rank Fusion values, and the score gaps added to them, written out as arithmetic."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_qualbench.engine.fusion import (
    fuse,
    layer_label,
    rrf_contribution,
    trigram_weight,
)


def test_rrf_contribution_is_one_over_sixty_plus_rank() -> None:
    assert rrf_contribution(1) == 1 / (60 + 1)
    assert rrf_contribution(3) == 1 / (60 + 3)


def test_fused_scores_sum_over_layers() -> None:
    fused = fuse([("porter", [7, 8, 9]), ("trigram", [9, 5, 7])])
    scores = {item.doc: item.score for item in fused}
    assert scores[7] == 1 / (60 + 1) + 1 / (60 + 3)
    assert scores[9] == 1 / (60 + 3) + 1 / (60 + 1)
    assert scores[8] == 1 / (60 + 2)
    assert scores[5] == 1 / (60 + 2)


def test_ties_break_by_doc_order_and_labels_name_the_layers() -> None:
    fused = fuse([("porter", [7, 8, 9]), ("trigram", [9, 5, 7])])
    assert [item.doc for item in fused] == [7, 9, 5, 8]
    assert [item.label for item in fused] == [
        "rrf(porter+trigram)",
        "rrf(porter+trigram)",
        "trigram",
        "porter",
    ]


def test_labels() -> None:
    assert layer_label(["porter"]) == "porter"
    assert layer_label(["porter", "trigram"]) == "rrf(porter+trigram)"


def test_weighted_fusion_scales_each_layers_shares() -> None:
    fused = fuse([("porter", [7, 8]), ("trigram", [8, 7])], weights=(1.0, 0.5))
    scores = {item.doc: item.score for item in fused}
    assert scores[7] == 1 / (60 + 1) + 0.5 / (60 + 2)
    assert scores[8] == 1 / (60 + 2) + 0.5 / (60 + 1)
    assert [item.doc for item in fused] == [7, 8]


def test_trigram_weight_is_full_up_to_the_word_count_then_falls_as_one_over_words() -> None:
    assert trigram_weight(1, 6) == 1.0
    assert trigram_weight(6, 6) == 1.0
    assert trigram_weight(12, 6) == 0.5
    assert trigram_weight(60, 6) == 0.1


def fused_one_at_a_time(
    rankings: list[tuple[str, list[int]]],
    weights: list[float],
    gaps: list[list[float]] | None = None,
    gap_weight: float = 0.0,
) -> list[tuple[int, float, tuple[str, ...]]]:
    """RRF written out: each doc's shares (with its score gap, when given) added from 0.0
    in layer order, sorted by (-score, doc)."""
    scores: dict[int, float] = {}
    layers: dict[int, tuple[str, ...]] = {}
    for position, ((layer, ranking), weight) in enumerate(zip(rankings, weights, strict=True)):
        for rank, doc in enumerate(ranking, start=1):
            share = 1.0 / (60 + rank)
            if gaps is not None:
                share = share + gap_weight * gaps[position][rank - 1]
            scores[doc] = scores.get(doc, 0.0) + weight * share
            layers[doc] = (*layers.get(doc, ()), layer)
    return sorted(((doc, scores[doc], layers[doc]) for doc in scores), key=lambda t: (-t[1], t[0]))


def labeled(
    expected: list[tuple[int, float, tuple[str, ...]]],
) -> list[tuple[int, float, str]]:
    """The written-out fusion with each doc's layers as `fuse` labels them."""
    return [(doc, score, layer_label(layers)) for doc, score, layers in expected]


@given(
    st.lists(st.integers(0, 30), unique=True, max_size=25),
    st.lists(st.integers(0, 30), unique=True, max_size=25),
    st.sampled_from([1.0, 0.5, 8 / 9]),
    st.integers(1, 40),
)
def test_fusion_equals_adding_shares_one_at_a_time_to_the_bit(
    porter: list[int], trigram: list[int], weight: float, limit: int
) -> None:
    # Docs at equal ranks of the two layers tie exactly: doc order must break those.
    rankings = [("porter", porter), ("trigram", trigram)]
    expected = fused_one_at_a_time(rankings, [1.0, weight])
    fused = fuse(rankings, weights=(1.0, weight), limit=limit)
    assert [(item.doc, item.score, item.label) for item in fused] == labeled(expected[:limit])
    everything = fuse(rankings, weights=(1.0, weight))
    assert [(item.doc, item.score, item.label) for item in everything] == labeled(expected)


@given(
    st.lists(st.integers(0, 30), unique=True, max_size=25),
    st.lists(st.integers(0, 30), unique=True, max_size=25),
    st.data(),
    st.sampled_from([0.03, 0.1, 1.0]),
)
def test_gapped_fusion_equals_adding_shares_and_gaps_one_at_a_time_to_the_bit(
    porter: list[int], trigram: list[int], data: st.DataObject, gap_weight: float
) -> None:
    def layer_scores(count: int) -> npt.NDArray[np.float64]:
        drawn = data.draw(st.lists(st.floats(0.0, 40.0), min_size=count, max_size=count))
        return np.array(sorted(drawn, reverse=True), dtype=np.float64)

    rankings = [("porter", porter), ("trigram", trigram)]
    scores = [layer_scores(len(porter)), layer_scores(len(trigram))]
    gaps = [score_gaps(layer) for layer in scores]
    expected = fused_one_at_a_time(rankings, [1.0, 0.8], gaps, gap_weight)
    fused = fuse(rankings, 60, (1.0, 0.8), layer_scores=scores, gap_weight=gap_weight)
    assert [(item.doc, item.score, item.label) for item in fused] == labeled(expected)


def test_a_ranking_listing_a_doc_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="lists a doc twice"):
        fuse([("porter", [7, 8, 7])])


def test_a_negative_full_match_count_is_refused() -> None:
    with pytest.raises(ValueError, match="negative full-match count"):
        fuse([("porter", [7, 8])], matched_in_full=(-1,))


def test_scores_must_cover_every_ranked_doc_when_gaps_are_added() -> None:
    with pytest.raises(ValueError, match="scores differ from the docs"):
        fuse([("porter", [7, 8])], layer_scores=[np.array([1.0])], gap_weight=0.1)


def test_found_by_bits_hold_63_rankings_and_no_more() -> None:
    many = [(f"layer{number}", [number]) for number in range(63)]
    assert [item.label for item in fuse(many, limit=1)] == ["layer0"]
    with pytest.raises(ValueError, match="more than 63 rankings"):
        fuse([*many, ("one more", [99])])


def test_fusion_of_nothing_is_empty() -> None:
    assert fuse([("porter", []), ("trigram", [])]) == []
    assert fuse([]) == []


def test_labels_name_the_layers_matching_a_doc_in_full_when_any_does() -> None:
    # porter matches 7 and 8 in full (its first two), 9 only through its fill;
    # trigram matches nothing in full: every doc it ranks comes from its fill.
    fused = fuse([("porter", [7, 8, 9]), ("trigram", [9, 5, 7])], matched_in_full=(2, 0))
    assert {item.doc: item.label for item in fused} == {
        7: "porter",  # the trigram fill's rank does not make it a trigram match
        8: "porter",
        9: "rrf(porter+trigram)",  # neither matches it in full: both fills ranked it
        5: "trigram",
    }


def test_full_matches_in_both_layers_are_rrf_and_scores_ignore_matching() -> None:
    plain = fuse([("porter", [7, 8]), ("trigram", [8, 7])])
    matched = fuse([("porter", [7, 8]), ("trigram", [8, 7])], matched_in_full=(1, 2))
    assert [(item.doc, item.score) for item in matched] == [
        (item.doc, item.score) for item in plain
    ]
    assert {item.doc: item.label for item in matched} == {7: "rrf(porter+trigram)", 8: "trigram"}


def score_gaps(scores: npt.NDArray[np.float64]) -> list[float]:
    """Each score's distance above the list's lowest, in numpy's population standard
    deviations of the list (0 without spread)."""
    spread = float(scores.std()) if len(scores) else 0.0
    return [0.0 if spread <= 0.0 else (score - scores.min()) / spread for score in scores]


@given(st.lists(st.floats(0.0, 1e6), max_size=300))
def test_the_spread_is_numpys_std_to_the_bit(drawn: list[float]) -> None:
    # Up to 300 scores: numpy adds more than 128 in halves, fewer than 8 one by one.
    scores = np.array(sorted(drawn, reverse=True), dtype=np.float64)
    ranking = list(range(len(scores)))
    fused = fuse([("porter", ranking)], layer_scores=[scores], gap_weight=1.0)
    expected = fused_one_at_a_time([("porter", ranking)], [1.0], [score_gaps(scores)], 1.0)
    assert [(item.doc, item.score) for item in fused] == [
        (doc, score) for doc, score, _ in expected
    ]


def test_gaps_are_distances_above_the_lowest_in_standard_deviations() -> None:
    # Scores 6, 4, 2 (spread sqrt(8/3)) give gaps 4 / spread, 2 / spread and 0: with
    # weight 1 and gap weight 1, each doc's fused score is its RRF share plus its gap.
    spread = math.sqrt(8 / 3)
    fused = fuse([("porter", [7, 8, 9])], layer_scores=[np.array([6.0, 4.0, 2.0])], gap_weight=1.0)
    assert [item.score for item in fused] == [
        1 / 61 + 4 / spread,
        1 / 62 + 2 / spread,
        1 / 63 + 0.0,
    ]


@pytest.mark.parametrize("count", [1, 7, 8, 9, 127, 128, 129, 300, 1000])
def test_the_spread_is_numpys_std_at_each_of_numpys_summation_sizes(count: int) -> None:
    # Below 8, 8 to 128, and halved above 128: each of numpy's three ways of adding.
    scores = np.sort(np.random.default_rng(count).random(count) * 40.0)[::-1].copy()
    ranking = list(range(count))
    fused = fuse([("porter", ranking)], layer_scores=[scores], gap_weight=1.0)
    expected = fused_one_at_a_time([("porter", ranking)], [1.0], [score_gaps(scores)], 1.0)
    assert [(item.doc, item.score) for item in fused] == [
        (doc, score) for doc, score, _ in expected
    ]


def test_a_list_without_spread_has_no_gaps() -> None:
    assert fuse([("porter", [7])], layer_scores=[np.array([5.0])], gap_weight=1.0) == fuse(
        [("porter", [7])]
    )
    plain = fuse([("porter", [7, 8])])
    flat = fuse([("porter", [7, 8])], layer_scores=[np.array([3.0, 3.0])], gap_weight=1.0)
    assert flat == plain


def test_score_gaps_add_to_each_layers_rrf_shares() -> None:
    # RRF alone ties 7 and 8 (first in one layer, second in the other); porter's scores
    # put 7 far ahead of 8, trigram's put 8 barely ahead of 7: the gaps settle the tie.
    rankings = [("porter", [7, 8, 9]), ("trigram", [8, 7])]
    porter_scores, trigram_scores = np.array([9.0, 2.0, 1.0]), np.array([1.1, 1.0])
    fused = fuse(
        rankings, 10, (1.0, 0.5), layer_scores=[porter_scores, trigram_scores], gap_weight=0.1
    )
    porter_gaps, trigram_gaps = score_gaps(porter_scores), score_gaps(trigram_scores)
    scores = {item.doc: item.score for item in fused}
    assert scores[7] == pytest.approx(
        1 / 11 + 0.1 * porter_gaps[0] + 0.5 * (1 / 12 + 0.1 * trigram_gaps[1])
    )
    assert scores[8] == pytest.approx(
        1 / 12 + 0.1 * porter_gaps[1] + 0.5 * (1 / 11 + 0.1 * trigram_gaps[0])
    )
    assert [item.doc for item in fused] == [7, 8, 9]
    plain = fuse(rankings, 10, (1.0, 1.0))
    assert [item.doc for item in plain] == [7, 8, 9]
    plain_scores = {item.doc: item.score for item in plain}
    assert plain_scores[7] == plain_scores[8]


def test_a_gap_weight_of_zero_is_rrf_to_the_bit() -> None:
    rankings = [("porter", [7, 8, 9]), ("trigram", [9, 5, 7])]
    scores = [np.array([3.0, 2.0, 1.0]), np.array([9.0, 1.0, 0.5])]
    assert fuse(rankings, layer_scores=scores, gap_weight=0.0) == fuse(rankings)
