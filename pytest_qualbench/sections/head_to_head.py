"""The head-to-head table: every ranker over the same chunks and positive cases.

Each ranker's first `RANKING_DEPTH` chunks are judged with the metric
definitions of the main report (docs/metrics.md), so the `engine` column
of a built-in engine run matches the report's own numbers at limit 10. The
engine's lift over every other ranker is given absolute and relative.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_qualbench.engine import capabilities
from pytest_qualbench.engine.types import Chunk, Result, SearchEngine
from pytest_qualbench.evaluation.metrics import (
    GAINS,
    graded_case_metrics,
    mean_metrics,
    needle_matches,
    percentile,
    positive_case_metrics,
)
from pytest_qualbench.evaluation.relevance import (
    DEFAULT_GAIN,
    DEFAULT_MIN_GRADE,
    EntryAttribution,
    entry_ranking,
)
from pytest_qualbench.fixtures.schema import Case
from pytest_qualbench.sections.rankers import RANKING_DEPTH, Ranker, RankerFactory

HEAD_TO_HEAD_METRICS = ("precision@1", "hit@3", "recall@5", "mrr", "ndcg@10")
REFERENCE_RANKER = "engine"

# (engine indexed over the content type's corpus, the chunks it built)
CorpusOf = Callable[[str], tuple[SearchEngine, Sequence[Chunk]]]


@dataclass(frozen=True)
class Grading:
    """How cases judged by `relevant` are scored: the run's entries, min grade and gain."""

    # The content type's entries, to name the entry each ranked chunk comes from.
    attribution_of: Callable[[str], EntryAttribution]
    min_grade: int = DEFAULT_MIN_GRADE
    gain: str = DEFAULT_GAIN


def ranking_metrics(
    case: Case,
    chunks: Sequence[Chunk],
    ranking: Sequence[int],
    names: Sequence[str] = HEAD_TO_HEAD_METRICS,
) -> dict[str, float]:
    """The metrics `names` of one positive case for one ranker's chunk order."""
    texts = [chunks[index].text for index in ranking[:RANKING_DEPTH]]
    relevant_total = sum(
        1 for chunk in chunks if any(needle in chunk.text for needle in case.needles)
    )
    values = positive_case_metrics(
        needle_matches(texts, case.needles),
        relevant_total=relevant_total,
        rank_ceiling=0,
        first_relevant_layer=None,
        expected_layer=case.expected_layer,
        layers_reported=False,
    )
    return {name: float(values[name] or 0.0) for name in names}


def graded_ranking_metrics(
    case: Case,
    chunks: Sequence[Chunk],
    ranking: Sequence[int],
    attribution: EntryAttribution,
    grading: Grading,
    names: Sequence[str] = HEAD_TO_HEAD_METRICS,
) -> dict[str, float]:
    """The metrics `names` of one case judged by entry for one ranker's chunk order: each
    entry once at its best rank, graded nDCG, as the report judges it (docs/metrics.md)."""
    results = [
        Result(text=chunk.text, title=chunk.title, source=chunk.source, position=chunk.position)
        for chunk in (chunks[index] for index in ranking[:RANKING_DEPTH])
    ]
    entries = entry_ranking(results, case.relevant, attribution, case.needles)
    values = graded_case_metrics(
        [ranked.grade for ranked in entries],
        list(case.relevant.values()),
        min_grade=grading.min_grade,
        gain=GAINS[grading.gain],
        rank_ceiling=0,
        first_relevant_layer=None,
        expected_layer=case.expected_layer,
        layers_reported=False,
    )
    return {name: float(values[name] or 0.0) for name in names}


def case_metrics(
    case: Case,
    chunks: Sequence[Chunk],
    ranking: Sequence[int],
    content_type: str,
    grading: Grading | None,
) -> dict[str, float]:
    """One case's head-to-head metrics, by needle or, for a case with `relevant`, by entry."""
    if not case.relevant:
        return ranking_metrics(case, chunks, ranking)
    if grading is None:
        raise ValueError(f"case {case.case_id} is judged by entry: the section needs its Grading")
    return graded_ranking_metrics(
        case, chunks, ranking, grading.attribution_of(content_type), grading
    )


def lift(reference: float | None, other: float | None) -> dict[str, float | None]:
    """Lift of reference over other: absolute difference, and relative to other (None at 0)."""
    if reference is None or other is None:
        return {"absolute": None, "relative": None}
    absolute = reference - other
    return {"absolute": absolute, "relative": absolute / other if other else None}


