"""Leave-one-collection-out: choosing a setting without the collection it is scored on.

A setting's score on a collection is the engine's nDCG@10 over the best peer's,
both from the same run. For each held-out collection, the setting with the
highest geometric mean of that ratio over the other collections is chosen; its
ratio on the held-out one is what the procedure predicts for a collection it
never saw (docs/engine.md, "Choosing the defaults").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Setting = Mapping[str, Any]


@dataclass(frozen=True)
class Fold:
    """One held-out collection, the setting chosen on the others, and both figures."""

    held_out: str
    setting_key: str
    training_mean: float
    held_out_ratio: float


def geometric_mean(values: Iterable[float]) -> float:
    """exp(mean(log v)): a mean of ratios where a gain and an equal loss cancel."""
    listed = list(values)
    if not listed:
        raise ValueError("the geometric mean of no values")
    return math.exp(math.fsum(math.log(value) for value in listed) / len(listed))


def setting_key(setting: Setting) -> str:
    """A setting as `name=value,...` in name order; `defaults` when it sets nothing."""
    return ",".join(f"{name}={value}" for name, value in sorted(setting.items())) or "defaults"


def leave_one_out(
    ratios: Mapping[str, Mapping[str, float]], collections: Sequence[str]
) -> list[Fold]:
    """For each collection, the setting whose geometric-mean ratio over the others is highest.

    `ratios[setting_key][collection]` is engine / best peer. Ties go to the first
    setting in `ratios` order (list the defaults first: a change must win to be chosen).
    """
    folds = []
    for held_out in collections:
        training = [name for name in collections if name != held_out]
        best_key = ""
        best_mean = -math.inf
        for key, by_collection in ratios.items():
            mean = geometric_mean(by_collection[name] for name in training)
            if mean > best_mean:
                best_key, best_mean = key, mean
        folds.append(Fold(held_out, best_key, best_mean, ratios[best_key][held_out]))
    return folds


def crossed(grid: Sequence[Setting], lever: Setting) -> list[dict[str, Any]]:
    """Every setting of the grid with the lever's options set too (the lever's win)."""
    return [{**setting, **lever} for setting in grid]


def lowered_folds(before: Sequence[Fold], after: Sequence[Fold]) -> list[str]:
    """The held-out collections whose ratio is lower after than before.

    A lever ships only when it lowers no fold (docs/engine.md, "Choosing the
    defaults"): a rise in the mean bought with one collection's loss is the
    in-sample gain that does not transfer.
    """
    ratio_before = {fold.held_out: fold.held_out_ratio for fold in before}
    return [fold.held_out for fold in after if fold.held_out_ratio < ratio_before[fold.held_out]]
