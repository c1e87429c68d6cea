"""Paired significance of a metric change: randomization test and bootstrap interval.

Pure functions over per-case values, each naming its source.
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
import random
from collections.abc import Sequence

ROUNDS = 10_000


# Percentile intervals need about a thousand resamples (Efron & Tibshirani 1993,
# 19.3); each costs one draw per changed case, so 2,000 keeps a large report fast.
RESAMPLES = 2_000


ALPHA = 0.05


CONFIDENCE = 0.95


# Deltas and sums are float arithmetic: a drop of "exactly 0.02" must not regress
# because 0.90 - 0.88 evaluates to 0.020000000000000018.
FLOAT_SLACK = 1e-9


def paired_randomization_p_value(
    differences: Sequence[float], rng: random.Random, *, rounds: int = ROUNDS
) -> float:
    """Two-sided p of the paired sign-flip randomization test (Fisher 1935; Smucker et al. 2007)."""
    nonzero = [d for d in differences if d != 0]
    if not nonzero:
        return 1.0
    observed = abs(math.fsum(nonzero))
    threshold = observed - observed * FLOAT_SLACK
    # Each random byte flips the signs of one block of eight differences; a table
    # per block holds the signed sum for all 256 patterns, so a round costs one
    # lookup per eight cases instead of one operation per case.
    blocks = [nonzero[start : start + 8] for start in range(0, len(nonzero), 8)]
    tables = [sign_pattern_sums(block) for block in blocks]
    extreme = 0
    for _ in range(rounds):
        pattern = rng.getrandbits(8 * len(blocks)).to_bytes(len(blocks), "little")
        if abs(math.fsum(map(operator.getitem, tables, pattern))) >= threshold:
            extreme += 1
    # Counting the observed labelling itself keeps p above zero (Phipson & Smyth 2010).
    return (extreme + 1) / (rounds + 1)


def sign_pattern_sums(block: Sequence[float]) -> list[float]:
    """Signed sum of `block` for each 8-bit pattern: bit i set keeps block[i], clear negates it."""
    return [
        math.fsum(value if pattern >> bit & 1 else -value for bit, value in enumerate(block))
        for pattern in range(256)
    ]


def bootstrap_interval(
    differences: Sequence[float],
    rng: random.Random,
    *,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean paired difference (Efron & Tibshirani 1993)."""
    size = len(differences)
    nonzero = sorted(d for d in differences if d != 0)
    if not nonzero:
        return (0.0, 0.0)
    # Between two runs most cases do not change. Drawing how many of the `size`
    # resampled cases are changed ones (binomial), then which, has the same
    # distribution as `size` uniform draws, at the cost of the changed cases only.
    changed_draws = binomial_cdf(size, len(nonzero) / size)
    means = sorted(
        math.fsum(rng.choices(nonzero, k=bisect.bisect_left(changed_draws, rng.random()))) / size
        for _ in range(resamples)
    )
    tail = (1.0 - confidence) / 2.0
    return (nearest_rank_percentile(means, tail), nearest_rank_percentile(means, 1.0 - tail))


def binomial_cdf(trials: int, probability: float) -> list[float]:
    """Cumulative Binomial(trials, probability) from k = 0 to trials, the last entry forced to 1."""
    if probability >= 1.0:
        return [0.0] * trials + [1.0]
    log_p, log_q = math.log(probability), math.log1p(-probability)
    log_n = math.lgamma(trials + 1)
    masses = (
        math.exp(
            log_n
            - math.lgamma(k + 1)
            - math.lgamma(trials - k + 1)
            + k * log_p
            + (trials - k) * log_q
        )
        for k in range(trials + 1)
    )
    cumulative = list(itertools.accumulate(masses))
    # Rounding can leave the total a hair under 1; a draw there must still land on k <= trials.
    cumulative[-1] = 1.0
    return cumulative


def nearest_rank_percentile(sorted_values: Sequence[float], quantile: float) -> float:
    """The order statistic nearest `quantile` (Efron & Tibshirani 1993, percentile interval)."""
    index = min(len(sorted_values) - 1, max(0, round(quantile * (len(sorted_values) - 1))))
    return sorted_values[index]
