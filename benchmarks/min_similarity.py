"""Where to set `min_similarity`: negatives passed against recall and MRR lost, per threshold.

    .venv/bin/python -m benchmarks.min_similarity [ENGINE] [THRESHOLD ...]

One `pytest --qualbench --qualbench-engine=ENGINE` (default `dense`) per data
set and threshold, with only the needles checked and no floors. The data sets
are the shipped benchmark (its own negative cases) and the four collections of
<repo>/../shared/data, imported with `qualbench import beir` into a temporary
folder. A BEIR collection has no negatives, so each gets 30 off-topic ones: the
first 30 queries of MEDLINE (medicine) for CISI, CACM and NPL, of CACM
(computing) for MEDLINE. Every vector engine with the same embedder scores the
same cosines, so one engine's table holds for all of them. Prints a markdown
table per data set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# A work tree elsewhere (git worktree) names the collections' folder in $QUALBENCH_SHARED_DATA.
SHARED_DATA = Path(os.environ.get("QUALBENCH_SHARED_DATA", ROOT.parent / "shared" / "data"))
COLLECTIONS = {"CISI": "cisi", "MEDLINE": "med", "CACM": "cacm", "NPL": "npl"}
OFF_TOPIC = {"cisi": "med", "med": "cacm", "cacm": "med", "npl": "med"}
NEGATIVES = 30
THRESHOLDS = (0.0, 0.2, 0.3, 0.35, 0.4, 0.45, 0.5)


def run(fixtures: list[Path], engine: str, threshold: float, report: Path) -> dict[str, Any]:
    """One benchmark run at this threshold: the report's `overall` and negatives passed."""
    command = [
        sys.executable, "-m", "pytest", "--qualbench", *map(str, fixtures), "-q", "-p", "no:cacheprovider",
        f"--qualbench-engine={engine}", f"--qualbench-engine-option=min_similarity={threshold}",
        f"--qualbench-report={report}", "-o", "qualbench_floors=", "--qualbench-checks=needles",
        "--qualbench-tokens-k=0",
    ]  # fmt: skip
    subprocess.run(command, cwd=ROOT, check=False, capture_output=True)
    written = json.loads(report.read_text(encoding="utf-8"))
    return {**written["overall"], "negative_pass": written["negatives"]["negative_pass"]}


def imported(name: str, folder: Path) -> Path:
    """The collection as a fixture file, with off-topic queries as negative cases."""
    output = folder / f"{name}.jsonl"
    qualbench = Path(sys.executable).parent / "qualbench"
    command = [str(qualbench), "import", "beir", str(SHARED_DATA / name), "-o", str(output)]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    queries_file = SHARED_DATA / OFF_TOPIC[name] / "queries.jsonl"
    queries = [json.loads(line)["text"] for line in queries_file.read_text("utf-8").splitlines()]
    lines = output.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["cases"] = [
        *first["cases"],
        *(
            {
                "case_id": f"{name}_neg_{number:03d}",
                "query": query,
                "needles": [],
                "expected_layer": "none",
                "expected_rank_ceiling": 0,
            }
            for number, query in enumerate(queries[:NEGATIVES], start=1)
        ),
    ]
    lines[0] = json.dumps(first)
    output.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return output


def table(title: str, rows: dict[float, dict[str, Any]]) -> str:
    lines = [
        f"**{title}**",
        "",
        "| min_similarity | negatives passed | context_recall | mrr | ndcg@10 |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    for threshold, overall in rows.items():
        lines.append(
            f"| {threshold:.2f} | {overall['negative_pass']:.3f} | {overall['context_recall']:.3f}"
            f" | {overall['mrr']:.3f} | {overall['ndcg@10']:.3f} |"
        )
    return "\n".join(lines)


def main() -> None:
    engine = sys.argv[1] if len(sys.argv) > 1 else "dense"
    thresholds = tuple(float(value) for value in sys.argv[2:]) or THRESHOLDS
    with tempfile.TemporaryDirectory(prefix="qualbench-threshold-") as temporary:
        folder = Path(temporary)
        sets = {"bench_fixtures": sorted((ROOT / "bench_fixtures").glob("*.jsonl"))}
        if SHARED_DATA.is_dir():
            sets.update({title: [imported(name, folder)] for title, name in COLLECTIONS.items()})
        else:
            print(f"the collections are skipped: {SHARED_DATA} is absent")
        for title, fixtures in sets.items():
            rows = {
                threshold: run(fixtures, engine, threshold, folder / f"{title}-{threshold}.json")
                for threshold in thresholds
            }
            print(table(title, rows), end="\n\n", flush=True)


if __name__ == "__main__":
    main()
