"""Reciprocal Rank Fusion values, written out as arithmetic."""

from __future__ import annotations

from pytest_qualbench.engine.fusion import fuse, layer_label, rrf_contribution, trigram_weight


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
