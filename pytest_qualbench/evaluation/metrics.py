"""Retrieval metrics: one pure function per formula, and their aggregation.

docs/metrics.md states every definition; `METRIC_VERSION` names their version.
Every per-case function takes `relevance`, the ranked results reduced to
booleans (True = the result's text contains a needle; `needle_matches` checks
each text once), so each formula can be checked by hand on a list of a few
booleans; `reciprocal_rank` takes the first relevant rank, all a report keeps
of a case's ranking (compare's rank moves).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

METRIC_VERSION = 1

HIT_KS = (1, 3, 5, 10)
RECALL_KS = (5, 10)
NDCG_K = 10

# The canonical names, in the order tables show them.
METRIC_NAMES = (
    *(f"hit@{k}" for k in HIT_KS),
    "precision@1",
    *(f"recall@{k}" for k in RECALL_KS),
    "mrr",
    f"ndcg@{NDCG_K}",
    "context_recall",
    "rank_ceiling_pass",
    "layer_accuracy",
)
# Final: a literal key of the report's negatives table (report.model.Negatives).
NEGATIVE_METRIC: Final = "negative_pass"
ALL_METRIC_NAMES = (*METRIC_NAMES, NEGATIVE_METRIC)


def metric_sort_key(metric: str) -> tuple[int, str]:
    """Documented metrics in their documented order, newer ones after, alphabetically."""
    if metric in ALL_METRIC_NAMES:
        return (ALL_METRIC_NAMES.index(metric), metric)
    return (len(ALL_METRIC_NAMES), metric)


MetricValues = Mapping[str, float | None]


def first_relevant_rank(relevance: Sequence[bool]) -> int | None:
    """1-based rank of the first relevant result, None when none is relevant."""
    for index, is_relevant in enumerate(relevance):
        if is_relevant:
            return index + 1
    return None


def hit_at_k(relevance: Sequence[bool], k: int) -> float:
    """hit@k (docs/metrics.md): 1 if a relevant result is in the top k, else 0."""
    return 1.0 if any(relevance[:k]) else 0.0


def reciprocal_rank(first_relevant: int | None) -> float:
    """Reciprocal rank (Voorhees, TREC-8 QA): 1 / first relevant rank, 0 if none."""
    return 0.0 if first_relevant is None else 1.0 / first_relevant


def dcg_at_k(relevance: Sequence[bool], k: int) -> float:
    """Binary-gain DCG (Järvelin & Kekäläinen 2002): sum of 1/log2(rank+1) over relevant ranks <= k."""
    return sum(1.0 / math.log2(rank + 1) for rank, rel in enumerate(relevance[:k], start=1) if rel)


def ndcg_at_k(relevance: Sequence[bool], relevant_total: int, k: int = NDCG_K) -> float:
    """nDCG@k (docs/metrics.md): DCG over the IDCG of min(|R|, k) relevant results at ranks 1..n.

    An engine whose results are not its chunks can return more relevant results
    than |R| counts; the ideal then takes at least those, so nDCG stays <= 1.
    """
    ideal_hits = max(min(relevant_total, k), sum(relevance[:k]))
    ideal = dcg_at_k([True] * ideal_hits, k)
    return 0.0 if ideal == 0.0 else dcg_at_k(relevance, k) / ideal


def linear_gain(grade: int) -> float:
    """trec_eval's gain: the grade itself (ndcg_cut with its default gains)."""
    return float(grade)


def exponential_gain(grade: int) -> float:
    """Burges et al.'s gain 2^grade - 1 (RankNet, 2005): a higher grade counts far more."""
    return float(2**grade - 1)


GAINS: dict[str, Callable[[int], float]] = {"linear": linear_gain, "exponential": exponential_gain}


def graded_dcg_at_k(grades: Sequence[int], k: int, gain: Callable[[int], float]) -> float:
    """DCG (Järvelin & Kekäläinen 2002, as trec_eval's ndcg_cut): sum of gain / log2(rank+1)."""
    return sum(
        gain(grade) / math.log2(rank + 1)
        for rank, grade in enumerate(grades[:k], start=1)
        if grade > 0
    )


def graded_ndcg_at_k(
    grades: Sequence[int],
    judged: Iterable[int],
    k: int = NDCG_K,
    gain: Callable[[int], float] = linear_gain,
) -> float:
    """nDCG@k over grades (docs/metrics.md): DCG of the ranked entries' grades over the DCG
    of every judged grade sorted best first, the ideal trec_eval uses."""
    ideal = graded_dcg_at_k(sorted(judged, reverse=True), k, gain)
    return 0.0 if ideal == 0.0 else graded_dcg_at_k(grades, k, gain) / ideal


