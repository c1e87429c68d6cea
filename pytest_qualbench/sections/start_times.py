"""Cold versus seeded start: time to the first answered query, per content type.

Cold: a new engine indexes the content type's corpus and answers one query.
Seeded: the indexed engine comes from the on-disk cache (key checked, checksum
verified, arrays and JSON read back) and answers the same query. Each measurement runs in a
fresh Python process, so neither profits from the other's warm caches
(memoised stems, a warm index); both first index and query a one-line corpus
so that lazy imports are paid before the clock starts, which starts once the
fixtures are loaded and stops when the first answer is back. The cold process also refreshes the cache when it is missing, stale or
corrupt; the seeded process then reads it.

`python -m pytest_qualbench.sections.start_times` is the measuring process: it reads a
JSON request on stdin and writes a JSON answer on stdout.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_qualbench.adapters.registry import resolve_engine
from pytest_qualbench.engine.types import ALL_KINDS, DEFAULT_LIMIT, Result, SearchEngine
from pytest_qualbench.evaluation.engine_options import factory_keywords
from pytest_qualbench.fixtures.loading import load_fixture_set
from pytest_qualbench.fixtures.schema import Entry
from pytest_qualbench.index_cache import IndexCache, cache_key

METHOD = (
    "one fresh Python process per measurement, warmed up on a one-line corpus; from the loaded "
    "fixture set to the first search's results (cold: index build; seeded: cache key and "
    "verified load); one measurement each"
)
MEASUREMENT_TIMEOUT_S = 600


def speedup(cold_ms: float | None, seeded_ms: float | None) -> float | None:
    """Cold time over seeded time (how many times faster the seeded start is)."""
    if cold_ms is None or seeded_ms is None or seeded_ms <= 0:
        return None
    return cold_ms / seeded_ms


def results_digest(results: Sequence[Result]) -> str:
    """SHA-256 over the results' (source, position, text): equal rankings, equal digests."""
    digest = hashlib.sha256()
    for result in results:
        digest.update(json.dumps([result.source, result.position, result.text]).encode("utf-8"))
    return digest.hexdigest()


def warm_up(factory: Callable[[], SearchEngine], content_type: str) -> None:
    """Index and query a one-line corpus, so lazy imports stay out of both clocks.

    Importing numpy, nltk and the like costs the same whether the index is
    built or loaded; measured, it would hide the difference being measured.
    """
    entry = Entry(
        id="qualbench-warm-up",
        content_type=content_type,
        haystack="warm up",
        source_label="qualbench-warm-up",
        source_kind="durable",
        cases=(),
        path="",
        line=0,
    )
    engine = factory()
    engine.index([entry])
    engine.search("warm", limit=DEFAULT_LIMIT, kinds=ALL_KINDS)


def measure(request: Mapping[str, Any]) -> dict[str, Any]:
    """One measurement, in this process: `request["mode"]` is "cold" or "seeded"."""
    sys.path[:0] = [entry for entry in request["sys_path"] if entry not in sys.path]
    engine_factory = resolve_engine(request["engine"])
    keywords = factory_keywords(engine_factory, request["engine_options"], request["engine"])

    def factory() -> SearchEngine:
        return engine_factory(**keywords)

    fixture_set = load_fixture_set(
        [Path(path) for path in request["fixture_paths"]], Path(request["root"])
    )
    content_type = request["content_type"]
    cache = IndexCache(Path(request["cache_dir"]))
    query = request["query"]
    warm_up(factory, content_type)
    if request["mode"] == "cold":
        started = time.perf_counter()
        engine = factory()
        engine.index(fixture_set.entries(content_type))
        results = list(engine.search(query, limit=DEFAULT_LIMIT, kinds=ALL_KINDS))
        elapsed_ms = (time.perf_counter() - started) * 1000.0
        key = cache_key(fixture_set.dataset_hash, content_type, engine)
        status = cache.load(content_type, key, factory()).status
        if status != "hit":
            cache.store(content_type, key, engine)
        return {"ms": elapsed_ms, "cache_before": status, "results": results_digest(results)}
    started = time.perf_counter()
    fresh = factory()
    key = cache_key(fixture_set.dataset_hash, content_type, fresh)
    loaded = cache.load(content_type, key, fresh)
    if loaded.status == "unsupported":
        return {"error": "the engine keeps no cacheable index (no index_state/restore_index)"}
    if loaded.engine is None:
        return {"error": f"cache {loaded.status} right after the cold run wrote it"}
    results = list(loaded.engine.search(query, limit=DEFAULT_LIMIT, kinds=ALL_KINDS))
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    return {"ms": elapsed_ms, "results": results_digest(results)}


