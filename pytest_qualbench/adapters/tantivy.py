"""`tantivy`: a tantivy index (title boosted, en_stem) in a temporary directory (extra: tantivy).

The directory is removed by `close()`, which the plugin calls at session end.
The query's words (lowercased, so AND/OR/NOT stay words) are OR-ed over title
and text; with `fuzzy_distance` > 0 the text field also matches words within
that many edits, and results only those fuzzy terms found are labeled `fuzzy`.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from importlib.metadata import version
from typing import Any, ClassVar

import tantivy

from pytest_qualbench.adapters.chunked import ChunkedEngine
from pytest_qualbench.engine.types import Chunk

LAYER = "tantivy"
FUZZY_LAYER = "fuzzy"
# tantivy's writer wants at least 15 MB of heap per thread.
WRITER_HEAP_BYTES = 50_000_000
_WORD = re.compile(r"\w+")


class TantivyEngine(ChunkedEngine):
    """BM25 over an en_stem title field (boosted) and text field, via tantivy's query parser."""

    layers: ClassVar[tuple[str, ...]] = (LAYER, FUZZY_LAYER)

    def __init__(self, *, title_boost: float = 2.0, fuzzy_distance: int = 0) -> None:
        super().__init__()
        if fuzzy_distance not in (0, 1, 2):
            raise ValueError(f"fuzzy_distance: {fuzzy_distance} is not 0, 1 or 2")
        self.title_boost = title_boost
        self.fuzzy_distance = fuzzy_distance
        self._directory: str | None = None
        self._index: Any = None

    @property
    def config(self) -> dict[str, object]:
        return {
            "engine": "tantivy",
            "library": f"tantivy {version('tantivy')}",
            "tokenizer": "en_stem",
            "fields": {"title": self.title_boost, "text": 1.0},
            "query": "the query's words OR-ed over title and text (BM25)",
            "fuzzy_distance": self.fuzzy_distance,
            "tie_break": "(source, position)",
        }

    def _build(self, chunks: tuple[Chunk, ...]) -> None:
        self.close()
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("title", tokenizer_name="en_stem")
        builder.add_text_field("text", tokenizer_name="en_stem")
        builder.add_text_field("kind", tokenizer_name="raw")
        builder.add_unsigned_field("doc", stored=True, indexed=True, fast=True)
        self._directory = tempfile.mkdtemp(prefix="qualbench-tantivy-")
        index = tantivy.Index(builder.build(), path=self._directory)
        # One thread: document ids then follow insertion order in a single segment.
        writer = index.writer(heap_size=WRITER_HEAP_BYTES, num_threads=1)
        for doc, chunk in enumerate(chunks):
            document = tantivy.Document()
            document.add_text("title", chunk.title)
            document.add_text("text", chunk.text)
            document.add_text("kind", chunk.kind)
            document.add_unsigned("doc", doc)
            writer.add_document(document)
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        self._index = index

    def ranked(self, query: str, kinds: frozenset[str], limit: int) -> list[tuple[int, float, str]]:
        words = " ".join(_WORD.findall(query.lower()))
        if self._index is None or not words:
            return []
        ranked = self._search(words, kinds, limit, fuzzy=False)
        if self.fuzzy_distance:
            exact = {doc for doc, _, _ in ranked}
            fuzzy = [
                item
                for item in self._search(words, kinds, limit, fuzzy=True)
                if item[0] not in exact
            ]
            ranked = sorted([*ranked, *fuzzy], key=lambda item: (-item[1], item[0]))
        return ranked[:limit]

    def _search(
        self, words: str, kinds: frozenset[str], limit: int, *, fuzzy: bool
    ) -> list[tuple[int, float, str]]:
        fuzzy_fields = {"text": (False, self.fuzzy_distance, True)} if fuzzy else {}
        parsed = self._index.parse_query(
            words,
            ["title", "text"],
            field_boosts={"title": self.title_boost},
            fuzzy_fields=fuzzy_fields,
        )
        kind_filter = tantivy.Query.term_set_query(self._index.schema, "kind", sorted(kinds))
        query = tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, parsed), (tantivy.Occur.Must, kind_filter)]
        )
        searcher = self._index.searcher()
        # Ask for more than `limit`: tantivy's own tie order is not (source, position).
        hits = searcher.search(query, max(limit * 4, 50)).hits
        layer = FUZZY_LAYER if fuzzy else LAYER
        ranked = [
            (int(searcher.doc(address)["doc"][0]), float(score), layer) for score, address in hits
        ]
        ranked.sort(key=lambda item: (-item[1], item[0]))
        return ranked[:limit]

    def close(self) -> None:
        self._index = None
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None
