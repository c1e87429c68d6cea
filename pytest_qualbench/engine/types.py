"""Records and the protocol every search engine speaks (docs/custom-engine.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from pytest_qualbench.fixtures.schema import Entry

DEFAULT_KINDS = ("durable", "session")
ALL_KINDS = ("durable", "ephemeral", "session")
DEFAULT_LIMIT = 10


@dataclass(frozen=True)
class Chunk:
    """A searchable piece of one entry's haystack.

    `source` is the entry's source_label and `position` the chunk's index within
    that source: together they are the stable key every tie-break uses.
    """

    text: str
    title: str
    source: str
    kind: str
    position: int
    entry_id: str = ""
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class Result:
    """One ranked hit. Only `text` is required of a custom engine's results."""

    text: str
    layer: str | None = None
    title: str = ""
    score: float = 0.0
    source: str = ""
    position: int = 0


def chunk_result(chunk: Chunk, *, layer: str, score: float) -> Result:
    """The result an engine returns for a chunk it found with `layer` at `score`."""
    return Result(
        text=chunk.text,
        layer=layer,
        title=chunk.title,
        score=score,
        source=chunk.source,
        position=chunk.position,
    )


@dataclass(frozen=True)
class IndexState:
    """An engine's built index as data only: named numpy arrays and a JSON document.

    What the on-disk index cache stores for an engine with `CachedIndex`'s two
    methods: nothing in it can run code when read back.
    """

    arrays: Mapping[str, Any]
    document: Mapping[str, Any]


@runtime_checkable
class CachedIndex(Protocol):
    """An engine whose index the on-disk cache can keep (optional; the built-in one has it)."""

    def index_state(self) -> IndexState:
        """The current index as data; TypeError when it holds what JSON cannot."""

    def restore_index(self, state: IndexState) -> None:
        """Take the index `index_state` gave; ValueError when the state is malformed."""


@runtime_checkable
class SearchEngine(Protocol):
    """What the plugin needs of an engine; `chunks()` is optional (exact IDCG)."""

    def index(self, entries: Sequence[Entry]) -> None:
        """Index all entries of one content type (called once per session)."""

    def search(
        self, query: str, *, limit: int = DEFAULT_LIMIT, kinds: Iterable[str] = DEFAULT_KINDS
    ) -> Sequence[Result]:
        """Return at most `limit` results, best first, from chunks of the given kinds."""