def head_to_head(
    cases: Sequence[Case],
    corpus_of: CorpusOf,
    rankers: Sequence[tuple[str, RankerFactory]],
    grading: Grading | None = None,
) -> dict[str, Any]:
    """The report's `rankers` section over the positive cases, grouped by content type.

    Cases with `relevant` are judged by entry with `grading`, as the report judges them.
    """
    names = [name for name, _ in rankers]
    positives = sorted((case for case in cases if not case.is_negative), key=lambda c: c.case_id)
    per_ranker: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    latencies: dict[str, list[float]] = {name: [] for name in names}
    by_type: dict[str, dict[str, Any]] = {}
    configs: dict[str, Mapping[str, object]] = {}
    for content_type in sorted({case.content_type for case in positives}):
        engine, chunks = corpus_of(content_type)
        type_cases = [case for case in positives if case.content_type == content_type]
        type_values: dict[str, list[dict[str, float]]] = {}
        for name, factory in rankers:
            ranker: Ranker = factory(engine, chunks)
            config = capabilities.config(ranker)
            if config:
                configs.setdefault(name, config)
            type_values[name] = []
            for case in type_cases:
                started = time.perf_counter()
                ranking = ranker.rank(case.query, chunks)
                latencies[name].append((time.perf_counter() - started) * 1000.0)
                type_values[name].append(case_metrics(case, chunks, ranking, content_type, grading))
            # A ranker holding an index outside the process (a server, files) releases it.
            capabilities.close(ranker)
            per_ranker[name].extend(type_values[name])
        by_type[content_type] = {
            "cases": len(type_cases),
            "metrics": metric_table(type_values, names),
        }
    metrics = metric_table(per_ranker, names)
    return {
        "rankers": names,
        "depth": RANKING_DEPTH,
        "cases": len(positives),
        "metrics": metrics,
        "lift": lift_table(metrics, names),
        # Each rank() call, the ranker's own query time over the same chunks.
        "p50_ms": {name: _rounded(percentile(latencies[name], 0.50)) for name in names},
        # Each ranker's own config (its library and version, its parameters), as the
        # report records the engine's; `engine` and `quality` rank with that engine.
        "config": {name: configs[name] for name in names if name in configs},
        "by_content_type": by_type,
    }


def metric_table(
    values: Mapping[str, Sequence[Mapping[str, float]]], names: Sequence[str]
) -> dict[str, dict[str, float | None]]:
    """{metric: {ranker: mean over cases}}."""
    means = {name: mean_metrics(values[name], HEAD_TO_HEAD_METRICS) for name in names}
    return {
        metric: {name: means[name][metric] for name in names} for metric in HEAD_TO_HEAD_METRICS
    }


def lift_table(
    metrics: Mapping[str, Mapping[str, float | None]], names: Sequence[str]
) -> dict[str, dict[str, dict[str, float | None]]]:
    """{ranker: {metric: lift}} of the `engine` ranker over every other; empty without it."""
    if REFERENCE_RANKER not in names:
        return {}
    return {
        name: {
            metric: lift(metrics[metric][REFERENCE_RANKER], metrics[metric][name])
            for metric in HEAD_TO_HEAD_METRICS
        }
        for name in names
        if name != REFERENCE_RANKER
    }


def summary_lines(section: Mapping[str, Any]) -> list[str]:
    """The head-to-head table for the terminal: one row per metric, one column per ranker."""
    names: list[str] = section["rankers"]
    width = max(10, *(len(name) + 2 for name in names))
    lines = [
        f"head-to-head over {section['cases']} positive cases (top {section['depth']} chunks each)",
        f"{'metric':<13}" + "".join(f"{name:>{width}}" for name in names),
    ]
    for metric in HEAD_TO_HEAD_METRICS:
        row = section["metrics"][metric]
        lines.append(f"{metric:<13}" + "".join(f"{_fmt(row[name]):>{width}}" for name in names))
    # Reports written before p50_ms was recorded have no such row.
    if "p50_ms" in section:
        p50 = section["p50_ms"]
        lines.append(f"{'p50 ms':<13}" + "".join(f"{_fmt(p50[name]):>{width}}" for name in names))
    if section["lift"]:
        lines.append(
            f"{'engine lift':<13}" + "".join(f"{metric:>18}" for metric in HEAD_TO_HEAD_METRICS)
        )
        # Rows in the order the rankers were asked for (the JSON object sorts its keys).
        for other in (name for name in names if name in section["lift"]):
            lifts = section["lift"][other]
            cells = "".join(
                f"{_signed(lifts[metric]['absolute']) + ' (' + _percent(lifts[metric]['relative']) + ')':>18}"
                for metric in HEAD_TO_HEAD_METRICS
            )
            lines.append(f"{'vs ' + other:<13}{cells}")
    return lines


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:+.1f}%"
