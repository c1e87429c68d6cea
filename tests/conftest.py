"""Shared helpers: small fixture sets and a stand-in engine for plugin tests.

numpy is imported here, before any pytester session: an in-process pytester run
forgets modules first imported inside it, and numpy cannot be imported twice.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy  # noqa: F401
import pytest

# pygal (the HTML report) imports the importlib_metadata backport, which takes the
# standard library's distribution finder off for good; first imported inside an
# in-process pytester run, the backport's own finder is then forgotten with it and
# no later run finds a plugin entry point. Imported here once, it stays.
with contextlib.suppress(ImportError):
    import importlib_metadata  # noqa: F401

# A deliberately simple engine (every query word must occur in the chunk), so
# plugin tests assert the plugin's behaviour, not the built-in engine's ranking.
WORD_ENGINE = """
from pytest_qualbench.engine.types import Chunk, IndexState, Result

class WordEngine:
    config = {"kind": "word"}

    def index(self, entries):
        self._chunks = [
            Chunk(text, "", entry.source_label, entry.source_kind, position, entry.id)
            for entry in entries
            for position, text in enumerate(entry.haystack.split("\\n\\n"))
        ]

    def chunks(self):
        return tuple(self._chunks)

    # The index cache's protocol (engine.types.CachedIndex): the index as data only.
    def index_state(self):
        records = [[c.text, c.source, c.kind, c.position, c.entry_id] for c in self._chunks]
        return IndexState(arrays={}, document={"chunks": records})

    def restore_index(self, state):
        self._chunks = [Chunk(t, "", s, k, p, e) for t, s, k, p, e in state.document["chunks"]]

    def search(self, query, *, limit=10, kinds=("durable", "session")):
        words = query.lower().split()
        hits = [c for c in self._chunks if c.kind in kinds and all(w in c.text.lower() for w in words)]
        return [Result(c.text, "porter", c.source, 1.0, c.source, c.position) for c in hits[:limit]]
"""


def entry(
    entry_id: str,
    haystack: str,
    cases: Sequence[dict[str, Any]] = (),
    *,
    content_type: str = "markdown",
    source_kind: str = "durable",
) -> dict[str, Any]:
    return {
        "id": entry_id,
        "content_type": content_type,
        "haystack": haystack,
        "source_label": f"bench-{entry_id}",
        "source_kind": source_kind,
        "cases": list(cases),
    }


def case(
    case_id: str,
    query: str,
    needles: Sequence[str],
    *,
    layer: str = "porter",
    ceiling: int = 1,
) -> dict[str, Any]:
    return {
        "case_id": case_id,
        "query": query,
        "needles": list(needles),
        "expected_layer": layer if needles else "none",
        "expected_rank_ceiling": ceiling if needles else 0,
    }


def jsonl(entries: Sequence[dict[str, Any]]) -> str:
    return "".join(json.dumps(item) + "\n" for item in entries)


def worker_crashing_engine(query: str) -> str:
    """Source of a module `crashing` whose engine `Crashing` kills its xdist worker
    (os._exit, no cleanup) when it searches `query`; run serially it answers as the
    word engine does."""
    return f"""
import os
import wordengine

class Crashing(wordengine.WordEngine):
    def search(self, query, *, limit=10, kinds=()):
        if query == {query!r} and os.environ.get("PYTEST_XDIST_WORKER"):
            os._exit(1)
        return super().search(query, limit=limit, kinds=kinds)
"""


WriteFixture = Callable[[str, Sequence[dict[str, Any]]], Path]


@pytest.fixture
def word_engine(pytester: pytest.Pytester) -> None:
    """Make the stand-in engine importable and the project's default engine."""
    pytester.makepyfile(wordengine=WORD_ENGINE)
    pytester.syspathinsert()
    pytester.makeini("[pytest]\nqualbench_engine = wordengine:WordEngine\n")


@pytest.fixture
def write_fixture(pytester: pytest.Pytester) -> WriteFixture:
    """Write a JSONL fixture file under bench_fixtures/ of the pytester project."""

    def write(name: str, entries: Sequence[dict[str, Any]]) -> Path:
        path = pytester.path / "bench_fixtures" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(jsonl(entries), encoding="utf-8")
        return path

    return write
