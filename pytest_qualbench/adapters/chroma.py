"""`chroma`: a Chroma collection of the chunks' embeddings (extra: chroma).

Chroma's embedded client, in memory by default or on disk with `path=DIR`
(`PersistentClient`: SQLite and HNSW segment files, the store a team persists).
Each engine gets a collection of its own, created with no embedding function
(the vectors are always ours: Chroma's default one would download a model) and
dropped by `close()`. Telemetry is off. `distance` is the HNSW space (`cosine`,
`l2` or `ip`); the vectors are unit length, so each space's distance converts
to the cosine every vector engine reports: 1 - d for `cosine` and `ip`, 1 - d/2
for `l2` (Chroma's l2 is the squared distance). The source kinds a search asks
for are a metadata filter (`where kind $in [...]`).
"""

from __future__ import annotations

import uuid
from importlib.metadata import version
from typing import Any, ClassVar, Literal

import chromadb
import numpy as np
import numpy.typing as npt
from chromadb.config import Settings

from pytest_qualbench.adapters.vectors import Hit, VectorEngine, kinds_of, stable_top
from pytest_qualbench.engine.types import Chunk

LAYER = "vector"
Distance = Literal["cosine", "l2", "ip"]


def cosine_of(distance: float, space: Distance) -> float:
    """The cosine of two unit vectors from Chroma's distance between them in `space`."""
    return 1.0 - distance / 2.0 if space == "l2" else 1.0 - distance


def chunk_id(doc: int) -> str:
    return f"{doc:09d}"


class ChromaEngine(VectorEngine):
    """A Chroma collection (HNSW, `distance` space) of title and text embeddings."""

    layers: ClassVar[tuple[str, ...]] = (LAYER,)

    def __init__(
        self,
        *,
        distance: Distance = "cosine",
        path: str = "",
        embed: str = "",
        min_similarity: float = 0.0,
        embedding_cache: str = "",
    ) -> None:
        super().__init__(
            embed=embed, min_similarity=min_similarity, embedding_cache=embedding_cache
        )
        self.distance: Distance = distance
        self.path = path
        settings = Settings(anonymized_telemetry=False)
        self._client: Any = (
            chromadb.PersistentClient(path=path, settings=settings)
            if path
            else chromadb.EphemeralClient(settings=settings)
        )
        self._collection: Any = None
        self._all_kinds: frozenset[str] = frozenset()

    @property
    def config(self) -> dict[str, object]:
        return {
            "engine": "chroma",
            "library": f"chromadb {version('chromadb')}",
            "client": "persistent" if self.path else "ephemeral",
            "distance": self.distance,
            "score": "cosine from the distance of unit vectors",
            **self.vector_config(),
            "tie_break": "(source, position)",
        }

    def _build_vectors(self, chunks: tuple[Chunk, ...], vectors: npt.NDArray[np.float32]) -> None:
        self.close()
        self._all_kinds = kinds_of(chunks)
        if not chunks:
            return
        collection = self._client.create_collection(
            f"qualbench-{uuid.uuid4().hex}",
            embedding_function=None,
            configuration={"hnsw": {"space": self.distance}},
        )
        batch = int(self._client.get_max_batch_size())
        for start in range(0, len(chunks), batch):
            stop = min(start + batch, len(chunks))
            collection.add(
                ids=[chunk_id(doc) for doc in range(start, stop)],
                embeddings=vectors[start:stop],
                metadatas=[{"kind": chunk.kind} for chunk in chunks[start:stop]],
            )
        self._collection = collection

    def ranked(self, query: str, kinds: frozenset[str], limit: int) -> list[tuple[int, float, str]]:
        if self._collection is None:
            return []
        asked = sorted(kinds & self._all_kinds)
        if not asked:
            return []
        where = None if self._all_kinds <= kinds else {"kind": {"$in": asked}}
        vector = self.query_vector(query)
        total = len(self._chunks)

        def fetch(wanted: int) -> tuple[list[Hit], bool]:
            count = min(wanted, total)
            found = self._collection.query(
                query_embeddings=[vector], n_results=count, where=where, include=["distances"]
            )
            ids, distances = found["ids"][0], found["distances"][0]
            hits = [
                (int(name), cosine_of(float(distance), self.distance))
                for name, distance in zip(ids, distances, strict=True)
            ]
            return hits, len(hits) < count or count >= total

        return [(doc, score, LAYER) for doc, score in self.kept(stable_top(fetch, limit))]

    def close(self) -> None:
        """Drop this engine's collection (in memory, or from the persistent directory)."""
        collection, self._collection = self._collection, None
        if collection is not None:
            self._client.delete_collection(collection.name)
