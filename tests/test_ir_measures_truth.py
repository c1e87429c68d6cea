"""The gate's document-level metrics against ir_measures (pytrec_eval) on the same run.

A collection is imported as graded cases (`qualbench import beir`, its own grades
in `relevant`), each case runs through the plugin's `BenchRun` as the gate runs
it, and the same results are written as a TREC run file at document level (each
document once, at its best rank). ir_measures then scores that file against the
collection's qrels, read from the qrels file itself, not from the fixtures.
nDCG@10, R@10, RR and P@1 must agree to 1e-9, query by query.

The graded collection is `tests/data/ir_collection` (grades 0-2, written by hand,
with a document judged twice, a judgment of an unknown document and a query with
nothing relevant); CISI and MEDLINE (binary) come from `../shared/data` and are
skipped, with the reason, where that folder is absent.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable
from pathlib import Path

import ir_measures
import pytest
from ir_measures import RR, P, R, nDCG

from pytest_qualbench.cli.qualbench import main
from pytest_qualbench.engine import ALL_KINDS, Engine, SearchEngine
from pytest_qualbench.evaluation.runner import BenchRun
from pytest_qualbench.fixtures.loading import load_fixture_set

HAND_MADE = Path(__file__).parent / "data" / "ir_collection"
SHARED_DATA = Path(
    os.environ.get("QUALBENCH_SHARED_DATA")
    or Path(__file__).resolve().parents[1].parent / "shared" / "data"
)
MEASURES = {"ndcg@10": nDCG @ 10, "recall@10": R @ 10, "mrr": RR, "precision@1": P @ 1}


def qrels_of(directory: Path, documents: set[str]) -> list[ir_measures.Qrel]:
    """The qrels file as trec_eval reads it, first judgment of a pair kept (as the importer
    does), judgments of documents the corpus lacks left out (no run can retrieve them)."""
    rows = list(
        csv.reader((directory / "qrels" / "test.tsv").read_text().splitlines(), delimiter="\t")
    )
    seen: set[tuple[str, str]] = set()
    qrels = []
    for query_id, doc_id, grade in rows[1:]:
        if (query_id, doc_id) not in seen and doc_id in documents:
            seen.add((query_id, doc_id))
            qrels.append(ir_measures.Qrel(query_id, doc_id, int(grade)))
    return qrels


def compare(
    directory: Path, name: str, tmp_path: Path, make_engine: Callable[[], SearchEngine]
) -> int:
    """Run every imported case through the gate and ir_measures; assert they agree."""
    output = tmp_path / f"{name}.jsonl"
    assert main(["import", "beir", str(directory), "-o", str(output), "--name", name]) == 0
    fixture_set = load_fixture_set([output], tmp_path)
    assert fixture_set.errors() == ()
    run = BenchRun(fixture_set, engine_factory=lambda _: make_engine(), limit=10)
    ours: dict[str, dict[str, float]] = {}
    lines = []
    for entry in fixture_set.entries():
        query_ids = entry.metadata.get("query_ids", [])
        for case, query_id in zip(entry.cases, query_ids, strict=True):
            record = run.run_case(case)
            assert record.passed or all(f.type != "error" for f in record.failures)
            ours[query_id] = {metric: record.metrics[metric] or 0.0 for metric in MEASURES}
            engine = run.corpus(case.content_type).engine
            results = engine.search(case.query, limit=10, kinds=ALL_KINDS)
            doc_ids = list(dict.fromkeys(r.source.removeprefix(f"{name}:") for r in results))
            lines += [
                f"{query_id} Q0 {doc_id} {rank} {len(doc_ids) - rank} gate"
                for rank, doc_id in enumerate(doc_ids, start=1)
            ]
    run_file = tmp_path / "run.trec"
    run_file.write_text("\n".join(lines) + "\n")
    documents = {entry.metadata["doc_id"] for entry in fixture_set.entries()}
    qrels = qrels_of(directory, documents)
    theirs = {query_id: dict.fromkeys(MEASURES, 0.0) for query_id in ours}
    by_measure = {str(measure): metric for metric, measure in MEASURES.items()}
    # ir_measures' readers carry no type hints.
    run_read = ir_measures.read_trec_run(str(run_file))  # type: ignore[no-untyped-call]
    scored = ir_measures.iter_calc(list(MEASURES.values()), qrels, run_read)
    for value in scored:
        if value.query_id in theirs:
            theirs[value.query_id][by_measure[str(value.measure)]] = value.value
    for query_id in ours:
        assert ours[query_id] == pytest.approx(theirs[query_id], abs=1e-9, rel=0), query_id
    # Not a run of zeros and ones: some query ranks a relevant document below another.
    assert any(0.0 < values["ndcg@10"] < 1.0 for values in ours.values())
    return len(ours)


def test_a_hand_made_graded_collection_agrees_with_ir_measures(tmp_path: Path) -> None:
    assert compare(HAND_MADE, "coffee", tmp_path, Engine) == 10


@pytest.mark.parametrize("collection", ["cisi", "med"])
def test_bm25s_through_the_gate_agrees_with_ir_measures(tmp_path: Path, collection: str) -> None:
    pytest.importorskip("bm25s")
    from pytest_qualbench.adapters.bm25s import Bm25sEngine

    directory = SHARED_DATA / collection
    if not (directory / "corpus.jsonl").is_file():
        pytest.skip(f"{directory} is absent (set QUALBENCH_SHARED_DATA)")
    assert compare(directory, collection, tmp_path, Bm25sEngine) > 25
