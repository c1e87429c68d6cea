"""`hybrid`: the built-in engine and `dense` fused by RRF (extra: dense).

Both rank the same chunks: the built-in engine chunks the entries, the dense
side embeds those chunks. A result is labeled by which side found it:
`builtin`, `dense`, or `rrf(builtin+dense)` when both did. `embed`,
`min_similarity` and `embedding_cache` are the dense side's (adapters/vectors.py):
a chunk the dense side finds at or below `min_similarity` is left to the
built-in side alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from pytest_qualbench.adapters.chunked import ChunkedEngine
from pytest_qualbench.adapters.dense import DenseEngine
from pytest_qualbench.engine.builtin import Engine
from pytest_qualbench.engine.fusion import fuse
from pytest_qualbench.engine.types import Chunk
from pytest_qualbench.fixtures import Entry

BUILTIN_LAYER = "builtin"
DENSE_LAYER = "dense"
FUSED_LAYER = f"rrf({BUILTIN_LAYER}+{DENSE_LAYER})"


class HybridEngine(ChunkedEngine):
    """RRF of the built-in engine's and the dense engine's rankings of one chunk set."""

    layers: ClassVar[tuple[str, ...]] = (BUILTIN_LAYER, DENSE_LAYER, FUSED_LAYER)

    def __init__(
        self,
        *,
        rrf_k: int = 60,
        fusion_depth: int = 100,
        embed: str = "",
        min_similarity: float = 0.0,
        embedding_cache: str = "",
    ) -> None:
        super().__init__()
        self.rrf_k = rrf_k
        self.fusion_depth = fusion_depth
        self._builtin = Engine()
        self._dense = DenseEngine(
            embed=embed, min_similarity=min_similarity, embedding_cache=embedding_cache
        )
        self._doc_of: dict[tuple[str, int], int] = {}

    @property
    def config(self) -> dict[str, object]:
        return {
            "engine": "hybrid",
            "builtin": self._builtin.config,
            "dense": self._dense.config,
            "fusion": {"method": "rrf", "rrf_k": self.rrf_k, "depth_per_side": self.fusion_depth},
            "tie_break": "(source, position)",
        }

    @property
    def warnings(self) -> tuple[str, ...]:
        return self._builtin.warnings

    def index(self, entries: Sequence[Entry]) -> None:
        self._builtin.index(entries)
        self._chunks = self._builtin.chunks()
        self._dense.index_chunks(self._chunks)
        self._doc_of = doc_numbers(self._chunks)

    def _build(self, chunks: tuple[Chunk, ...]) -> None:
        self._builtin.index_chunks(chunks)
        self._dense.index_chunks(chunks)
        self._doc_of = doc_numbers(chunks)

    def ranked(self, query: str, kinds: frozenset[str], limit: int) -> list[tuple[int, float, str]]:
        depth = max(limit, self.fusion_depth)
        builtin = [
            self._doc_of[(result.source, result.position)]
            for result in self._builtin.search(query, limit=depth, kinds=kinds)
        ]
        dense = [doc for doc, _, _ in self._dense.ranked(query, kinds, depth)]
        rankings = [(BUILTIN_LAYER, builtin), (DENSE_LAYER, dense)]
        return [(item.doc, item.score, item.label) for item in fuse(rankings, self.rrf_k)]


def doc_numbers(chunks: Sequence[Chunk]) -> dict[tuple[str, int], int]:
    """Each chunk's index by its (source, position) key, to map results back to chunks."""
    return {(chunk.source, chunk.position): doc for doc, chunk in enumerate(chunks)}
