"""Small JSON reports (docs/report-format.md) for the HTML report and terminal tests.

Built in code rather than loaded from golden files so each test states the one
thing it varies: the timestamp, the dataset hash, a hostile query.
"""

from __future__ import annotations

from pytest_qualbench.report.model import (
    CaseJson,
    Metadata,
    MetricTable,
    Report,
    TopResultJson,
)

DATASET_HASH = "sha256:" + "ab" * 32
HOSTILE_QUERY = "<script>window.__pwned=1</script></textarea><b>bold</b>"


def metric_block(cases: int, level: float) -> MetricTable:
    """Every positive-case metric set to `level`, as a report aggregate."""
    names = (
        "hit@1", "hit@3", "hit@5", "hit@10", "precision@1", "recall@5", "recall@10",
        "mrr", "ndcg@10", "context_recall", "rank_ceiling_pass", "layer_accuracy",
    )  # fmt: skip
    return {"cases": cases, **dict.fromkeys(names, level)}


def case(
    case_id: str,
    *,
    content_type: str = "markdown",
    query: str = "connection pool settings",
    rank: int | None = 1,
    negative: bool = False,
    result_count: int = 10,
    top_results: list[TopResultJson] | None = None,
) -> CaseJson:
    """One case record; metrics follow from `rank` (mrr = 1/rank)."""
    record: CaseJson = {
        "case_id": case_id,
        "entry_id": case_id.rsplit("_q", 1)[0],
        "content_type": content_type,
        "definition": "sha256:" + "cd" * 32,
        "query": query,
        "corrected_query": None,
        "expected_layer": "none" if negative else "rrf(porter+trigram)",
        "expected_rank_ceiling": 0 if negative else 3,
        "negative": negative,
        "result_count": result_count,
        "rank": None if negative else rank,
        "layer": None if negative or rank is None else "rrf(porter+trigram)",
        "needles_found": [] if negative or rank is None else ["## Connection Pool Settings"],
        "needles_total": 0 if negative else 1,
        "metrics": {},
        "passed": True,
        "latency_ms": 0.5,
        "duplicate_results": 0,
        "layer_not_checked": None,
    }
    if negative:
        record["metrics"] = {"negative_pass": 1.0 if result_count == 0 else 0.0}
    else:
        found = 0.0 if rank is None else 1.0
        record["metrics"] = {
            "hit@1": 1.0 if rank == 1 else 0.0,
            "mrr": 0.0 if rank is None else 1 / rank,
            "context_recall": found,
            "rank_ceiling_pass": 1.0 if rank is not None and rank <= 3 else 0.0,
        }
    if top_results is not None:
        record["top_results"] = top_results
    return record


def metadata(
    *,
    timestamp: str = "2026-11-30T01:02:03+00:00",
    cases_in_fixture_set: int = 5,
    cases_run: int = 5,
) -> Metadata:
    """A run's metadata: the built-in engine at commit 0123456 on main."""
    return {
        "timestamp": timestamp,
        "git": {"sha": "0123456789abcdef0123456789abcdef01234567", "branch": "main"},
        "python": "3.11.7",
        "platform": "Linux-6.1-x86_64",
        "plugin_version": "0.1.0",
        "engine": {
            "name": "pytest_qualbench.engine:Engine",
            "config": {"b": 0.75, "k1": 1.2},
            "options": {},
            "warnings": [],
        },
        "relevant_set": "chunks",
        "selection": {
            "cases_in_fixture_set": cases_in_fixture_set,
            "cases_run": cases_run,
            "selected_by": [],
        },
    }


def report(
    *,
    timestamp: str = "2026-11-30T01:02:03+00:00",
    dataset_hash: str = DATASET_HASH,
    level: float = 0.9,
    hostile: bool = False,
    rankers: bool = False,
) -> Report:
    """A report with positives at ranks 1, 2 and not found, two negatives and one floor failing."""
    failing_query = HOSTILE_QUERY if hostile else "pool timeout"
    cases = [
        case("json_001_q1", content_type="json", query="p99 latency", rank=2),
        case("md_001_q1", rank=1),
        case(
            "md_001_q2",
            query=failing_query,
            rank=None,
            top_results=[
                {
                    "rank": 1,
                    "layer": "porter",
                    "title": "Pool > Timeouts" if not hostile else "<img src=x onerror=alert(1)>",
                    "snippet": "the pool waits; see ## Connection Pool Settings for limits",
                    "needle": "## Connection Pool Settings",
                },
                {
                    "rank": 2,
                    "layer": "trigram",
                    "title": "Other",
                    "snippet": "unrelated text",
                    "needle": None,
                },
            ],
        ),
        case("md_001_q_neg", negative=True, result_count=0),
        case("md_002_q_neg", negative=True, result_count=2),
    ]
    body: Report = {
        "schema_version": 1,
        "metric_version": 1,
        "dataset_hash": dataset_hash,
        "dataset_files": [],
        "metadata": metadata(timestamp=timestamp),
        "overall": metric_block(3, level),
        "by_content_type": {"json": metric_block(1, level), "markdown": metric_block(2, level)},
        "by_layer": {"rrf(porter+trigram)": metric_block(3, level)},
        "negatives": {
            "cases": 2,
            "negative_pass": 0.5,
            "by_content_type": {"markdown": {"cases": 2, "negative_pass": 0.5}},
        },
        "latency": {
            "json": {"p50_ms": 0.3, "p95_ms": 0.9, "index_ms": 12.0},
            "markdown": {"p50_ms": 0.4, "p95_ms": 1.2, "index_ms": 35.0},
        },
        "cases": cases,
        "failures": [
            {
                "case_id": "md_001_q2",
                "type": "needles",
                "expected": ["## Connection Pool Settings"],
                "actual": [],
            },
            {"case_id": "md_001_q2", "type": "rank", "expected": 3, "actual": None},
            {"case_id": "md_002_q_neg", "type": "negative", "expected": 0, "actual": 2},
        ],
        "floors": [
            {"metric": "mrr", "floor": 0.8, "value": level, "ok": level >= 0.8},
            {"metric": "json.mrr", "floor": 0.95, "value": level, "ok": level >= 0.95},
            {"metric": "negative_pass", "floor": 1.0, "value": 0.5, "ok": None},
        ],
    }
    if rankers:
        body["rankers"] = {
            "rankers": ["flatfile", "bm25", "engine"],
            "metrics": {
                "precision@1": {"flatfile": 0.4, "bm25": 0.7, "engine": level},
                "mrr": {"flatfile": 0.5, "bm25": 0.75, "engine": level},
            },
        }
    return body
