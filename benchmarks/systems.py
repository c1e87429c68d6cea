"""The systems under comparison, each over the same synthetic corpus and queries.

- engine: the built-in engine (porter BM25 + trigram BM25, RRF, fuzzy correction).
- bm25s: BM25 over scipy-sparse-style numpy matrices (its own tokenizer, English
  stopwords, no stemmer), the fastest pure-numpy BM25 on PyPI.
- tantivy: the Rust search library through its Python bindings, an in-memory
  index of one text field with the `en_stem` tokenizer, one indexing thread (the
  engine builds on one), the query parsed as OR of its terms; the row number is
  fetched from the stored document of each of the top 10 hits. (A separate title
  field, scored with its own length norms, cost it a fifth of its recall at 10k.)
- fts5: SQLite FTS5, porter and trigram indexes fused by RRF (fts5_reference).

Only the engine corrects typos; none of the others has such a layer. A search
returns the corpus row numbers of the top 10, best first, so every system is
judged on the same thing: did the query's source chunk come back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from benchmarks.corpus import Corpus
from benchmarks.fts5_reference import Fts5Reference

LIMIT = 10
ENGINE = "engine"
BM25S = "bm25s"
TANTIVY = "tantivy"
FTS5 = "fts5"
SYSTEMS = (ENGINE, BM25S, TANTIVY, FTS5)
PEERS = (BM25S, TANTIVY, FTS5)
# tantivy's indexing memory budget: its documented default for one thread.
TANTIVY_HEAP_BYTES = 50_000_000


class System(Protocol):
    def build(self, corpus: Corpus) -> None: ...

    def search(self, query: str) -> list[int]: ...


class EngineSystem:
    def build(self, corpus: Corpus) -> None:
        from pytest_qualbench.engine import Engine

        self.engine = Engine()
        self.engine.index(corpus.entries)
        # One entry is one chunk (corpus.py), so a result's source names its row.
        self.rows = {entry.source_label: row for row, entry in enumerate(corpus.entries)}

    def search(self, query: str) -> list[int]:
        from pytest_qualbench.engine import ALL_KINDS

        results = self.engine.search(query, limit=LIMIT, kinds=ALL_KINDS)
        return [self.rows[result.source] for result in results]


class Bm25sSystem:
    def build(self, corpus: Corpus) -> None:
        import bm25s

        self.bm25s: Any = bm25s
        tokens = bm25s.tokenize(corpus.texts(), stopwords="en", show_progress=False)
        self.retriever = bm25s.BM25()
        self.retriever.index(tokens, show_progress=False)
        self.size = len(corpus.entries)

    def search(self, query: str) -> list[int]:
        tokens = self.bm25s.tokenize([query], stopwords="en", show_progress=False)
        rows, scores = self.retriever.retrieve(tokens, k=min(LIMIT, self.size), show_progress=False)
        # Unknown words give zero-score filler rows: no match, not a result.
        return [int(row) for row, score in zip(rows[0], scores[0], strict=True) if score > 0]


class TantivySystem:
    def build(self, corpus: Corpus) -> None:
        import tantivy

        schema = tantivy.SchemaBuilder()
        schema.add_integer_field("row", stored=True, indexed=False)
        schema.add_text_field("body", stored=False, tokenizer_name="en_stem")
        self.index = tantivy.Index(schema.build())
        writer = self.index.writer(heap_size=TANTIVY_HEAP_BYTES, num_threads=1)
        for row, text in enumerate(corpus.texts()):
            writer.add_document(tantivy.Document(row=row, body=text))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()

    def search(self, query: str) -> list[int]:
        parsed = self.index.parse_query(query, ["body"])
        hits = self.searcher.search(parsed, LIMIT).hits
        return [int(self.searcher.doc(address)["row"][0]) for _, address in hits]


class Fts5System:
    def build(self, corpus: Corpus) -> None:
        self.reference = Fts5Reference()
        self.reference.index(corpus.texts())

    def search(self, query: str) -> list[int]:
        return [hit.rowid for hit in self.reference.search(query, limit=LIMIT)]


MAKERS: dict[str, Callable[[], System]] = {
    ENGINE: EngineSystem,
    BM25S: Bm25sSystem,
    TANTIVY: TantivySystem,
    FTS5: Fts5System,
}
