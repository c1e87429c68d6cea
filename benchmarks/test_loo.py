"""Leave-one-collection-out selection on ratios small enough to check by hand."""

from __future__ import annotations

import math

import pytest

from benchmarks.loo import (
    Fold,
    Setting,
    crossed,
    geometric_mean,
    leave_one_out,
    lowered_folds,
    setting_key,
)


def test_geometric_mean_of_a_gain_and_an_equal_loss_is_one() -> None:
    assert geometric_mean([2.0, 0.5]) == pytest.approx(1.0)
    assert geometric_mean([1.1]) == pytest.approx(1.1)
    assert geometric_mean([1.0, 1.21]) == pytest.approx(1.1)


def test_geometric_mean_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError, match="no values"):
        geometric_mean([])


def test_setting_key_is_sorted_by_name_and_names_the_defaults() -> None:
    assert setting_key({}) == "defaults"
    assert setting_key({"k1": 1.5, "b": 0.6}) == "b=0.6,k1=1.5"


def test_each_fold_chooses_without_its_own_collection() -> None:
    # "tuned" wins on a and b by a lot and loses on c; each fold must not see its own.
    ratios = {
        "defaults": {"a": 1.0, "b": 1.0, "c": 1.0},
        "tuned": {"a": 1.2, "b": 1.1, "c": 0.8},
    }
    folds = leave_one_out(ratios, ["a", "b", "c"])
    # Held out a: b and c give tuned sqrt(1.1 * 0.8) < 1, so the defaults win.
    assert folds[0] == Fold("a", "defaults", 1.0, 1.0)
    # Held out b: sqrt(1.2 * 0.8) < 1, the defaults again.
    assert folds[1] == Fold("b", "defaults", 1.0, 1.0)
    # Held out c: sqrt(1.2 * 1.1) > 1, tuned, which then scores 0.8 on c.
    assert folds[2].setting_key == "tuned"
    assert folds[2].training_mean == pytest.approx(math.sqrt(1.2 * 1.1))
    assert folds[2].held_out_ratio == 0.8


def test_a_tie_keeps_the_first_setting() -> None:
    ratios = {"defaults": {"a": 1.0, "b": 1.0}, "same": {"a": 1.0, "b": 1.0}}
    assert [fold.setting_key for fold in leave_one_out(ratios, ["a", "b"])] == [
        "defaults",
        "defaults",
    ]


def test_a_lever_is_crossed_with_every_setting_of_the_grid() -> None:
    grid: list[Setting] = [{}, {"rrf_k": 20}, {"rrf_k": 20, "b": 0.75}]
    # The lever's value wins over the grid's own.
    assert crossed(grid, {"b": 0.6}) == [
        {"b": 0.6},
        {"rrf_k": 20, "b": 0.6},
        {"rrf_k": 20, "b": 0.6},
    ]


def test_the_folds_a_lever_lowers_are_named() -> None:
    grid_ratios = {
        "defaults": {"a": 1.0, "b": 1.0, "c": 1.0},
    }
    # The lever wins a and b and loses c. Held out a: sqrt(1.1 * 0.9) < 1, the defaults.
    # Held out b: sqrt(1.2 * 0.9) > 1, the lever, which scores 1.1 there (a rise). Held
    # out c: sqrt(1.2 * 1.1) > 1, the lever, which scores 0.9 where the defaults did 1.0.
    with_lever = {**grid_ratios, "lever": {"a": 1.2, "b": 1.1, "c": 0.9}}
    before = leave_one_out(grid_ratios, ["a", "b", "c"])
    after = leave_one_out(with_lever, ["a", "b", "c"])
    assert [fold.setting_key for fold in after] == ["defaults", "lever", "lever"]
    assert lowered_folds(before, after) == ["c"]
    assert lowered_folds(before, before) == []
