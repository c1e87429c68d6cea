"""`faiss`: a FAISS index over the chunks' embeddings (extra: faiss).

`index_factory` is FAISS's own description string: `Flat` (the default, an
exact `IndexFlatIP`), `HNSW32`, `IVF256,Flat`, `IVF64,PQ16`, ... Every index is
made with the inner-product metric over unit vectors, so its score is the
cosine. An IVF index is trained on the corpus itself; a corpus too small for
the lists asked for (FAISS wants 39 training vectors per list) gets
`corpus size // 39` lists (at least one), and a warning says so. `nprobe` and
`ef_search` are the query-time knobs of IVF and HNSW.

Determinism: k-means is seeded (FAISS's fixed seed) and the index is built on
one thread, since FAISS's parallel HNSW insertion links the graph in whatever
order the threads arrive; searching stays multi-threaded.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import version
from typing import Any, ClassVar

import faiss
import numpy as np
import numpy.typing as npt

from pytest_qualbench.adapters.vectors import Hit, VectorEngine, kinds_of, stable_top
from pytest_qualbench.engine.types import Chunk

LAYER = "vector"
# FAISS's k-means warns below 39 training points per centroid.
TRAINING_VECTORS_PER_LIST = 39
_IVF_LISTS = re.compile(r"\bIVF(\d+)")


def lists_for(requested: int, vectors: int) -> int:
    """The IVF list count for a corpus: as asked, or fewer when the corpus cannot train them."""
    return max(1, min(requested, vectors // TRAINING_VECTORS_PER_LIST))


@contextmanager
def single_thread() -> Iterator[None]:
    """FAISS's OpenMP threads set to one for the block, then restored."""
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(threads)


class FaissEngine(VectorEngine):
    """A FAISS index (inner product over unit vectors: cosine) of title and text embeddings."""

    layers: ClassVar[tuple[str, ...]] = (LAYER,)

    def __init__(
        self,
        *,
        index_factory: str = "Flat",
        nprobe: int = 1,
        ef_search: int = 16,
        embed: str = "",
        min_similarity: float = 0.0,
        embedding_cache: str = "",
    ) -> None:
        super().__init__(
            embed=embed, min_similarity=min_similarity, embedding_cache=embedding_cache
        )
        if nprobe < 1 or ef_search < 1:
            raise ValueError(f"nprobe {nprobe} and ef_search {ef_search} must be at least 1")
        self.index_factory = index_factory
        self.nprobe = nprobe
        self.ef_search = ef_search
        self._built_factory = index_factory
        self._index: Any = None
        self._all_kinds: frozenset[str] = frozenset()

    @property
    def config(self) -> dict[str, object]:
        return {
            "engine": "faiss",
            "library": f"faiss-cpu {version('faiss-cpu')}",
            "index_factory": self.index_factory,
            "built": self._built_factory,
            "metric": "inner product of L2-normalised vectors (cosine)",
            "nprobe": self.nprobe,
            "ef_search": self.ef_search,
            **self.vector_config(),
            "tie_break": "(source, position)",
        }

    def _build_vectors(self, chunks: tuple[Chunk, ...], vectors: npt.NDArray[np.float32]) -> None:
        self._index = None
        self._all_kinds = kinds_of(chunks)
        if not chunks:
            return
        self._built_factory = self.sized_factory(len(chunks))
        index = faiss.index_factory(
            vectors.shape[1], self._built_factory, faiss.METRIC_INNER_PRODUCT
        )
        with single_thread():
            if not index.is_trained:
                index.train(vectors)
            index.add(vectors)
        ivf = faiss.try_extract_index_ivf(index) if "IVF" in self._built_factory else None
        if ivf is not None:
            ivf.nprobe = min(self.nprobe, ivf.nlist)
        hnsw = getattr(faiss.downcast_index(index), "hnsw", None)
        if hnsw is not None:
            hnsw.efSearch = self.ef_search
        self._index = index

    def sized_factory(self, vectors: int) -> str:
        """The factory string with its IVF list count cut to what the corpus can train."""
        match = _IVF_LISTS.search(self.index_factory)
        if match is None:
            return self.index_factory
        requested = int(match.group(1))
        lists = lists_for(requested, vectors)
        if lists == requested:
            return self.index_factory
        self._warnings = (
            *self._warnings,
            f"faiss: IVF{requested} over {vectors} chunks: built with {lists} lists"
            f" ({TRAINING_VECTORS_PER_LIST} training vectors per list)",
        )
        return f"{self.index_factory[: match.start(1)]}{lists}{self.index_factory[match.end(1) :]}"

    def ranked(self, query: str, kinds: frozenset[str], limit: int) -> list[tuple[int, float, str]]:
        if self._index is None:
            return []
        vector = self.query_vector(query).reshape(1, -1)
        visible = self.visible(kinds) if not self._all_kinds <= kinds else None
        total = int(self._index.ntotal)

        def fetch(wanted: int) -> tuple[list[Hit], bool]:
            count = min(wanted, total)
            scores, docs = self._index.search(vector, count)
            hits = [
                (int(doc), float(score))
                for doc, score in zip(docs[0], scores[0], strict=True)
                if doc >= 0 and (visible is None or visible[doc])
            ]
            return hits, count >= total

        return [(doc, score, LAYER) for doc, score in self.kept(stable_top(fetch, limit))]