def measure_in_fresh_process(request: Mapping[str, Any], cwd: Path) -> dict[str, Any]:
    """Run `measure` in a new interpreter; an error there becomes {"error": ...}."""
    completed = subprocess.run(
        [sys.executable, "-m", "pytest_qualbench.sections.start_times"],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=MEASUREMENT_TIMEOUT_S,
        check=False,
    )
    if completed.returncode != 0:
        last_line = (completed.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"measuring process exited {completed.returncode}: {last_line}"}
    # The last line: an engine that prints while it indexes must not garble the answer.
    answer: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return answer


def start_times(
    first_queries: Mapping[str, str],
    *,
    engine_spec: str,
    engine_options: Mapping[str, str],
    fixture_paths: Sequence[Path],
    root: Path,
    cache_dir: Path,
) -> dict[str, Any]:
    """The report's `start_times` section: cold, seeded and their ratio per content type."""
    by_type: dict[str, dict[str, Any]] = {}
    for content_type in sorted(first_queries):
        request = {
            "engine": engine_spec,
            "engine_options": dict(engine_options),
            "fixture_paths": [str(path) for path in fixture_paths],
            "root": str(root),
            "content_type": content_type,
            "query": first_queries[content_type],
            "cache_dir": str(cache_dir),
            "sys_path": sys.path,
        }
        cold = measure_in_fresh_process({**request, "mode": "cold"}, root)
        seeded = (
            measure_in_fresh_process({**request, "mode": "seeded"}, root)
            if "error" not in cold
            else {}
        )
        by_type[content_type] = start_row(first_queries[content_type], cold, seeded)
    cold_total = _total(row["cold_ms"] for row in by_type.values())
    seeded_total = _total(row["seeded_ms"] for row in by_type.values())
    return {
        "method": METHOD,
        "engine": engine_spec,
        "by_content_type": by_type,
        "overall": {
            "cold_ms": cold_total,
            "seeded_ms": seeded_total,
            "ratio": speedup(cold_total, seeded_total),
        },
    }


def start_row(query: str, cold: Mapping[str, Any], seeded: Mapping[str, Any]) -> dict[str, Any]:
    """One content type's row; `same_results` says the seeded engine answered as the cold one."""
    cold_ms = cold.get("ms")
    seeded_ms = seeded.get("ms")
    row: dict[str, Any] = {
        "query": query,
        "cold_ms": cold_ms,
        "seeded_ms": seeded_ms,
        "ratio": speedup(cold_ms, seeded_ms),
        "cache_before": cold.get("cache_before"),
        "same_results": (
            cold["results"] == seeded["results"]
            if "results" in cold and "results" in seeded
            else None
        ),
    }
    error = cold.get("error") or seeded.get("error")
    if error is not None:
        row["error"] = error
    return row


def _total(values: Any) -> float | None:
    present = list(values)
    return None if any(value is None for value in present) or not present else sum(present)


def summary_lines(section: Mapping[str, Any]) -> list[str]:
    """Start times for the terminal: one row per content type and overall."""
    lines = [
        "start to first answer, cold (index build) vs seeded (index cache), fresh process each",
        f"{'content type':<14}{'cold ms':>10}{'seeded ms':>11}{'ratio':>9}  cache",
    ]
    rows = [*section["by_content_type"].items(), ("overall", section["overall"])]
    for name, row in rows:
        ratio = row["ratio"]
        note = row.get("error") or row.get("cache_before") or ""
        if row.get("same_results") is False:
            note += ", seeded results DIFFER"
        lines.append(
            f"{name:<14}{_ms(row['cold_ms']):>10}{_ms(row['seeded_ms']):>11}"
            f"{'-' if ratio is None else f'{ratio:.1f}x':>9}  {note}".rstrip()
        )
    return lines


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def main() -> None:
    """The measuring process: a JSON request on stdin, a JSON answer on stdout."""
    answer = measure(json.loads(sys.stdin.read()))
    sys.stdout.write("\n" + json.dumps(answer) + "\n")


if __name__ == "__main__":
    main()