def graded_case_metrics(
    grades: Sequence[int],
    judged: Sequence[int],
    *,
    min_grade: int,
    gain: Callable[[int], float],
    rank_ceiling: int,
    first_relevant_layer: str | None,
    expected_layer: str,
    layers_reported: bool,
) -> dict[str, float | None]:
    """Every metric of METRIC_NAMES for one case judged by entry (`relevant`).

    `grades` are the grades of the ranked entries (each entry once, at its best
    rank), `judged` every grade the case gives. An entry of grade >= `min_grade`
    is relevant for hit, precision, recall, MRR and context recall; the relevant-set
    size is the number of such judged entries, as trec_eval counts it. nDCG uses the
    grades themselves; context recall is the share of relevant entries among all
    the ranked ones.
    """
    relevance = [grade >= min_grade for grade in grades]
    relevant_total = sum(1 for grade in judged if grade >= min_grade)
    rank = first_relevant_rank(relevance)
    values: dict[str, float | None] = {f"hit@{k}": hit_at_k(relevance, k) for k in HIT_KS}
    values["precision@1"] = values["hit@1"]
    for k in RECALL_KS:
        values[f"recall@{k}"] = sum(relevance[:k]) / relevant_total if relevant_total else 0.0
    values["mrr"] = reciprocal_rank(rank)
    values[f"ndcg@{NDCG_K}"] = graded_ndcg_at_k(grades, judged, NDCG_K, gain)
    values["context_recall"] = sum(relevance) / relevant_total if relevant_total else 0.0
    values["rank_ceiling_pass"] = (
        None if rank_ceiling == 0 else float(rank is not None and rank <= rank_ceiling)
    )
    values["layer_accuracy"] = (
        float(first_relevant_layer == expected_layer) if layers_reported else None
    )
    return values


@dataclass(frozen=True)
class NeedleMatches:
    """A case's ranked result texts, each checked once for each of its distinct needles.

    Every needle metric is read off this one pass: scanning the texts again for
    each metric was a third of the time judging a case took.
    """

    # The distinct needles, in needle order.
    needles: tuple[str, ...]
    # Per ranked text: whether it holds a needle (case-sensitive substring).
    relevance: tuple[bool, ...]
    # Per needle held by some text: the 1-based rank of the first text holding it.
    first_ranks: Mapping[str, int]

    def found(self, k: int | None = None) -> tuple[str, ...]:
        """The needles held by one of the top k texts (by any text: None), in needle order."""
        return tuple(
            needle
            for needle in self.needles
            if needle in self.first_ranks and (k is None or self.first_ranks[needle] <= k)
        )


def needle_matches(texts: Iterable[str], needles: Sequence[str]) -> NeedleMatches:
    """Which ranked texts hold which needles: `needle in text` once per text and needle."""
    distinct = tuple(dict.fromkeys(needles))
    relevance: list[bool] = []
    first_ranks: dict[str, int] = {}
    for rank, text in enumerate(texts, start=1):
        held = [needle for needle in distinct if needle in text]
        relevance.append(bool(held))
        for needle in held:
            first_ranks.setdefault(needle, rank)
    return NeedleMatches(distinct, tuple(relevance), first_ranks)


def needle_recall(matches: NeedleMatches, k: int | None = None) -> float:
    """recall@k / context_recall (docs/metrics.md): distinct needles found in the top k
    (context_recall: in all the results) / distinct needles."""
    if not matches.needles:
        return 0.0
    return len(matches.found(k)) / len(matches.needles)


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """Percentile by linear interpolation between closest ranks (numpy's default method)."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * fraction
    lower = math.floor(position)
    upper = math.ceil(position)
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (position - lower)


def positive_case_metrics(
    matches: NeedleMatches,
    *,
    relevant_total: int,
    rank_ceiling: int,
    first_relevant_layer: str | None,
    expected_layer: str,
    layers_reported: bool,
) -> dict[str, float | None]:
    """Every metric of METRIC_NAMES for one positive case, from its ranked results' needles.

    `rank_ceiling_pass` is None when the case sets no ceiling, `layer_accuracy`
    when the engine reports no layers: neither then counts in a denominator.
    """
    relevance = matches.relevance
    rank = first_relevant_rank(relevance)
    values: dict[str, float | None] = {f"hit@{k}": hit_at_k(relevance, k) for k in HIT_KS}
    values["precision@1"] = values["hit@1"]
    for k in RECALL_KS:
        values[f"recall@{k}"] = needle_recall(matches, k)
    values["mrr"] = reciprocal_rank(rank)
    values[f"ndcg@{NDCG_K}"] = ndcg_at_k(relevance, relevant_total)
    values["context_recall"] = needle_recall(matches)
    values["rank_ceiling_pass"] = (
        None if rank_ceiling == 0 else float(rank is not None and rank <= rank_ceiling)
    )
    values["layer_accuracy"] = (
        float(first_relevant_layer == expected_layer) if layers_reported else None
    )
    return values


def negative_case_metrics(result_count: int) -> dict[str, float | None]:
    """negative_pass (docs/metrics.md): 1 when a negative case returned nothing."""
    return {NEGATIVE_METRIC: 1.0 if result_count == 0 else 0.0}


def mean_metrics(cases: Sequence[MetricValues], names: Sequence[str]) -> dict[str, float | None]:
    """Mean of each metric over the cases that define it; None when none does."""
    means: dict[str, float | None] = {}
    for name in names:
        defined = [value for case in cases if (value := case.get(name)) is not None]
        means[name] = math.fsum(defined) / len(defined) if defined else None
    return means


def grouped_means(
    cases: Sequence[MetricValues],
    group_of: Callable[[int], str],
    names: Sequence[str],
) -> dict[str, dict[str, float | None]]:
    """`mean_metrics` per group, groups in sorted order; `group_of(i)` names case i's group."""
    groups: dict[str, list[MetricValues]] = {}
    for index, case in enumerate(cases):
        groups.setdefault(group_of(index), []).append(case)
    return {group: mean_metrics(groups[group], names) for group in sorted(groups)}
