"""`dense`: embedding retrieval with wordllama's bundled weights (extra: dense).

wordllama's wheel ships its 256-dimension `l2_supercat` weights and tokenizer.
`WordLlama.load()` with its defaults looks for the tokenizer in another folder
and falls back to downloading it; loading from the installed package's own
folder with downloads disabled reads only the bundled files, so nothing touches
the network at run time (tests/adapters/test_dense.py checks this).
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import version
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
import wordllama

from pytest_qualbench.adapters.chunked import ChunkedEngine, searchable_text, top_docs
from pytest_qualbench.engine.types import Chunk

LAYER = "dense"
MODEL = "l2_supercat"
DIMENSIONS = 256


@cache
def bundled_model() -> Any:
    """The wordllama model from the files inside its installed package, loaded once."""
    package_folder = Path(wordllama.__file__).parent
    return wordllama.WordLlama.load(
        config=MODEL, cache_dir=package_folder, dim=DIMENSIONS, disable_download=True
    )


def embed(texts: list[str]) -> npt.NDArray[np.float32]:
    """Unit-length embeddings, one row per text."""
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    vectors = np.asarray(bundled_model().embed(texts), dtype=np.float32)
    return normalized(vectors)


def normalized(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Rows scaled to unit L2 norm (zero rows stay zero), so a dot product is the cosine."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit: npt.NDArray[np.float32] = np.divide(
        vectors, norms, out=np.zeros_like(vectors), where=norms > 0
    )
    return unit


class DenseEngine(ChunkedEngine):
    """Cosine similarity of the query's embedding to each chunk's (title and text)."""

    layers: ClassVar[tuple[str, ...]] = (LAYER,)

    def __init__(self, *, min_similarity: float = 0.0) -> None:
        super().__init__()
        self.min_similarity = min_similarity
        self._vectors = np.zeros((0, DIMENSIONS), dtype=np.float32)
        # Load the model when the engine is made, not inside the timed `index()`.
        bundled_model()

    @property
    def config(self) -> dict[str, object]:
        return {
            "engine": "dense",
            "library": f"wordllama {version('wordllama')}",
            "model": f"{MODEL} (bundled in the wheel), {DIMENSIONS} dimensions",
            "embedded": "title and text",
            "similarity": "cosine of L2-normalised vectors (numpy dot product)",
            "min_similarity": self.min_similarity,
            "tie_break": "(source, position)",
        }

    def _build(self, chunks: tuple[Chunk, ...]) -> None:
        self._vectors = embed([searchable_text(chunk) for chunk in chunks])

    def ranked(self, query: str, kinds: frozenset[str], limit: int) -> list[tuple[int, float, str]]:
        similarities = self.similarities(query)
        # top_docs keeps scores above 0: shift by the threshold, report the cosine.
        kept = top_docs(similarities - self.min_similarity, self.visible(kinds), limit)
        return [(doc, float(similarities[doc]), LAYER) for doc in kept]

    def similarities(self, query: str) -> npt.NDArray[np.float64]:
        """Cosine of the query to every chunk, in chunk order."""
        cosines: npt.NDArray[np.float64] = (self._vectors @ embed([query])[0]).astype(np.float64)
        return cosines
