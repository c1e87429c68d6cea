"""Dump the built-in engine's rankings, so a speed change can be shown to leave them alone.

`python -m benchmarks.ranking_dump OUT [--chunks N] [--corpus compound]` writes one
JSON line per query: the top 10 results as (source, position, score as its exact
repr, layer) and the corrected query. The queries are every case of bench_fixtures/
against its content type's corpus, then the benchmark's 200 queries against the
first N chunks of the synthetic corpus (`benchmarks.corpus`, default) or the
compound-identifier one (`benchmarks.compound_corpus`); N defaults to 10,000, 0
skips it. Two dumps taken before and after a change must be byte-identical.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

from benchmarks import compound_corpus, corpus
from pytest_qualbench.engine import ALL_KINDS, Engine
from pytest_qualbench.fixtures import Entry, load_fixture_set

REPO = Path(__file__).resolve().parent.parent
BUILDERS = {"synthetic": corpus.build_corpus, "compound": compound_corpus.build_corpus}
LIMIT = 10


def ranking_lines(label: str, entries: Sequence[Entry], queries: Sequence[str]) -> Iterator[str]:
    """One JSON line per query over an engine indexing `entries`."""
    engine = Engine()
    engine.index(entries)
    for query in queries:
        results = engine.search(query, limit=LIMIT, kinds=ALL_KINDS)
        top = [[hit.source, hit.position, repr(hit.score), hit.layer] for hit in results]
        record = {"corpus": label, "query": query, "corrected": engine.corrected_query(query)}
        yield json.dumps({**record, "top": top}, sort_keys=True)


def fixture_rankings() -> Iterator[str]:
    fixture_set = load_fixture_set(sorted((REPO / "bench_fixtures").glob("*.jsonl")), REPO)
    for content_type in sorted({entry.content_type for entry in fixture_set.entries()}):
        entries = fixture_set.entries(content_type)
        queries = [case.query for entry in entries for case in entry.cases]
        yield from ranking_lines(content_type, entries, queries)


def synthetic_rankings(name: str, chunks: int) -> Iterator[str]:
    built = BUILDERS[name](chunks)
    yield from ranking_lines(f"{name}-{chunks}", built.entries, [q.text for q in built.queries])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--corpus", choices=sorted(BUILDERS), default="synthetic")
    args = parser.parse_args()
    with args.out.open("w", encoding="utf-8") as stream:
        for line in fixture_rankings():
            stream.write(line + "\n")
        if args.chunks:
            for line in synthetic_rankings(args.corpus, args.chunks):
                stream.write(line + "\n")


if __name__ == "__main__":
    main()
