"""`dense`: embedding retrieval scored by a numpy dot product (extra: dense).

The embedding is wordllama's bundled `l2_supercat` weights unless `embed=`
names another (adapters/embedding.py): nothing touches the network at run time
(tests/adapters/test_dense.py checks this). Every chunk is scored; ties go to
the (source, position) order.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from pytest_qualbench.adapters.chunked import top_docs
from pytest_qualbench.adapters.vectors import VectorEngine
from pytest_qualbench.engine.types import Chunk

LAYER = "dense"


class DenseEngine(VectorEngine):
    """Cosine similarity of the query's embedding to each chunk's (title and text)."""

    layers: ClassVar[tuple[str, ...]] = (LAYER,)

    def __init__(
        self, *, embed: str = "", min_similarity: float = 0.0, embedding_cache: str = ""
    ) -> None:
        super().__init__(
            embed=embed, min_similarity=min_similarity, embedding_cache=embedding_cache
        )
        self._vectors = np.zeros((0, 0), dtype=np.float32)

    @property
    def config(self) -> dict[str, object]:
        return {
            "engine": "dense",
            "library": f"numpy {version('numpy')}",
            **self.vector_config(),
            "similarity": "cosine of L2-normalised vectors (numpy dot product)",
            "tie_break": "(source, position)",
        }

    def _build_vectors(self, chunks: tuple[Chunk, ...], vectors: npt.NDArray[np.float32]) -> None:
        self._vectors = vectors

    def ranked(self, query: str, kinds: frozenset[str], limit: int) -> list[tuple[int, float, str]]:
        similarities = self.similarities(query)
        # top_docs keeps scores above 0: shift by the threshold, report the cosine.
        kept = top_docs(similarities - self.min_similarity, self.visible(kinds), limit)
        return [(doc, float(similarities[doc]), LAYER) for doc in kept]

    def similarities(self, query: str) -> npt.NDArray[np.float64]:
        """Cosine of the query to every chunk, in chunk order."""
        if not len(self._vectors):
            return np.zeros(0, dtype=np.float64)
        cosines: npt.NDArray[np.float64] = (self._vectors @ self.query_vector(query)).astype(
            np.float64
        )
        return cosines
