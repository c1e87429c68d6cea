"""Every engine head to head on the shipped benchmark and the four collections, from one run.

    .venv/bin/python -m tests.postgres_server .venv/bin/python -m benchmarks.head_to_head

One `pytest --qualbench --qualbench-rankers=...` per data set: every ranker
orders the same chunks (the built-in engine's) for the same positive cases, and
each ranker's p50 is the median of its own rank() calls in that run. CISI,
MEDLINE, CACM and NPL are imported from <repo>/../shared/data (or $QUALBENCH_SHARED_DATA)
with `qualbench import beir`
into a temporary folder (never into the repo); they are skipped, with the reason
printed, when that folder is absent. Prints one markdown table per data set.
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
RANKERS = (
    "flatfile", "bm25", "engine", "bm25s", "tantivy", "postgres", "dense", "hybrid",
    "chroma", "lancedb", "faiss",
)  # fmt: skip
SHOWN = ("precision@1", "hit@3", "recall@5", "mrr", "ndcg@10")


def rankers() -> tuple[str, ...]:
    """Every ranker; postgres only when a server is given."""
    if os.environ.get("QUALBENCH_POSTGRES_DSN"):
        return RANKERS
    print("postgres left out: QUALBENCH_POSTGRES_DSN is not set (see tests/postgres_server.py)")
    return tuple(name for name in RANKERS if name != "postgres")


def run(fixtures: list[Path], report: Path, names: tuple[str, ...]) -> dict[str, Any]:
    """One benchmark run with the head-to-head section; its `rankers` section."""
    command = [
        sys.executable, "-m", "pytest", "--qualbench", *map(str, fixtures), "-q", "-p", "no:cacheprovider",
        f"--qualbench-rankers={','.join(names)}", f"--qualbench-report={report}",
        # Floors and the layer label are the shipped benchmark's; here only rankings count.
        "-o", "qualbench_floors=", "--qualbench-checks=needles", "--qualbench-tokens-k=0",
    ]  # fmt: skip
    subprocess.run(command, cwd=ROOT, check=False, capture_output=True)
    section: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))["rankers"]
    return section


def imported(name: str, folder: Path) -> Path:
    output = folder / f"{name}.jsonl"
    qualbench = Path(sys.executable).parent / "qualbench"
    command = [
        str(qualbench),
        "import",
        "beir",
        str(SHARED_DATA / name),
        "-o",
        str(output),
        "--needles",
    ]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    return output


def table(title: str, section: dict[str, Any]) -> str:
    names = section["rankers"]
    lines = [
        f"**{title}** ({section['cases']} positive cases, top {section['depth']} chunks each)",
        "",
        "| metric | " + " | ".join(names) + " |",
        "| --- |" + " ---: |" * len(names),
    ]
    for metric in SHOWN:
        row = section["metrics"][metric]
        lines.append(f"| {metric} | " + " | ".join(f"{row[name]:.3f}" for name in names) + " |")
    p50 = section["p50_ms"]
    lines.append("| p50 ms | " + " | ".join(f"{p50[name]:.3f}" for name in names) + " |")
    return "\n".join(lines)


def main() -> None:
    names = rankers()
    with tempfile.TemporaryDirectory(prefix="qualbench-h2h-") as temporary:
        folder = Path(temporary)
        sets = {"bench_fixtures": sorted((ROOT / "bench_fixtures").glob("*.jsonl"))}
        if SHARED_DATA.is_dir():
            sets.update({title: [imported(name, folder)] for title, name in COLLECTIONS.items()})
        else:
            print(f"the collections are skipped: {SHARED_DATA} is absent")
        for title, fixtures in sets.items():
            print(table(title, run(fixtures, folder / f"{title}.json", names)), end="\n\n")


if __name__ == "__main__":
    main()
