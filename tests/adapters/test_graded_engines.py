"""A fixture file judged only by `relevant` on every shipped engine: green, and metrics
that equal a by-hand document-level evaluation of what the engine returned.

The by-hand evaluation is written out here on purpose, not taken from
`evaluation.metrics`: each result is its entry (through `source`, as every
shipped engine sets it), each entry counts once at its first rank, nDCG@10 uses
the grades with trec_eval's linear gain, and |R| is the judged-relevant entries.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from pytest_qualbench.adapters.registry import BUILTIN_ENGINES, resolve_engine
from pytest_qualbench.engine import capabilities
from pytest_qualbench.engine.types import ALL_KINDS, Result
from pytest_qualbench.evaluation.runner import BenchRun
from pytest_qualbench.fixtures.loading import load_fixture_set
from tests.adapters.conftest import installed
from tests.conftest import WriteFixture, entry

GRADED: list[dict[str, Any]] = [
    entry(
        "md_001",
        "# Replica lag\n\nReplica lag grows while vacuum runs on the primary.",
        [
            {
                "case_id": "md_001_q1",
                "query": "replica lag vacuum primary",
                "relevant": {"md_001": 2, "md_002": 1, "md_003": 0},
                "expected_layer": "any",
                "expected_rank_ceiling": 3,
            }
        ],
    ),
    entry(
        "md_002",
        "# Vacuum tuning\n\nA long vacuum on the primary makes replica lag spike.",
    ),
    entry(
        "md_003",
        "# Eviction storms\n\nThe cache evicts hot keys when memory is full.",
        [
            {
                "case_id": "md_003_q1",
                "query": "cache evicts hot keys memory",
                "relevant": {"md_003": 1},
                "expected_layer": "any",
                "expected_rank_ceiling": 3,
            }
        ],
    ),
]
LIBRARIES = {
    "bm25s": "bm25s",
    "tantivy": "tantivy",
    "postgres": "psycopg",
    "dense": "wordllama",
    "hybrid": "wordllama",
    "chroma": "chromadb",
    "lancedb": "lancedb",
    "faiss": "faiss",
}
SOURCE_PREFIX = "bench-"  # tests.conftest.entry's source_label


def by_hand(results: list[Result], grades: dict[str, int]) -> dict[str, float]:
    """Document-level metrics of one ranking, written out (trec_eval's definitions)."""
    ranked: list[str] = []
    for result in results:
        entry_id = result.source.removeprefix(SOURCE_PREFIX)
        if entry_id not in ranked:
            ranked.append(entry_id)
    gains = [grades.get(entry_id, 0) for entry_id in ranked]
    relevant = [gain >= 1 for gain in gains]
    judged_relevant = sum(1 for grade in grades.values() if grade >= 1)
    dcg = sum(gain / math.log2(rank + 1) for rank, gain in enumerate(gains[:10], start=1))
    ideal_gains = sorted(grades.values(), reverse=True)[:10]
    ideal = sum(gain / math.log2(rank + 1) for rank, gain in enumerate(ideal_gains, start=1))
    first = relevant.index(True) + 1 if True in relevant else None
    return {
        "precision@1": float(relevant[:1] == [True]),
        "hit@3": float(any(relevant[:3])),
        "recall@5": sum(relevant[:5]) / judged_relevant,
        "mrr": 0.0 if first is None else 1.0 / first,
        "ndcg@10": dcg / ideal,
        "context_recall": sum(relevant) / judged_relevant,
    }


def engine_options(name: str, postgres_dsn: str | None, cache: Path) -> dict[str, Any]:
    if name == "postgres":
        return {"dsn": postgres_dsn}
    if BUILTIN_ENGINES[name].embeds:
        return {"embedding_cache": str(cache)}
    return {}


@pytest.fixture
def dsn_if_needed(request: pytest.FixtureRequest, name: str) -> str | None:
    return request.getfixturevalue("postgres_dsn") if name == "postgres" else None


@pytest.mark.parametrize("name", sorted(BUILTIN_ENGINES))
def test_a_relevant_only_fixture_is_green_with_by_hand_metrics(
    pytester: pytest.Pytester,
    write_fixture: WriteFixture,
    tmp_path: Path,
    name: str,
    dsn_if_needed: str | None,
) -> None:
    library = LIBRARIES.get(name)
    if library is not None and not installed(library):
        pytest.skip(f"{library} is not installed: pip install -e '.[test]'")
    path = write_fixture("graded.jsonl", GRADED)
    if dsn_if_needed is not None:
        pytester.makeini(f"[pytest]\nqualbench_postgres_dsn = {dsn_if_needed}\n")
    result = pytester.runpytest(
        "--qualbench", f"--qualbench-engine={name}", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=2)
    report = json.loads((pytester.path / ".qualbench" / "report.json").read_text("utf-8"))
    gate = {case["case_id"]: case["metrics"] for case in report["cases"]}

    fixture_set = load_fixture_set([path], path.parent)
    factory = resolve_engine(name)
    options = engine_options(name, dsn_if_needed, tmp_path / "embeddings")
    run = BenchRun(fixture_set, lambda _content_type: factory(**options), 10)
    try:
        for case in fixture_set.cases():
            engine = run.corpus(case.content_type).engine
            results = list(capabilities.search(engine, case.query, limit=10, kinds=ALL_KINDS))
            expected = by_hand(results, dict(case.relevant))
            record = run.run_case(case)
            for metric, value in expected.items():
                assert record.metrics[metric] == pytest.approx(value, abs=1e-12), (case, metric)
                assert gate[case.case_id][metric] == pytest.approx(value, abs=1e-12), metric
    finally:
        run.close()
