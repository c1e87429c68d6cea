"""`lancedb`: a LanceDB table of the chunks, searched by vector, full text or both (extra: lancedb).

The table (`doc`, `kind`, `text`, `vector`) lives in a temporary directory that
`close()` removes. `mode` picks LanceDB's search: `vector` (exact cosine
search: no ANN index at these sizes), `fts` (LanceDB's native full-text index:
BM25 over its `simple` tokenizer, English stemming and stopwords, lowercased,
ASCII-folded; no model, no tantivy), or `hybrid` (the default: both, fused by
LanceDB's `RRFReranker`, k 60). A hybrid result is labeled `hybrid` when both
sides found it, else `vector` or `fts`. `min_similarity` bounds the vector
side (LanceDB's `distance_range`, cosine distance below 1 - min_similarity);
full-text scores are BM25, which it does not bound. The source kinds a search
asks for are a prefilter (`kind IN (...)`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from importlib.metadata import version
from typing import Any, ClassVar, Literal

# LanceDB's Rust log goes to stderr, a deprecation line per query at its default
# level; a user's own LANCEDB_LOG still wins.
os.environ.setdefault("LANCEDB_LOG", "error")

import lancedb
import numpy as np
import numpy.typing as npt
import pyarrow as pa
from lancedb.index import FTS
from lancedb.rerankers import RRFReranker

from pytest_qualbench.adapters.chunked import searchable_text
from pytest_qualbench.adapters.vectors import Hit, VectorEngine, kinds_of, stable_top
from pytest_qualbench.engine.types import Chunk

VECTOR_LAYER = "vector"
FTS_LAYER = "fts"
HYBRID_LAYER = "hybrid"
RRF_K = 60
TABLE = "chunks"
SCORE_COLUMNS = ("_distance", "_score", "_relevance_score")
Mode = Literal["vector", "fts", "hybrid"]


def layer_of(row: dict[str, Any]) -> str:
    """Which side of a hybrid search found a row: both, or the one whose score it has."""
    by_vector = row.get("_distance") is not None
    by_text = row.get("_score") is not None
    if by_vector and by_text:
        return HYBRID_LAYER
    return VECTOR_LAYER if by_vector else FTS_LAYER


class LanceDbEngine(VectorEngine):
    """A LanceDB table: exact cosine search, native BM25 full text, or RRF of both."""

    layers: ClassVar[tuple[str, ...]] = (VECTOR_LAYER, FTS_LAYER, HYBRID_LAYER)

    def __init__(
        self,
        *,
        mode: Mode = "hybrid",
        embed: str = "",
        min_similarity: float = 0.0,
        embedding_cache: str = "",
    ) -> None:
        super().__init__(
            embed=embed, min_similarity=min_similarity, embedding_cache=embedding_cache
        )
        self.mode: Mode = mode
        self._directory: str | None = None
        self._table: Any = None
        self._all_kinds: frozenset[str] = frozenset()

    @property
    def config(self) -> dict[str, object]:
        return {
            "engine": "lancedb",
            "library": f"lancedb {version('lancedb')}",
            "mode": self.mode,
            "vector": "exact search, cosine distance (score: 1 - distance)",
            "fts": "native index: simple tokenizer, English stemming and stopwords, lower case,"
            " ASCII folding (score: BM25)",
            "hybrid": f"RRFReranker, k {RRF_K} (score: the fused relevance)",
            **self.vector_config(),
            "tie_break": "(source, position)",
        }

    def _build_vectors(self, chunks: tuple[Chunk, ...], vectors: npt.NDArray[np.float32]) -> None:
        self.close()
        self._all_kinds = kinds_of(chunks)
        if not chunks:
            return
        self._directory = tempfile.mkdtemp(prefix="qualbench-lancedb-")
        dimensions = vectors.shape[1]
        data = pa.table(
            {
                "doc": pa.array(range(len(chunks)), pa.int64()),
                "kind": pa.array([chunk.kind for chunk in chunks], pa.string()),
                "text": pa.array([searchable_text(chunk) for chunk in chunks], pa.string()),
                "vector": pa.FixedSizeListArray.from_arrays(
                    pa.array(vectors.ravel(), pa.float32()), dimensions
                ),
            }
        )
        table = lancedb.connect(self._directory).create_table(TABLE, data)
        table.create_index("text", config=FTS())
        self._table = table

    def ranked(self, query: str, kinds: frozenset[str], limit: int) -> list[tuple[int, float, str]]:
        if self._table is None:
            return []
        asked = sorted(kinds & self._all_kinds)
        if not asked:
            return []
        where = None if self._all_kinds <= kinds else self.kinds_filter(asked)
        labels: dict[int, str] = {}

        def fetch(wanted: int) -> tuple[list[Hit], bool]:
            # Every column comes back (a narrower select warns on stderr, once per query);
            # only these are converted.
            found = self._query(query, where).limit(wanted).to_arrow()
            columns = [name for name in SCORE_COLUMNS if name in found.column_names]
            rows = found.select(["doc", *columns]).to_pylist()
            hits = []
            for row in rows:
                doc = int(row["doc"])
                labels[doc] = layer_of(row) if self.mode == "hybrid" else self.mode
                hits.append((doc, self.score(row)))
            return hits, len(rows) < wanted

        return [(doc, score, labels[doc]) for doc, score in stable_top(fetch, limit)]

    def _query(self, query: str, where: str | None) -> Any:
        bound = 1.0 - self.min_similarity
        if self.mode == "fts":
            search = self._table.search(query, query_type="fts")
        elif self.mode == "vector":
            search = (
                self._table.search(self.query_vector(query), vector_column_name="vector")
                .distance_type("cosine")
                .distance_range(upper_bound=bound)
            )
        else:
            search = (
                self._table.search(query_type="hybrid")
                .vector(self.query_vector(query))
                .text(query)
                .distance_type("cosine")
                .distance_range(upper_bound=bound)
                .rerank(RRFReranker(K=RRF_K, return_score="all"))
            )
        return search.where(where, prefilter=True) if where is not None else search

    def score(self, row: dict[str, Any]) -> float:
        """The row's score in this mode: cosine, BM25, or the fused relevance."""
        if self.mode == "vector":
            return 1.0 - float(row["_distance"])
        if self.mode == "fts":
            return float(row["_score"])
        return float(row["_relevance_score"])

    @staticmethod
    def kinds_filter(kinds: list[str]) -> str:
        quoted = ", ".join("'" + kind.replace("'", "''") + "'" for kind in kinds)
        return f"kind IN ({quoted})"

    def close(self) -> None:
        """Remove the table's directory."""
        self._table = None
        directory, self._directory = self._directory, None
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)
