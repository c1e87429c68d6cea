"""Retrieval quality on collections nobody here wrote: CISI, MEDLINE, CACM and NPL, head to head.

Each collection (BEIR layout, in `<repo>/../shared/data/`, read in place) is
turned into a fixture file by the project's own importer (`qualbench import
beir`) in a temporary folder, loaded with the plugin's fixture loader and
chunked once by the built-in chunkers. The built-in engine, bm25s, tantivy and
the plain `bm25` ranker then each order those chunks for every case, and their
first 10 chunks are judged with the report's metric definitions
(`evaluation.metrics`), exactly as the head-to-head section does.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from benchmarks.loo import Fold, leave_one_out, setting_key
from pytest_qualbench.cli import qualbench as qualbench_cli
from pytest_qualbench.engine.builtin import (
    DEFAULT_RRF_K,
    DEFAULT_SCORE_GAP_WEIGHT,
    DEFAULT_TRIGRAM_FULL_WEIGHT_WORDS,
    Engine,
)
from pytest_qualbench.engine.chunking import chunk_entries
from pytest_qualbench.engine.types import Chunk, IndexState
from pytest_qualbench.evaluation.metrics import (
    mean_metrics,
    needle_matches,
    positive_case_metrics,
)
from pytest_qualbench.fixtures import Case, load_fixture_set
from pytest_qualbench.sections.rankers import RANKING_DEPTH, resolve_ranker

# `<repo>/../shared/data`; QUALBENCH_SHARED_DATA names another folder (a git worktree's
# checkout sits elsewhere than the repository it belongs to).
SHARED_DATA = Path(
    os.environ.get("QUALBENCH_SHARED_DATA")
    or Path(__file__).resolve().parents[1].parent / "shared" / "data"
)
COLLECTIONS = ("cisi", "med", "cacm", "npl")
TITLES = {"cisi": "CISI", "med": "MEDLINE", "cacm": "CACM", "npl": "NPL"}
# The peers the engine must match: the strongest lexical engines the project ships.
PEERS = ("bm25s", "tantivy")
# The plugin's plain-BM25 ranker, shown for reference.
BASELINE = "bm25"
REFERENCE = "engine"
RANKERS = (REFERENCE, *PEERS, BASELINE)
METRICS = ("ndcg@10", "mrr", "recall@10")
# The values the quality benchmark chooses among by leave-one-collection-out, for the
# three fusion options (issue 24): the trigram layer's full-weight query length, RRF's
# k, and the weight of the layers' score gaps (0: plain RRF). Each collection's LOO
# row is the engine with the setting chosen on the other three. Declared before the
# held-out figures were looked at; `python -m benchmarks.tune` measured the other
# levers (docs/engine.md, "What was measured").
LOO_VALUES: dict[str, tuple[Any, ...]] = {
    "trigram_full_weight_words": (2, 3, 4, 8),
    "rrf_k": (10, 20, 60),
    "score_gap_weight": (0.0, 0.01, 0.03, 0.1),
}
ENGINE_DEFAULTS: dict[str, Any] = {
    "trigram_full_weight_words": DEFAULT_TRIGRAM_FULL_WEIGHT_WORDS,
    "rrf_k": DEFAULT_RRF_K,
    "score_gap_weight": DEFAULT_SCORE_GAP_WEIGHT,
}


def grid(values: Mapping[str, Sequence[Any]], defaults: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every combination of `values`, each as the options it sets apart from `defaults`;
    the defaults (`{}`) first, so a tie goes to them."""
    combinations = [
        dict(zip(values, chosen, strict=True)) for chosen in itertools.product(*values.values())
    ]
    settings = [
        {name: value for name, value in chosen.items() if value != defaults[name]}
        for chosen in combinations
    ]
    return [{}] + [setting for setting in settings if setting]


LOO_GRID: tuple[dict[str, Any], ...] = tuple(grid(LOO_VALUES, ENGINE_DEFAULTS))


@dataclass(frozen=True)
class Collection:
    """One imported collection: its chunks and positive cases, each case's relevant-chunk count."""

    name: str
    chunks: tuple[Chunk, ...]
    cases: tuple[Case, ...]
    relevant_totals: tuple[int, ...]
    # The default engine's index of the chunks, restored for every setting that can use it.
    default_index: IndexState


