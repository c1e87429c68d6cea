"""Records, the protocol every search engine speaks, and the capabilities it may add.

docs/custom-engine.md says what the plugin does with each capability;
`engine.capabilities` is the one place that asks an engine for them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pytest_qualbench.fixtures.schema import EMPTY_MAPPING, Entry

DEFAULT_KINDS = ("durable", "session")
ALL_KINDS = ("durable", "ephemeral", "session")
DEFAULT_LIMIT = 10


@dataclass(frozen=True, slots=True)
class Chunk:
    """A searchable piece of one entry's haystack.

    `source` is the entry's source_label and `position` the chunk's index within
    that source: together they are the stable key every tie-break uses.

    Slotted: an index holds one per chunk, and a search reads the fields of each
    result's; a per-instance dict was a second allocation to reach (and to keep).
    """

    text: str
    title: str
    source: str
    kind: str
    position: int
    entry_id: str = ""
    metadata: Mapping[str, Any] = field(default_factory=lambda: EMPTY_MAPPING)


@dataclass(frozen=True, slots=True)
class Result:
    """One ranked hit. Only `text` is required of a custom engine's results."""

    text: str
    layer: str | None = None
    title: str = ""
    score: float = 0.0
    source: str = ""
    position: int = 0


class Results(list[Result]):
    """Search results with the query the engine searched instead, when it corrected one.

    `search()` may return a plain sequence of `Result`; returning `Results` lets the
    correction travel with the results it produced (shown in failures and the report).
    """

    def __init__(self, results: Iterable[Result] = (), *, corrected_query: str | None = None):
        super().__init__(results)
        self.corrected_query = corrected_query


def chunk_result(chunk: Chunk, *, layer: str, score: float) -> Result:
    """The result an engine returns for a chunk it found with `layer` at `score`."""
    # Positional: a search makes ten, and keywords cost a third more.
    return Result(chunk.text, layer, chunk.title, score, chunk.source, chunk.position)


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
    """What the plugin needs of every engine; the protocols below are optional."""

    def index(self, entries: Sequence[Entry]) -> None:
        """Index all entries of one content type (called once per session)."""

    def search(
        self, query: str, *, limit: int = DEFAULT_LIMIT, kinds: Iterable[str] = DEFAULT_KINDS
    ) -> Sequence[Result]:
        """Return at most `limit` results, best first, from chunks of the given kinds."""


# Optional capabilities. Each is a runtime-checkable protocol, so an engine has one
# by having the method or attribute: nothing to inherit or register.


@runtime_checkable
class ListsChunks(Protocol):
    """An engine that can list what it indexed: the relevant set R is then counted exactly."""

    def chunks(self) -> Iterable[Chunk]:
        """Every piece of text the index can return."""


@runtime_checkable
class CorrectsQueries(Protocol):
    """An engine that says which query it searched after correcting typos.

    Needed only by an engine whose `search()` returns a plain sequence: `Results`
    carries the correction itself.
    """

    def corrected_query(self, query: str) -> str | None:
        """The query `search(query)` searched instead, or None when it corrected nothing."""


@runtime_checkable
class Configured(Protocol):
    """An engine that describes every constant shaping its ranking (the report records it)."""

    @property
    def config(self) -> Mapping[str, object]:
        """JSON-ready settings; the index cache also keys on them."""


@runtime_checkable
class Warns(Protocol):
    """An engine that reports what indexing could not do as asked."""

    @property
    def warnings(self) -> Iterable[str]:
        """One line each, e.g. an entry of invalid JSON indexed as plaintext."""


@runtime_checkable
class Closes(Protocol):
    """An engine (or ranker) holding something outside the process: files, a server schema."""

    def close(self) -> None:
        """Release it; called once, when the session no longer needs the engine."""


@runtime_checkable
class DeclaresLayers(Protocol):
    """An engine factory (usually the class) naming the layers its results are labeled with."""

    layers: Sequence[str]


@runtime_checkable
class DeclaresContentTypes(Protocol):
    """An engine factory naming content types it indexes beyond the five built-in ones."""

    content_types: Sequence[str]


@runtime_checkable
class IndexesChunks(Protocol):
    """An engine that can index chunks made elsewhere, so it can rank another's chunks."""

    def index_chunks(self, chunks: Sequence[Chunk]) -> None:
        """Index exactly these chunks, chunk i as document i, replacing any earlier index."""
