"""The two sides under test, built over the same synthetic corpus, one scale at a time.

Only one scale's corpus and indexes are held at once: the 100k indexes take
gigabytes, and the tests run scale by scale (see conftest), so moving to the
next scale frees the previous one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from benchmarks.corpus import SCALES, Corpus, build_corpus
from benchmarks.fts5_reference import Fts5Reference
from pytest_qualbench.engine import ALL_KINDS, Engine

ENGINE = "engine"
FTS5 = "fts5"
SIDES = (ENGINE, FTS5)
LIMIT = 10


class HasText(Protocol):
    @property
    def text(self) -> str: ...


class Side(Protocol):
    """A built index: what the query benchmarks call."""

    def search(self, query: str) -> Sequence[HasText]: ...


class EngineSide:
    """The built-in engine over the corpus."""

    def __init__(self, corpus: Corpus) -> None:
        self.engine = Engine()
        self.engine.index(corpus.entries)

    def search(self, query: str) -> Sequence[HasText]:
        return self.engine.search(query, limit=LIMIT, kinds=ALL_KINDS)

    def chunk_count(self) -> int:
        return sum(1 for _ in self.engine.chunks())


class Fts5Side:
    """The FTS5 reference over the same texts."""

    def __init__(self, corpus: Corpus) -> None:
        self.reference = Fts5Reference()
        self.reference.index(corpus.texts())

    def search(self, query: str) -> Sequence[HasText]:
        return self.reference.search(query, limit=LIMIT)

    def size_bytes(self) -> int:
        return self.reference.size_bytes()


BUILDERS: dict[str, Callable[[Corpus], Side]] = {ENGINE: EngineSide, FTS5: Fts5Side}


class Workbench:
    """Builds and caches the corpus and the built indexes of the current scale."""

    def __init__(self) -> None:
        self._scale = ""
        self._corpus: Corpus | None = None
        self._built: dict[str, Side] = {}

    def corpus(self, scale: str) -> Corpus:
        if scale != self._scale or self._corpus is None:
            # Free the previous scale before building the next one.
            self._built = {}
            self._corpus = None
            self._corpus = build_corpus(SCALES[scale])
            self._scale = scale
        return self._corpus

    def build(self, scale: str, side: str) -> Side:
        """Build a fresh index of one side and keep it for the query benchmarks."""
        built = BUILDERS[side](self.corpus(scale))
        self._built[side] = built
        return built

    def built(self, scale: str, side: str) -> Side:
        """The side's index for this scale, built now unless a build benchmark kept one."""
        self.corpus(scale)
        if side not in self._built:
            self.build(scale, side)
        return self._built[side]
