"""Rebuild the golden reports in this directory: `python tests/data/reports/build_reports.py`.

The reports follow docs/report-format.md field by field. Each case is described
by where its needles were found (rank of each needle's first result, None = not
returned), its layer and its ceiling; metrics, failures and aggregates are derived
from that with the definitions of docs/metrics.md, so the golden files stay
internally consistent. The files are committed; the tests never run this script.

- base.json             every positive case first hit at rank 2 or 3; pt_002_q2 fails its ceiling
- head_regression.json  md_001_q1 drops past its ceiling, md_002_q1 loses a needle, js_001_q1
                        changes layer, js_002_q_neg returns results; pt_002_q2 passes again
- head_improved.json    every positive case now hits at rank 1, every needle at rank 1 or 2
- head_same.json        the same results as base, another run (timestamp, sha, latency)
- other_dataset.json    fixtures edited: another dataset_hash, pt_003_q2 removed, pt_004_q1 added
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
BASE_HASH = "sha256:" + "5a" * 32
OTHER_HASH = "sha256:" + "c3" * 32
RRF = "rrf(porter+trigram)"
LAYER_BY_TYPE = {"markdown": RRF, "json": "porter", "plaintext": "trigram"}


@dataclass(frozen=True)
class Spec:
    case_id: str
    content_type: str
    needle_ranks: tuple[int | None, ...]  # empty for a negative case
    ceiling: int = 3
    layer: str | None = None  # None: the expected layer of its content type
    result_count: int = 10


def base_specs() -> list[Spec]:
    specs = []
    for prefix, content_type in (("md", "markdown"), ("js", "json"), ("pt", "plaintext")):
        specs += [
            Spec(f"{prefix}_001_q1", content_type, (2,)),
            Spec(f"{prefix}_001_q2", content_type, (3, 5), ceiling=5),
            Spec(f"{prefix}_002_q1", content_type, (2, 4)),
            Spec(f"{prefix}_002_q2", content_type, (3,), ceiling=0),
            Spec(f"{prefix}_003_q1", content_type, (2,), ceiling=2),
            Spec(f"{prefix}_003_q2", content_type, (3, 6), ceiling=5),
            Spec(f"{prefix}_002_q_neg", content_type, (), ceiling=0, result_count=0),
        ]
    # One case fails in base, so a head can turn it into a newly passing one.
    return [
        replace(s, needle_ranks=(6,), ceiling=5) if s.case_id == "pt_002_q2" else s for s in specs
    ]


def regression_specs() -> list[Spec]:
    changed = {
        "md_001_q1": lambda s: replace(s, needle_ranks=(5,)),
        "md_002_q1": lambda s: replace(s, needle_ranks=(2, None)),
        "js_001_q1": lambda s: replace(s, layer="trigram"),
        "js_002_q_neg": lambda s: replace(s, result_count=2),
        "pt_002_q2": lambda s: replace(s, needle_ranks=(2,)),
    }
    return [changed[s.case_id](s) if s.case_id in changed else s for s in base_specs()]


def improved_specs() -> list[Spec]:
    return [
        s
        if not s.needle_ranks
        else replace(s, needle_ranks=tuple(1 + i for i in range(len(s.needle_ranks))))
        for s in base_specs()
    ]


def other_dataset_specs() -> list[Spec]:
    kept = [s for s in base_specs() if s.case_id != "pt_003_q2"]
    return [*kept, Spec("pt_004_q1", "plaintext", (1,))]


def expected_layer(spec: Spec) -> str:
    return "none" if not spec.needle_ranks else LAYER_BY_TYPE[spec.content_type]


def needles(spec: Spec) -> list[str]:
    return [f"needle {spec.case_id} {i}" for i in range(1, len(spec.needle_ranks) + 1)]


def first_rank(spec: Spec) -> int | None:
    found = [r for r in spec.needle_ranks if r is not None]
    return min(found) if found else None


def case_metrics(spec: Spec) -> dict[str, float | None]:
    if not spec.needle_ranks:
        return {"negative_pass": 1.0 if spec.result_count == 0 else 0.0}
    rank = first_rank(spec)
    found = [r for r in spec.needle_ranks if r is not None]
    total = len(spec.needle_ranks)

    def hit(k: int) -> float:
        return 1.0 if rank is not None and rank <= k else 0.0

    dcg = sum(1 / math.log2(r + 1) for r in sorted(set(found)) if r <= 10)
    idcg = sum(1 / math.log2(i + 1) for i in range(1, min(total, 10) + 1))
    layer = spec.layer or expected_layer(spec)
    return {
        "hit@1": hit(1),
        "hit@3": hit(3),
        "hit@5": hit(5),
        "hit@10": hit(10),
        "precision@1": hit(1),
        "recall@5": sum(1 for r in found if r <= 5) / total,
        "recall@10": sum(1 for r in found if r <= 10) / total,
        "mrr": 0.0 if rank is None else 1 / rank,
        "ndcg@10": dcg / idcg,
        "context_recall": len(found) / total,
        "rank_ceiling_pass": None
        if spec.ceiling == 0
        else (1.0 if rank is not None and rank <= spec.ceiling else 0.0),
        "layer_accuracy": 1.0 if rank is not None and layer == expected_layer(spec) else 0.0,
    }


def case_failures(spec: Spec) -> list[dict[str, Any]]:
    if not spec.needle_ranks:
        if spec.result_count == 0:
            return []
        return [
            {
                "case_id": spec.case_id,
                "type": "negative",
                "expected": 0,
                "actual": spec.result_count,
            }
        ]
    failures: list[dict[str, Any]] = []
    rank = first_rank(spec)
    found = [n for n, r in zip(needles(spec), spec.needle_ranks, strict=True) if r is not None]
    layer = None if rank is None else (spec.layer or expected_layer(spec))
    if len(found) < len(spec.needle_ranks):
        failures.append(
            {"case_id": spec.case_id, "type": "needles", "expected": needles(spec), "actual": found}
        )
    if spec.ceiling and (rank is None or rank > spec.ceiling):
        failures.append(
            {"case_id": spec.case_id, "type": "rank", "expected": spec.ceiling, "actual": rank}
        )
    if layer != expected_layer(spec):
        failures.append(
            {
                "case_id": spec.case_id,
                "type": "layer",
                "expected": expected_layer(spec),
                "actual": layer,
            }
        )
    return sorted(failures, key=lambda f: f["type"])


def definition(spec: Spec) -> str:
    """What the case asks, as the plugin digests it (docs/report-format.md, `definition`)."""
    asked = [
        spec.content_type,
        f"query for {spec.case_id}",
        needles(spec),
        expected_layer(spec),
        spec.ceiling,
    ]
    text = json.dumps(asked, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def manifest(dataset_hash: str) -> list[dict[str, Any]]:
    """One row per fixture file; the edited fixture set changed plaintext.jsonl."""
    edited = dataset_hash == OTHER_HASH
    return [
        {
            "path": f"bench_fixtures/{content_type}.jsonl",
            "bytes": 4096 + (100 if edited and content_type == "plaintext" else 0),
            "sha256": ("c3" if edited and content_type == "plaintext" else "5a") * 32,
        }
        for content_type in ("json", "markdown", "plaintext")
    ]


def case_record(spec: Spec, latency_ms: float) -> dict[str, Any]:
    rank = first_rank(spec)
    return {
        "case_id": spec.case_id,
        "entry_id": spec.case_id.rsplit("_q", 1)[0],
        "content_type": spec.content_type,
        "definition": definition(spec),
        "query": f"query for {spec.case_id}",
        "corrected_query": None,
        "expected_layer": expected_layer(spec),
        "expected_rank_ceiling": spec.ceiling,
        "negative": not spec.needle_ranks,
        "result_count": spec.result_count,
        "rank": rank,
        "layer": None if rank is None else (spec.layer or expected_layer(spec)),
        "needles_found": [
            n for n, r in zip(needles(spec), spec.needle_ranks, strict=True) if r is not None
        ],
        "needles_total": len(spec.needle_ranks),
        "metrics": case_metrics(spec),
        "passed": not case_failures(spec),
        "latency_ms": latency_ms,
    }


def mean_table(cases: list[dict[str, Any]], names: list[str]) -> dict[str, Any]:
    table: dict[str, Any] = {"cases": len(cases)}
    for name in names:
        values = [c["metrics"][name] for c in cases if c["metrics"].get(name) is not None]
        table[name] = math.fsum(values) / len(values) if values else None
    return table


POSITIVE_METRICS = [
    "hit@1",
    "hit@3",
    "hit@5",
    "hit@10",
    "precision@1",
    "recall@5",
    "recall@10",
    "mrr",
    "ndcg@10",
    "context_recall",
    "rank_ceiling_pass",
    "layer_accuracy",
]


def build(
    specs: list[Spec], *, dataset_hash: str, sha: str, timestamp: str, latency_scale: float
) -> dict[str, Any]:
    specs = sorted(specs, key=lambda s: s.case_id)
    cases = [case_record(s, round(0.3 + 0.01 * i * latency_scale, 3)) for i, s in enumerate(specs)]
    positives = [c for c in cases if not c["negative"]]
    negatives = [c for c in cases if c["negative"]]
    types = sorted({c["content_type"] for c in cases})
    layers = sorted({c["expected_layer"] for c in positives})
    overall = mean_table(positives, POSITIVE_METRICS)
    negative_table = mean_table(negatives, ["negative_pass"])
    negative_table["by_content_type"] = {
        t: mean_table([c for c in negatives if c["content_type"] == t], ["negative_pass"])
        for t in types
        if any(c["content_type"] == t for c in negatives)
    }
    failures = sorted(
        (f for s in specs for f in case_failures(s)), key=lambda f: (f["case_id"], f["type"])
    )
    return {
        "schema_version": 3,
        "complete": True,
        "metric_version": 1,
        "dataset_hash": dataset_hash,
        "dataset_files": manifest(dataset_hash),
        "metadata": {
            "timestamp": timestamp,
            "git": {"sha": sha, "branch": "main" if sha.startswith("a") else "feature"},
            "python": "3.11.7",
            "platform": "Linux-6.1-x86_64",
            "plugin_version": "0.1.0",
            "engine": {"name": "pytest_qualbench.engine:Engine", "config": {"k1": 1.2}},
            "relevant_set": "chunks",
            "selection": {"cases_in_fixture_set": len(cases), "cases_run": len(cases)},
        },
        "overall": overall,
        "by_content_type": {
            t: mean_table([c for c in positives if c["content_type"] == t], POSITIVE_METRICS)
            for t in types
        },
        "by_layer": {
            layer: mean_table(
                [c for c in positives if c["expected_layer"] == layer], POSITIVE_METRICS
            )
            for layer in layers
        },
        "negatives": negative_table,
        "latency": {
            t: {
                "p50_ms": 0.41 * latency_scale,
                "p95_ms": 1.2 * latency_scale,
                "index_ms": 35.0 * latency_scale,
            }
            for t in types
        },
        "cases": cases,
        "failures": failures,
        "floors": [
            {"metric": "mrr", "floor": 0.3, "value": overall["mrr"], "ok": overall["mrr"] >= 0.3}
        ],
    }


def main() -> None:
    reports = {
        "base.json": build(
            base_specs(),
            dataset_hash=BASE_HASH,
            sha="a1" * 20,
            timestamp="2026-11-30T01:02:03+00:00",
            latency_scale=1.0,
        ),
        "head_regression.json": build(
            regression_specs(),
            dataset_hash=BASE_HASH,
            sha="b2" * 20,
            timestamp="2026-11-30T02:00:00+00:00",
            latency_scale=1.1,
        ),
        "head_improved.json": build(
            improved_specs(),
            dataset_hash=BASE_HASH,
            sha="b3" * 20,
            timestamp="2026-11-30T02:10:00+00:00",
            latency_scale=0.9,
        ),
        "head_same.json": build(
            base_specs(),
            dataset_hash=BASE_HASH,
            sha="b4" * 20,
            timestamp="2026-11-30T02:20:00+00:00",
            latency_scale=1.05,
        ),
        "other_dataset.json": build(
            other_dataset_specs(),
            dataset_hash=OTHER_HASH,
            sha="b5" * 20,
            timestamp="2026-11-30T02:30:00+00:00",
            latency_scale=1.0,
        ),
    }
    for name, report in reports.items():
        text = json.dumps(report, sort_keys=True, indent=2) + "\n"
        (HERE / name).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
