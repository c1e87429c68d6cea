"""metrics.py against independent implementations, on random rankings and relevance sets.

Two references: a from-definition implementation written here (docs/metrics.md,
read literally, runs everywhere) and trec_eval's C code through ir_measures'
pytrec_eval provider (skipped when not installed).

The model of a case: a corpus of documents d00..dNN, a relevant set R, and one
needle per relevant document that occurs in that document only. Needles map to
relevant documents one to one, so "distinct needles found / needles" (our
recall) is "relevant documents retrieved / |R|" (trec_eval's recall), and |R|
is the relevant_total the runner counts from the engine's chunks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.util import find_spec

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_qualbench.evaluation.metrics import (
    HIT_KS,
    METRIC_NAMES,
    RECALL_KS,
    mean_metrics,
    needle_matches,
    positive_case_metrics,
)

TOLERANCE = 1e-9
# The metrics that trec_eval also defines; the rest are checked from the definition only.
RANKING_METRICS = (
    *(f"hit@{k}" for k in HIT_KS),
    "precision@1",
    *(f"recall@{k}" for k in RECALL_KS),
    "mrr",
    "ndcg@10",
    "context_recall",
)


@dataclass(frozen=True)
class RankedCase:
    """A ranking of document ids over a corpus, and which documents are relevant."""

    ranking: tuple[str, ...]
    relevant: frozenset[str]

    def needle(self, doc: str) -> str:
        # Bracketed, so no needle is a substring of another document's text.
        return f"[needle {doc}]"

    @property
    def needles(self) -> tuple[str, ...]:
        return tuple(self.needle(doc) for doc in sorted(self.relevant))

    def text(self, doc: str) -> str:
        return f"text of {doc}" + (f" with {self.needle(doc)}" if doc in self.relevant else "")

    @property
    def texts(self) -> list[str]:
        return [self.text(doc) for doc in self.ranking]


@st.composite
def ranked_cases(draw: st.DrawFn, *, min_results: int = 0) -> RankedCase:
    corpus = [f"d{n:02d}" for n in range(draw(st.integers(1, 30)))]
    relevant = draw(st.sets(st.sampled_from(corpus), min_size=1))
    ranking = draw(st.permutations(corpus))[: draw(st.integers(min_results, len(corpus)))]
    return RankedCase(tuple(ranking), frozenset(relevant))


def ours(ranked: RankedCase) -> dict[str, float | None]:
    return positive_case_metrics(
        needle_matches(ranked.texts, ranked.needles),
        relevant_total=len(ranked.relevant),
        rank_ceiling=0,
        first_relevant_layer=None,
        expected_layer="porter",
        layers_reported=False,
    )


def by_definition(ranked: RankedCase) -> dict[str, float]:
    """docs/metrics.md, one line per metric, over document ids rather than texts."""
    hits = [doc in ranked.relevant for doc in ranked.ranking]
    first = hits.index(True) + 1 if True in hits else None
    ideal = min(len(ranked.relevant), 10)
    values = {f"hit@{k}": float(any(hits[:k])) for k in HIT_KS}
    values["precision@1"] = values["hit@1"]
    for k in RECALL_KS:
        values[f"recall@{k}"] = len(ranked.relevant & set(ranked.ranking[:k])) / len(
            ranked.relevant
        )
    values["mrr"] = 0.0 if first is None else 1 / first
    dcg = sum(
        1 / math.log2(rank + 1) for rank in range(1, 11) if rank <= len(hits) and hits[rank - 1]
    )
    values["ndcg@10"] = dcg / sum(1 / math.log2(rank + 1) for rank in range(1, ideal + 1))
    values["context_recall"] = len(ranked.relevant & set(ranked.ranking)) / len(ranked.relevant)
    return values


def assert_close(actual: dict[str, float | None], expected: dict[str, float]) -> None:
    for name, value in expected.items():
        got = actual[name]
        assert got is not None and abs(got - value) <= TOLERANCE, (name, got, value)


@settings(max_examples=100, deadline=None)
@given(ranked_cases())
def test_case_metrics_equal_the_definition(ranked: RankedCase) -> None:
    assert_close(ours(ranked), by_definition(ranked))


@settings(max_examples=50, deadline=None)
@given(st.lists(ranked_cases(), min_size=1, max_size=8))
def test_means_count_every_case_including_empty_rankings(cases: list[RankedCase]) -> None:
    means = mean_metrics([ours(ranked) for ranked in cases], METRIC_NAMES)
    definitions = [by_definition(ranked) for ranked in cases]
    expected = {name: sum(d[name] for d in definitions) / len(cases) for name in RANKING_METRICS}
    assert_close(means, expected)


def test_hand_computed_example_pins_the_reference() -> None:
    """The reference itself, on a case small enough to do by hand: R = {d01, d02, d05}."""
    ranked = RankedCase(("d00", "d01", "d03", "d02"), frozenset({"d01", "d02", "d05"}))
    expected = by_definition(ranked)
    assert expected["mrr"] == 1 / 2
    assert expected["recall@5"] == 2 / 3
    assert expected["ndcg@10"] == (1 / math.log2(3) + 1 / math.log2(5)) / (
        1 + 1 / math.log2(3) + 1 / math.log2(4)
    )
    assert_close(ours(ranked), expected)


# trec_eval, through ir_measures' pytrec_eval provider.

# Imported when present only: the definition checks above must run everywhere.
ir_measures = pytest.importorskip("ir_measures") if find_spec("ir_measures") else None
requires_trec_eval = pytest.mark.skipif(
    ir_measures is None or find_spec("pytrec_eval") is None,
    reason="ir-measures and pytrec-eval-terrier not installed (pip install -e '.[test]')",
)


def trec_measures() -> dict[str, object]:
    """Our metric names and the trec_eval measure that computes each."""
    assert ir_measures is not None
    return {
        **{f"hit@{k}": ir_measures.Success @ k for k in HIT_KS},
        "precision@1": ir_measures.P @ 1,
        **{f"recall@{k}": ir_measures.R @ k for k in RECALL_KS},
        "mrr": ir_measures.RR,
        "ndcg@10": ir_measures.nDCG @ 10,
        # Recall over everything returned: rankings here are at most 30 long.
        "context_recall": ir_measures.R @ 1000,
    }


def trec_eval(cases: Sequence[RankedCase]) -> tuple[list[dict[str, float]], dict[str, float]]:
    """Per-query values and their means, as trec_eval computes them."""
    assert ir_measures is not None
    qrels = [
        ir_measures.Qrel(f"q{index}", doc, 1)
        for index, ranked in enumerate(cases)
        for doc in sorted(ranked.relevant)
    ]
    # Strictly decreasing scores: trec_eval orders by score, and breaks ties by docno.
    run = [
        ir_measures.ScoredDoc(f"q{index}", doc, float(len(ranked.ranking) - rank))
        for index, ranked in enumerate(cases)
        for rank, doc in enumerate(ranked.ranking)
    ]
    assert ir_measures is not None
    measures = {measure: name for name, measure in trec_measures().items()}
    evaluator = ir_measures.pytrec_eval.evaluator(list(measures), qrels)
    per_query: list[dict[str, float]] = [{} for _ in cases]
    for metric in evaluator.iter_calc(run):
        per_query[int(metric.query_id[1:])][measures[metric.measure]] = metric.value
    means = {measures[measure]: value for measure, value in evaluator.calc_aggregate(run).items()}
    return per_query, means


@requires_trec_eval
@settings(max_examples=100, deadline=None)
@given(ranked_cases(min_results=1))
def test_case_metrics_equal_trec_eval(ranked: RankedCase) -> None:
    (expected,), _ = trec_eval([ranked])
    assert sorted(expected) == sorted(trec_measures())
    assert_close(ours(ranked), expected)


@requires_trec_eval
@settings(max_examples=50, deadline=None)
@given(st.lists(ranked_cases(min_results=1), min_size=1, max_size=8))
def test_means_equal_trec_eval(cases: list[RankedCase]) -> None:
    # trec_eval leaves a query with no results out of its means (without -c), so every
    # case here returns something; the empty case is covered by the definition test.
    _, expected = trec_eval(cases)
    assert_close(mean_metrics([ours(ranked) for ranked in cases], METRIC_NAMES), expected)
