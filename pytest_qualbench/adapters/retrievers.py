"""What the LangChain and LlamaIndex adapters share: a user's retriever as an engine.

The user's factory builds their retriever from the entries of one content type
(the `documents` / `nodes` helpers turn entries into the built-in chunks with
their keys in the metadata). Each returned document becomes a `Result`: its
text, and `title`, `source` and `position` from its metadata when present.
Retrievers have no layers, so fixtures run with them use `expected_layer: any`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from pytest_qualbench.engine.types import DEFAULT_KINDS, DEFAULT_LIMIT, Chunk, Result
from pytest_qualbench.fixtures import CONTENT_TYPES, Entry

Retriever = TypeVar("Retriever")


def chunk_metadata(chunk: Chunk) -> dict[str, Any]:
    """The keys a retrieved document needs to map back to its chunk, and the entry's metadata."""
    return {
        **chunk.metadata,
        "title": chunk.title,
        "source": chunk.source,
        "position": chunk.position,
        "kind": chunk.kind,
        "entry_id": chunk.entry_id,
    }


def document_result(text: str, metadata: Mapping[str, Any], score: float | None) -> Result:
    """A retrieved document as a Result; metadata that is missing or of another type is left out."""
    title = metadata.get("title")
    source = metadata.get("source")
    position = metadata.get("position")
    return Result(
        text=text,
        title=title if isinstance(title, str) else "",
        score=float(score) if score is not None else 0.0,
        source=source if isinstance(source, str) else "",
        position=position if isinstance(position, int) and not isinstance(position, bool) else 0,
    )


def kept(metadata: Mapping[str, Any], kinds: frozenset[str]) -> bool:
    """Whether a document is of one of the kinds; one without a `kind` key is always kept."""
    kind = metadata.get("kind")
    return not isinstance(kind, str) or kind in kinds


class RetrieverEngine(ABC, Generic[Retriever]):
    """A SearchEngine over the retriever a user's factory builds from the entries."""

    layers: ClassVar[tuple[str, ...]] = ()
    content_types: ClassVar[tuple[str, ...]] = CONTENT_TYPES

    def __init__(self, factory: Callable[[Sequence[Entry]], Retriever]) -> None:
        self._factory = factory
        self._retriever: Retriever | None = None

    @property
    @abstractmethod
    def config(self) -> dict[str, object]:
        """Framework, its version and the user's factory, for the report."""

    def factory_name(self) -> str:
        return f"{self._factory.__module__}:{getattr(self._factory, '__qualname__', '?')}"

    def index(self, entries: Sequence[Entry]) -> None:
        self._retriever = self._factory(entries)

    def search(
        self, query: str, *, limit: int = DEFAULT_LIMIT, kinds: Iterable[str] = DEFAULT_KINDS
    ) -> list[Result]:
        if self._retriever is None or limit <= 0 or not query.strip():
            return []
        wanted = frozenset(kinds)
        documents = self._retrieve(self._retriever, query)
        results = [
            document_result(text, metadata, score)
            for text, metadata, score in documents
            if kept(metadata, wanted)
        ]
        return results[:limit]

    @abstractmethod
    def _retrieve(
        self, retriever: Retriever, query: str
    ) -> list[tuple[str, Mapping[str, Any], float | None]]:
        """(text, metadata, score or None) of each retrieved document, best first."""
