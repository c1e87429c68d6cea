"""Paired significance of a metric change: randomization test and bootstrap interval.

Pure functions over per-case differences (head minus base), each naming its source.
Each draws from the numpy generator it is given; `generator(label)` seeds one from a
text, so the same two reports always give the same numbers.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import numpy as np

ROUNDS = 10_000


# Percentile intervals need about a thousand resamples (Efron & Tibshirani 1993,
# 19.3); each costs one draw per changed case, so 2,000 keeps a large report fast.
RESAMPLES = 2_000


ALPHA = 0.05


CONFIDENCE = 0.95


# Deltas and sums are float arithmetic: a drop of "exactly 0.02" must not regress
# because 0.90 - 0.88 evaluates to 0.020000000000000018.
FLOAT_SLACK = 1e-9


# Rounds are drawn as a matrix of signs, this many cells at a time: a report whose
# 10^5 cases all changed stays within tens of megabytes.
CELLS_PER_BATCH = 1 << 22


def generator(label: str) -> np.random.Generator:
    """A generator seeded from `label`'s SHA-256: the same stream on every machine."""
    digest = hashlib.sha256(label.encode("utf-8")).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def paired_randomization_p_value(
    differences: Sequence[float], rng: np.random.Generator, *, rounds: int = ROUNDS
) -> float:
    """Two-sided p of the paired sign-flip randomization test (Fisher 1935; Smucker et al. 2007).

    Under the null hypothesis each case's difference is as likely negated: a round
    gives every difference a random sign, and p is the share of rounds whose |sum|
    reaches the observed |sum|. An unchanged case adds 0 whatever its sign.
    """
    changed = np.array([d for d in differences if d != 0], dtype=np.float64)
    if changed.size == 0:
        return 1.0
    observed = abs(math.fsum(changed))
    threshold = observed - observed * FLOAT_SLACK
    extreme = 0
    batch = max(1, CELLS_PER_BATCH // changed.size)
    for start in range(0, rounds, batch):
        signs = rng.choice((-1.0, 1.0), size=(min(batch, rounds - start), changed.size))
        extreme += int(np.count_nonzero(np.abs(signs @ changed) >= threshold))
    # Counting the observed labelling itself keeps p above zero (Phipson & Smyth 2010).
    return (extreme + 1) / (rounds + 1)


def bootstrap_interval(
    differences: Sequence[float],
    rng: np.random.Generator,
    *,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean paired difference (Efron & Tibshirani 1993, 13.3).

    A resample draws len(differences) cases with replacement; only the changed ones
    add to its sum, and how many of them it draws is Binomial(n, changed / n), so each
    resample draws that many changed cases and no unchanged one: the same
    distribution, at the cost of the changed cases only.
    """
    size = len(differences)
    changed = np.array([d for d in differences if d != 0], dtype=np.float64)
    if changed.size == 0:
        return (0.0, 0.0)
    counts = rng.binomial(size, changed.size / size, size=resamples)
    means = sorted(float(rng.choice(changed, size=count).sum()) / size for count in counts)
    tail = (1.0 - confidence) / 2.0
    low = nearest_rank_percentile(means, tail)
    high = nearest_rank_percentile(means, 1.0 - tail)
    return (low, high)


def nearest_rank_percentile(sorted_values: Sequence[float], quantile: float) -> float:
    """The order statistic nearest `quantile` (Efron & Tibshirani 1993, percentile interval)."""
    index = min(len(sorted_values) - 1, max(0, round(quantile * (len(sorted_values) - 1))))
    return sorted_values[index]
