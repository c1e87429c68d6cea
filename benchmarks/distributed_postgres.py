"""Two xdist workers: each holding its own built-in index, or sharing one PostgreSQL server.

    .venv/bin/python -m benchmarks.distributed_postgres [CHUNKS]     # default 30000

Writes the synthetic corpus of benchmarks/corpus.py (CHUNKS one-chunk plaintext
entries, the 200 shared queries as cases) to a temporary project, starts a
throwaway server (tests/postgres_server.py), and runs `pytest --qualbench -n 2`
once with `--qualbench-engine=builtin` and once with `postgres` (its tsvector
layer alone, see PG_ENGINE), on the same
fixtures, one after the other. A conftest in the project records each pytest
process's peak RSS and CPU time; the server's CPU time is read from /proc
(postmaster and its exited backends). Prints one markdown table.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.corpus import build_corpus
from tests.postgres_server import server_binaries, throwaway_server

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CHUNKS = 30_000
NEEDLE_CHARS = 40

STATS_CONFTEST = """
import json, os, resource, time
from pathlib import Path

# At sessionfinish: an xdist worker may be ended before it unconfigures.
def pytest_sessionfinish(session):
    config = session.config
    usage = resource.getrusage(resource.RUSAGE_SELF)
    worker = getattr(config, "workerinput", {}).get("workerid", "controller")
    Path("stats").mkdir(exist_ok=True)
    Path("stats", f"{worker}.json").write_text(json.dumps(
        {"max_rss_mb": usage.ru_maxrss / 1024, "cpu_s": usage.ru_utime + usage.ru_stime}
    ))
"""


# The trigram layer's word_similarity of a whole query took seconds per query at
# 30k chunks: the measured configuration is the tsvector layer alone.
PG_ENGINE = """
from functools import partial
from pytest_qualbench.adapters.postgres import PostgresEngine

tsvector_only = partial(PostgresEngine, trigram=False)
"""


def write_project(folder: Path, chunk_count: int) -> None:
    corpus = build_corpus(chunk_count)
    cases: dict[str, list[dict[str, Any]]] = {}
    by_id = {entry.id: entry for entry in corpus.entries}
    for number, query in enumerate(corpus.queries):
        needle = by_id[query.source_entry_id].haystack.split("\n")[0][:NEEDLE_CHARS]
        cases.setdefault(query.source_entry_id, []).append(
            {"case_id": f"q{number:03d}", "query": query.text, "needles": [needle],
             "expected_rank_ceiling": 0}
        )  # fmt: skip
    (folder / "bench_fixtures").mkdir()
    with (folder / "bench_fixtures" / "synthetic.jsonl").open("w", encoding="utf-8") as out:
        for entry in corpus.entries:
            line = {"id": entry.id, "content_type": "plaintext", "haystack": entry.haystack,
                    "source_label": entry.source_label, "source_kind": entry.source_kind,
                    "cases": cases.get(entry.id, [])}  # fmt: skip
            out.write(json.dumps(line) + "\n")
    (folder / "conftest.py").write_text(STATS_CONFTEST)
    (folder / "pgengine.py").write_text(PG_ENGINE)
    (folder / "pytest.ini").write_text("[pytest]\npythonpath = .\n")


def server_cpu_s(data_dir: Path) -> float:
    """utime + stime of the postmaster and of its reaped children (the backends), in seconds."""
    pid = (data_dir / "postmaster.pid").read_text().split()[0]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # Fields 14-17 of proc(5): utime, stime, cutime, cstime, in clock ticks; the
    # split above starts at field 3.
    ticks = sum(int(value) for value in fields[11:15])
    return ticks / 100.0


def run(folder: Path, engine: str, dsn: str) -> dict[str, Any]:
    for old in (folder / "stats").glob("*.json"):
        old.unlink()
    command = [sys.executable, "-m", "pytest", "--qualbench", "-q", "-p", "xdist", "-n", "2",
               f"--qualbench-engine={engine}", "--qualbench-tokens-k=0",
               "--qualbench-checks=needles"]  # fmt: skip
    started = time.perf_counter()
    environment = {**os.environ, "QUALBENCH_POSTGRES_DSN": dsn}
    subprocess.run(command, cwd=folder, check=False, capture_output=True, env=environment)
    wall_s = time.perf_counter() - started
    report = json.loads((folder / ".qualbench" / "report.json").read_text())
    workers = {
        path.stem: json.loads(path.read_text())
        for path in sorted((folder / "stats").glob("gw*.json"))
    }
    return {
        "wall_s": wall_s,
        "index_ms": report["latency"]["plaintext"]["index_ms"],
        "p50_ms": report["latency"]["plaintext"]["p50_ms"],
        "mrr": report["overall"]["mrr"],
        "workers": workers,
    }


def main(chunk_count: int) -> None:
    binaries = server_binaries()
    if binaries is None:
        sys.exit("no PostgreSQL server binaries: apt-get install postgresql")
    with tempfile.TemporaryDirectory(prefix="qualbench-dist-") as temporary:
        folder = Path(temporary)
        write_project(folder, chunk_count)
        with throwaway_server(binaries) as dsn:
            data_dir = Path(dsn.split()[0].removeprefix("host=")) / "data"
            builtin = run(folder, "builtin", dsn)
            before = server_cpu_s(data_dir)
            postgres = run(folder, "pgengine:tsvector_only", dsn)
            server = server_cpu_s(data_dir) - before
    rows = [("builtin", builtin, 0.0), ("postgres, trigram=False", postgres, server)]
    print(f"{chunk_count} chunks, 200 queries, pytest --qualbench -n 2 (load)\n")
    print("| engine | wall s | workers' peak RSS MB | workers' CPU s | server CPU s "
          "| longest index build s | query p50 ms | mrr |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, result, server_s in rows:
        workers = result["workers"].values()
        rss = " + ".join(f"{worker['max_rss_mb']:.0f}" for worker in workers)
        cpu = " + ".join(f"{worker['cpu_s']:.1f}" for worker in workers)
        print(f"| {name} | {result['wall_s']:.1f} | {rss} | {cpu} | {server_s:.1f} "
              f"| {result['index_ms'] / 1000:.1f} | {result['p50_ms']:.2f} | {result['mrr']:.3f} |")  # fmt: skip


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CHUNKS)
