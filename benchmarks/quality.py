"""Retrieval quality on collections nobody here wrote: CISI and MEDLINE, head to head.

Each collection (BEIR layout, in `<repo>/../shared/data/`, read in place) is
turned into a fixture file by the project's own importer (`qualbench import
beir`) in a temporary folder, loaded with the plugin's fixture loader and
indexed by the built-in engine. Every ranker of `--qualbench-rankers` then
orders the engine's chunks for each case, and its first 10 chunks are judged
with the report's metric definitions, exactly as the head-to-head section does.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_qualbench.cli import qualbench as qualbench_cli
from pytest_qualbench.engine.builtin import Engine
from pytest_qualbench.evaluation.metrics import mean_metrics
from pytest_qualbench.fixtures import Case, load_fixture_set
from pytest_qualbench.sections.head_to_head import ranking_metrics
from pytest_qualbench.sections.rankers import resolve_ranker

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
COLLECTIONS = ("cisi", "med")
RANKERS = ("flatfile", "bm25", "engine")
METRICS = ("ndcg@10", "mrr", "recall@10")
BASELINE = "bm25"
REFERENCE = "engine"


@dataclass(frozen=True)
class RankerQuality:
    """One ranker's mean metrics over one collection's cases, and how many it corrected."""

    collection: str
    ranker: str
    cases: int
    metrics: dict[str, float]
    corrected: int | None


def missing_collections(data: Path = SHARED_DATA) -> list[str]:
    """The collections whose BEIR folder is absent (the benchmark skips, naming them)."""
    return [name for name in COLLECTIONS if not (data / name / "corpus.jsonl").is_file()]


def import_collection(name: str, workdir: Path, data: Path = SHARED_DATA) -> Path:
    """`qualbench import beir <data>/<name> -o <workdir>/<name>.jsonl`, its summary kept quiet."""
    output = workdir / f"{name}.jsonl"
    arguments = ["import", "beir", str(data / name), "-o", str(output), "--name", name]
    with contextlib.redirect_stdout(io.StringIO()):
        status = qualbench_cli.main(arguments)
    if status != 0:
        raise RuntimeError(f"qualbench {' '.join(arguments)} exited {status}")
    return output


def measure_collection(
    name: str,
    fixture_path: Path,
    rankers: Sequence[str] = RANKERS,
    engine_factory: Callable[[], Engine] = Engine,
) -> list[RankerQuality]:
    """Every ranker's quality on one imported collection, rankers in the order given."""
    fixture_set = load_fixture_set([fixture_path], fixture_path.parent)
    errors = fixture_set.errors()
    if errors:
        raise RuntimeError(f"{fixture_path}: {errors[0]}")
    engine = engine_factory()
    engine.index(fixture_set.entries())
    chunks = engine.chunks()
    cases = sorted(
        (case for case in fixture_set.cases() if not case.is_negative), key=lambda c: c.case_id
    )
    measured = []
    for ranker_name in rankers:
        ranker = resolve_ranker(ranker_name)(engine, chunks)
        values = [
            ranking_metrics(case, chunks, ranker.rank(case.query, chunks), METRICS)
            for case in cases
        ]
        means = mean_metrics(values, METRICS)
        measured.append(
            RankerQuality(
                collection=name,
                ranker=ranker_name,
                cases=len(cases),
                metrics={metric: means[metric] or 0.0 for metric in METRICS},
                corrected=corrected_count(engine, cases) if ranker_name == REFERENCE else None,
            )
        )
    return measured


def corrected_count(engine: Engine, cases: Sequence[Case]) -> int:
    """How many case queries the engine rewrote (each is correctly spelled English)."""
    return sum(engine.corrected_query(case.query) is not None for case in cases)


def table_lines(rows: Sequence[RankerQuality]) -> list[str]:
    """The one table: a row per (collection, ranker), then the engine's ratio to plain bm25."""
    header = f"{'collection':<11}{'ranker':<10}{'cases':>6}" + "".join(
        f"{metric:>11}" for metric in METRICS
    )
    lines = [header + f"{'corrected':>11}"]
    for row in rows:
        corrected = "-" if row.corrected is None else f"{row.corrected}/{row.cases}"
        cells = "".join(f"{row.metrics[metric]:>11.3f}" for metric in METRICS)
        lines.append(f"{row.collection:<11}{row.ranker:<10}{row.cases:>6}{cells}{corrected:>11}")
    for collection in dict.fromkeys(row.collection for row in rows):
        ratios = {
            metric: ratio(rows, collection, metric)
            for metric in METRICS
            if find(rows, collection, BASELINE) and find(rows, collection, REFERENCE)
        }
        if ratios:
            cells = "".join(f"{value:>11.3f}" for value in ratios.values())
            lines.append(f"{collection:<11}{'eng/bm25':<10}{'':>6}{cells}")
    return lines


def find(rows: Sequence[RankerQuality], collection: str, ranker: str) -> RankerQuality | None:
    return next((r for r in rows if r.collection == collection and r.ranker == ranker), None)


def ratio(rows: Sequence[RankerQuality], collection: str, metric: str) -> float:
    """engine / bm25 for one metric of one collection, both measured in this run."""
    engine = find(rows, collection, REFERENCE)
    baseline = find(rows, collection, BASELINE)
    assert engine is not None and baseline is not None
    return engine.metrics[metric] / baseline.metrics[metric]
