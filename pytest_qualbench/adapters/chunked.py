"""What every adapter over the built-in chunks shares: chunking, kinds, result records.

The adapters index the chunks the built-in engine would make (heading-aware
markdown, JSON key paths, line windows), so a head-to-head compares ranking with
chunking held fixed. `index_chunks` takes chunks made elsewhere: a ranker
indexes the benchmarked engine's chunks through it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from pytest_qualbench.engine.chunking import chunk_entries
from pytest_qualbench.engine.types import (
    DEFAULT_KINDS,
    DEFAULT_LIMIT,
    Chunk,
    Result,
    chunk_result,
)
from pytest_qualbench.fixtures import CONTENT_TYPES, Entry

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


def searchable_text(chunk: Chunk) -> str:
    """Title and text in one string, for libraries that index a single field."""
    return f"{chunk.title}\n{chunk.text}" if chunk.title else chunk.text


def top_docs(
    scores: npt.NDArray[np.floating[Any]], visible: npt.NDArray[np.bool_], limit: int
) -> list[int]:
    """Chunk indexes of the `limit` best positive scores among visible chunks.

    Ties go to the lower index, i.e. the (source, position) order every engine
    here breaks ties by, so rankings are identical run to run.
    """
    import numpy as np

    candidates = np.flatnonzero((scores > 0) & visible)
    order = np.lexsort((candidates, -scores[candidates]))
    return [int(doc) for doc in candidates[order][:limit]]


class ChunkedEngine(ABC):
    """An engine that indexes the built-in chunks; subclasses build and query the index.

    `layers` and `content_types` are the vocabulary fixtures may use with this
    engine (`expected_layer`, `content_type`).
    """

    layers: ClassVar[tuple[str, ...]] = ()
    content_types: ClassVar[tuple[str, ...]] = CONTENT_TYPES

    def __init__(self) -> None:
        self._chunks: tuple[Chunk, ...] = ()
        self._warnings: tuple[str, ...] = ()

    @property
    @abstractmethod
    def config(self) -> dict[str, object]:
        """Library, version and every parameter that shapes a ranking, for the report."""

    @property
    def warnings(self) -> tuple[str, ...]:
        """What chunking could not do as asked (e.g. invalid JSON indexed as plaintext)."""
        return self._warnings

    def chunks(self) -> tuple[Chunk, ...]:
        """Every chunk, ordered by (source, position)."""
        return self._chunks

    def index(self, entries: Sequence[Entry]) -> None:
        """Chunk the entries as the built-in engine does, then index the chunks."""
        chunks, self._warnings = chunk_entries(entries)
        self.index_chunks(chunks)

    def index_chunks(self, chunks: Sequence[Chunk]) -> None:
        """Index chunks made elsewhere, replacing any earlier index."""
        self._chunks = tuple(chunks)
        self._build(self._chunks)

    @abstractmethod
    def _build(self, chunks: tuple[Chunk, ...]) -> None:
        """Build the library's index over the chunks (chunk i is document i)."""

    @abstractmethod
    def ranked(self, query: str, kinds: frozenset[str], limit: int) -> list[tuple[int, float, str]]:
        """(chunk index, score, layer) of the best chunks of the kinds, best first."""

    def search(
        self, query: str, *, limit: int = DEFAULT_LIMIT, kinds: Iterable[str] = DEFAULT_KINDS
    ) -> list[Result]:
        """At most `limit` results, best first, from chunks of the given source kinds."""
        if limit <= 0 or not self._chunks or not query.strip():
            return []
        ranked = self.ranked(query, frozenset(kinds), limit)
        return [
            chunk_result(self._chunks[doc], layer=layer, score=score)
            for doc, score, layer in ranked[:limit]
        ]

    def visible(self, kinds: frozenset[str]) -> npt.NDArray[np.bool_]:
        """Which chunks have one of the kinds."""
        import numpy as np

        return np.fromiter((chunk.kind in kinds for chunk in self._chunks), bool, len(self._chunks))

    # Not abstract: most adapters hold nothing outside the process.
    def close(self) -> None:  # noqa: B027
        """Release what the index holds outside this process (files, server state)."""