@dataclass(frozen=True)
class RankerQuality:
    """One ranker's mean metrics over one collection's cases, and how many it corrected."""

    collection: str
    ranker: str
    cases: int
    metrics: dict[str, float]
    corrected: int | None
    # The engine row scored with the defaults chosen without this collection (LOO).
    held_out: bool = False


def missing_collections(data: Path = SHARED_DATA) -> list[str]:
    """The collections whose BEIR folder is absent (the benchmark skips, naming them)."""
    return [name for name in COLLECTIONS if not (data / name / "corpus.jsonl").is_file()]


def import_collection(name: str, workdir: Path, data: Path = SHARED_DATA) -> Path:
    """`qualbench import beir <data>/<name> -o <workdir>/<name>.jsonl`, its summary kept quiet."""
    output = workdir / f"{name}.jsonl"
    # --needles: the rankers here are judged by needle, chunk by chunk (the head-to-head's rule).
    arguments = ["import", "beir", str(data / name), "-o", str(output), "--name", name, "--needles"]
    with contextlib.redirect_stdout(io.StringIO()):
        status = qualbench_cli.main(arguments)
    if status != 0:
        raise RuntimeError(f"qualbench {' '.join(arguments)} exited {status}")
    return output


def load_collection(name: str, workdir: Path, data: Path = SHARED_DATA) -> Collection:
    """Import, load and chunk one collection once, for every ranker and setting to share."""
    fixture_path = import_collection(name, workdir, data)
    fixture_set = load_fixture_set([fixture_path], fixture_path.parent)
    errors = fixture_set.errors()
    if errors:
        raise RuntimeError(f"{fixture_path}: {errors[0]}")
    chunks, _ = chunk_entries(fixture_set.entries())
    cases = tuple(
        sorted(
            (case for case in fixture_set.cases() if not case.is_negative),
            key=lambda c: c.case_id,
        )
    )
    # |R| of each case: the chunks holding one of its needles (the head-to-head's count).
    totals = tuple(
        sum(1 for chunk in chunks if any(needle in chunk.text for needle in case.needles))
        for case in cases
    )
    engine = Engine()
    engine.index_chunks(chunks)
    return Collection(name, chunks, cases, totals, engine.index_state())


def judged(collection: Collection, rankings: Sequence[Sequence[int]]) -> dict[str, float]:
    """The mean METRICS of one ranking per case, as the head-to-head section judges them."""
    values = []
    for case, total, ranking in zip(
        collection.cases, collection.relevant_totals, rankings, strict=True
    ):
        texts = [collection.chunks[index].text for index in ranking[:RANKING_DEPTH]]
        values.append(
            positive_case_metrics(
                needle_matches(texts, case.needles),
                relevant_total=total,
                rank_ceiling=0,
                first_relevant_layer=None,
                expected_layer=case.expected_layer,
                layers_reported=False,
            )
        )
    means = mean_metrics(values, METRICS)
    return {metric: means[metric] or 0.0 for metric in METRICS}


# Engine options the index itself depends on; the others apply to the collection's
# default index restored (`Engine.restore_index`), which saves a build per setting.
BUILD_OPTIONS = frozenset({"title_weight"})


def indexed_engine(collection: Collection, setting: Mapping[str, Any]) -> Engine:
    """The built-in engine with `setting`'s keyword arguments, indexed over the chunks."""
    engine = Engine(**setting)
    if BUILD_OPTIONS & set(setting):
        engine.index_chunks(collection.chunks)
        return engine
    engine.restore_index(collection.default_index)
    return engine


def ranker_quality(
    collection: Collection, ranker_name: str, engine: Engine, *, held_out: bool = False
) -> RankerQuality:
    """One ranker's quality over the collection, the engine given ranking for `engine`."""
    ranker = resolve_ranker(ranker_name)(engine, collection.chunks)
    try:
        rankings = [ranker.rank(case.query, collection.chunks) for case in collection.cases]
    finally:
        close = getattr(ranker, "close", None)
        if callable(close):
            close()
    corrected = None
    if ranker_name == REFERENCE:
        corrected = sum(engine.corrected_query(case.query) is not None for case in collection.cases)
    return RankerQuality(
        collection=collection.name,
        ranker=ranker_name,
        cases=len(collection.cases),
        metrics=judged(collection, rankings),
        corrected=corrected,
        held_out=held_out,
    )


