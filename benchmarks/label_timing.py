"""What labeling results by capy's MATCH rule (`engine.layer_match`) costs a query.

`python -m benchmarks.label_timing CHUNKS [--rounds N]` builds the engine over the
first CHUNKS chunks of each corpus of `benchmarks.corpora`, one at a time, and runs
its 200 queries N times (default 3) under `labels=fts5` and under the default
`labels=fusion`, the two taking turns query by query on one engine, the order
alternating, so a change in the machine's pace hits both alike. It prints one JSON
line per corpus: the p50 of each, their ratio, and the p50 of the labeling step alone
over the labeled p50. The rankings are the same either way (`benchmarks.ranking_dump`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Sequence

from benchmarks.corpora import CORPORA
from pytest_qualbench.engine import ALL_KINDS, Engine
from pytest_qualbench.engine.fusion import Fused

LIMIT = 10


def timed_ms(engine: Engine, query: str) -> float:
    started = time.perf_counter_ns()
    engine.search(query, limit=LIMIT, kinds=ALL_KINDS)
    return (time.perf_counter_ns() - started) / 1e6


def figures(name: str, chunks: int, rounds: int) -> dict[str, object]:
    built = CORPORA[name](chunks)
    engine = Engine()
    engine.index(built.entries)
    labeling = engine._labels
    queries = [query.text for query in built.queries]
    times: dict[bool, list[float]] = {True: [], False: []}
    step: list[float] = []

    def timed_labels(query: str, corrected: str | None, returned: Sequence[Fused]) -> list[str]:
        started = time.perf_counter_ns()
        labels = labeling(query, corrected, returned)
        step.append((time.perf_counter_ns() - started) / 1e6)
        return labels

    # An instance attribute shadows the method, so that the step alone is timed too.
    engine._labels = timed_labels  # type: ignore[method-assign]
    for turn in range(rounds):
        for number, query in enumerate(queries):
            for labeled in (True, False) if (number + turn) % 2 else (False, True):
                # The same engine and index under either rule.
                engine.labels = "fts5" if labeled else "fusion"
                times[labeled].append(timed_ms(engine, query))
    with_p50, without_p50 = statistics.median(times[True]), statistics.median(times[False])
    return {
        "corpus": name,
        "chunks": chunks,
        "queries": len(times[True]),
        "labeled_p50_ms": round(with_p50, 4),
        "unlabeled_p50_ms": round(without_p50, 4),
        "p50_ratio": round(with_p50 / without_p50, 4),
        "labeling_p50_ms": round(statistics.median(step), 4),
        "labeling_share_of_p50": round(statistics.median(step) / with_p50, 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chunks", type=int)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for name in CORPORA:
        print(json.dumps(figures(name, args.chunks, args.rounds)), flush=True)


if __name__ == "__main__":
    main()
