"""What the vector engines share: the embedder, the corpus's cached vectors, the threshold.

A vector engine embeds each chunk's title and text with the embedder `embed=`
names (adapters/embedding.py), builds its store's index over the unit vectors,
and returns chunks whose cosine to the query is above `min_similarity`. A
vector store always has neighbours; the threshold is what lets a negative case
(a query the corpus cannot answer) come back empty.

`stable_top` makes a store's top-k deterministic: a store returns some k of
the chunks tied at the cut, so the engines ask for one more than they keep
and, while the last kept score ties the first left out, for twice as many.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from pytest_qualbench.adapters.chunked import ChunkedEngine, searchable_text
from pytest_qualbench.adapters.embedding import Embedder, corpus_vectors, resolve_embedder
from pytest_qualbench.engine.types import Chunk

# (chunk index, score): higher scores are better.
Hit = tuple[int, float]


def stable_top(fetch: Callable[[int], tuple[list[Hit], bool]], limit: int) -> list[Hit]:
    """The best `limit` hits, ties broken by the lower chunk index, the same every run.

    `fetch(k)` returns the store's best k hits and whether those are all the
    candidates there are. The cut is settled once the `limit`-th hit scores
    above the worst one fetched: whatever the store left out scores lower still.
    """
    wanted = limit + 1
    while True:
        hits, complete = fetch(wanted)
        ordered = sorted(hits, key=lambda hit: (-hit[1], hit[0]))
        if complete or (len(ordered) > limit and ordered[limit - 1][1] > ordered[-1][1]):
            return ordered[:limit]
        wanted *= 2


class VectorEngine(ChunkedEngine):
    """A ChunkedEngine over unit embeddings of its chunks; subclasses build and query a store."""

    def __init__(self, *, embed: str, min_similarity: float, embedding_cache: str) -> None:
        super().__init__()
        self.embedder: Embedder = resolve_embedder(embed)
        self.min_similarity = min_similarity
        self.embedding_cache = embedding_cache

    def vector_config(self) -> dict[str, object]:
        """The embedding and threshold, for the engine's `config`."""
        return {
            "embedding": self.embedder.config,
            "embedded": "title and text",
            "min_similarity": self.min_similarity,
        }

    def _build(self, chunks: tuple[Chunk, ...]) -> None:
        texts = [searchable_text(chunk) for chunk in chunks]
        self._build_vectors(chunks, corpus_vectors(self.embedder, texts, self.embedding_cache))

    @abstractmethod
    def _build_vectors(self, chunks: tuple[Chunk, ...], vectors: npt.NDArray[np.float32]) -> None:
        """Build the store's index over the chunks' unit vectors (row i is chunk i)."""

    def query_vector(self, query: str) -> npt.NDArray[np.float32]:
        """The query's unit vector (queries are not cached: one call per search)."""
        vector: npt.NDArray[np.float32] = self.embedder.vectors([query])[0]
        return vector

    def kept(self, hits: list[Hit]) -> list[Hit]:
        """The hits whose cosine is above `min_similarity`."""
        return [hit for hit in hits if hit[1] > self.min_similarity]


def kinds_of(chunks: tuple[Chunk, ...]) -> frozenset[str]:
    """Every source kind among the chunks."""
    return frozenset(chunk.kind for chunk in chunks)