def engine_quality(collection: Collection, setting: Mapping[str, Any]) -> RankerQuality:
    """The built-in engine's quality with `setting` (keyword arguments of `Engine`)."""
    return ranker_quality(collection, REFERENCE, indexed_engine(collection, setting))


def peer_quality(collection: Collection, peer: str) -> dict[str, float]:
    """A peer's metrics over the collection (the engine is only passed along, not used)."""
    return ranker_quality(collection, peer, Engine()).metrics


@dataclass(frozen=True)
class QualityRun:
    """Every row of one quality run, and the leave-one-collection-out folds behind its LOO rows."""

    rows: tuple[RankerQuality, ...]
    folds: tuple[Fold, ...]


def measure_quality(
    collections: Sequence[Collection], grid: Sequence[Mapping[str, Any]] = LOO_GRID
) -> QualityRun:
    """Peers and the engine (defaults) on every collection, then the LOO rows over `grid`."""
    rows: list[RankerQuality] = []
    engine_rows: dict[str, dict[str, RankerQuality]] = {}
    for collection in collections:
        engine = indexed_engine(collection, {})
        rows.extend(ranker_quality(collection, name, engine) for name in RANKERS)
    names = [collection.name for collection in collections]
    ratios: dict[str, dict[str, float]] = {}
    for setting in grid:
        key = setting_key(setting)
        engine_rows[key] = {}
        for collection in collections:
            row = find(rows, collection.name, REFERENCE) if not setting else None
            engine_rows[key][collection.name] = row or engine_quality(collection, setting)
        ratios[key] = {
            name: engine_rows[key][name].metrics["ndcg@10"] / best_peer_ndcg(rows, name)
            for name in names
        }
    folds = tuple(leave_one_out(ratios, names))
    for fold in folds:
        rows.append(replace(engine_rows[fold.setting_key][fold.held_out], held_out=True))
    return QualityRun(tuple(rows), folds)


def find(rows: Sequence[RankerQuality], collection: str, ranker: str) -> RankerQuality | None:
    return next(
        (r for r in rows if r.collection == collection and r.ranker == ranker and not r.held_out),
        None,
    )


def best_peer_ndcg(rows: Sequence[RankerQuality], collection: str) -> float:
    """The highest nDCG@10 among the PEERS on one collection, measured in this run."""
    figures = [find(rows, collection, peer) for peer in PEERS]
    return max(row.metrics["ndcg@10"] for row in figures if row is not None)


def table_lines(rows: Sequence[RankerQuality]) -> list[str]:
    """A row per (collection, ranker), then the engine's nDCG@10 over the best peer's."""
    header = f"{'collection':<11}{'ranker':<16}{'cases':>6}" + "".join(
        f"{metric:>11}" for metric in METRICS
    )
    lines = [header + f"{'corrected':>11}{'/ best peer':>13}"]
    for row in rows:
        corrected = "-" if row.corrected is None else f"{row.corrected}/{row.cases}"
        cells = "".join(f"{row.metrics[metric]:>11.3f}" for metric in METRICS)
        name = f"{row.ranker} (LOO)" if row.held_out else row.ranker
        relative = ""
        if row.ranker == REFERENCE and all(find(rows, row.collection, p) for p in PEERS):
            relative = f"{row.metrics['ndcg@10'] / best_peer_ndcg(rows, row.collection):>13.3f}"
        lines.append(
            f"{TITLES.get(row.collection, row.collection):<11}{name:<16}{row.cases:>6}{cells}"
            f"{corrected:>11}{relative}"
        )
    return lines


def fold_lines(folds: Sequence[Fold]) -> list[str]:
    """Each held-out collection, the setting chosen on the other three and both figures."""
    lines = [f"{'held out':<11}{'chosen on the other three':<50}{'train gm':>10}{'held out':>10}"]
    for fold in folds:
        lines.append(
            f"{TITLES.get(fold.held_out, fold.held_out):<11}{fold.setting_key:<50}"
            f"{fold.training_mean:>10.3f}{fold.held_out_ratio:>10.3f}"
        )
    return lines
