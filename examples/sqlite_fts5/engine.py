"""A bring-your-own engine on the standard library's SQLite FTS5 (docs/custom-engine.md).

Two FTS5 tables hold the same chunks: one tokenized by `porter unicode61` (stemmed
words), one by `trigram` (case-insensitive substrings). Each is queried with
MATCH and ranked by bm25(); the two rankings are fused by Reciprocal Rank Fusion.
There is no fuzzy layer, so typo cases find less and fail their layer checks.

Run the shipped benchmark with it, through this example's own ini and floors:

    pytest -c examples/sqlite_fts5/pytest.ini --qualbench
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence

from pytest_qualbench.engine.chunking import chunk_entry
from pytest_qualbench.engine.fusion import RRF_K, fuse
from pytest_qualbench.engine.types import DEFAULT_KINDS, DEFAULT_LIMIT, Chunk, Result
from pytest_qualbench.fixtures.schema import Entry

# Layer name -> FTS5 tokenizer. The names become the results' layer labels.
TOKENIZERS = {"porter": "porter unicode61", "trigram": "trigram"}
# The trigram tokenizer matches nothing for a string shorter than one trigram.
TRIGRAM_MIN_CHARS = 3
# How deep each layer's ranking goes into the fusion (as the built-in engine does).
FUSION_DEPTH = 100
# bm25() column weights for (title, text): a title match counts double.
TITLE_WEIGHT = 2.0
_OUTER_PUNCTUATION = re.compile(r"^\W+|\W+$")


def fts5_unsupported_reason() -> str | None:
    """Why this Python's SQLite cannot run the engine, or None when it can."""
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute("CREATE VIRTUAL TABLE probe USING fts5(text, tokenize='trigram')")
    except sqlite3.OperationalError as exc:
        return (
            f"SQLite {sqlite3.sqlite_version} lacks FTS5 with the trigram tokenizer (3.34+): {exc}"
        )
    finally:
        connection.close()
    return None


def query_terms(query: str) -> list[str]:
    """Whitespace-separated words without their outer punctuation, duplicates dropped."""
    stripped = (_OUTER_PUNCTUATION.sub("", word) for word in query.split())
    return list(dict.fromkeys(term for term in stripped if term))


def fts5_string(term: str) -> str:
    """An FTS5 string literal: the term in double quotes, inner quotes doubled (sqlite.org/fts5.html 3.1)."""
    # SQLite ends a string at NUL ("unterminated string"), and no indexed text holds one.
    return '"' + term.replace("\x00", "").replace('"', '""') + '"'


def match_expression(terms: Sequence[str], operator: str) -> str:
    """The terms as FTS5 strings joined by AND or OR; operators inside a string are plain text."""
    return f" {operator} ".join(fts5_string(term) for term in terms)


class Fts5Engine:
    """Porter and trigram FTS5 tables ranked by bm25(), fused by RRF; no fuzzy layer."""

    def __init__(self) -> None:
        reason = fts5_unsupported_reason()
        if reason is not None:
            raise RuntimeError(reason)
        self._connection = sqlite3.connect(":memory:")
        self._chunks: tuple[Chunk, ...] = ()

    @property
    def config(self) -> dict[str, object]:
        """Every constant that shapes a ranking, for the report's metadata.engine.config."""
        return {
            "engine": "examples.sqlite_fts5.engine:Fts5Engine",
            "sqlite_version": sqlite3.sqlite_version,
            "tokenizers": dict(TOKENIZERS),
            "ranking": f"bm25(), title weight {TITLE_WEIGHT}",
            "match": "all terms, then any term",
            "fusion": {"method": "rrf", "rrf_k": RRF_K, "depth_per_layer": FUSION_DEPTH},
            "fuzzy": None,
        }

    def index(self, entries: Sequence[Entry]) -> None:
        """Chunk every entry (as the built-in engine does) and fill both FTS5 tables."""
        # Sorted entries make row ids, hence every bm25() tie, independent of input order.
        ordered = sorted(entries, key=lambda entry: (entry.source_label, entry.id))
        self._chunks = tuple(chunk for entry in ordered for chunk in chunk_entry(entry))
        rows = [(row_id, c.title, c.text, c.kind) for row_id, c in enumerate(self._chunks)]
        for layer, tokenizer in TOKENIZERS.items():
            self._connection.execute(f"DROP TABLE IF EXISTS {layer}")
            self._connection.execute(
                f"CREATE VIRTUAL TABLE {layer} USING fts5("
                f"title, text, kind UNINDEXED, tokenize='{tokenizer}')"
            )
            self._connection.executemany(
                f"INSERT INTO {layer} (rowid, title, text, kind) VALUES (?, ?, ?, ?)", rows
            )

    def chunks(self) -> tuple[Chunk, ...]:
        """Every indexed chunk, so the plugin can compute the exact IDCG."""
        return self._chunks

    def search(
        self, query: str, *, limit: int = DEFAULT_LIMIT, kinds: Iterable[str] = DEFAULT_KINDS
    ) -> list[Result]:
        """At most `limit` results, best first, from chunks of the given source kinds."""
        wanted = sorted(set(kinds))
        terms = query_terms(query)
        if limit <= 0 or not wanted or not terms:
            return []
        depth = max(limit, FUSION_DEPTH)
        trigram_terms = [term for term in terms if len(term) >= TRIGRAM_MIN_CHARS]
        porter, porter_all = self._ranking("porter", terms, wanted, depth)
        trigram, trigram_all = self._ranking("trigram", trigram_terms, wanted, depth)
        # A table whose AND matched nothing (its OR ranking) matches none of its rows in
        # full: a result is labeled with the tables that hold every term of it.
        fused = fuse(
            [("porter", porter), ("trigram", trigram)],
            matched_in_full=(len(porter) if porter_all else 0, len(trigram) if trigram_all else 0),
        )
        return [self._result(item.doc, item.score, item.label) for item in fused[:limit]]

    def _ranking(
        self, layer: str, terms: Sequence[str], kinds: Sequence[str], depth: int
    ) -> tuple[list[int], bool]:
        """Row ids by bm25() for all terms, or any term when no chunk holds them all; and
        whether they hold all terms."""
        if not terms:
            return [], False
        placeholders = ", ".join("?" for _ in kinds)
        # bm25() is lower for better matches; rowid (source, entry id, position order) breaks ties.
        sql = (
            f"SELECT rowid FROM {layer} WHERE {layer} MATCH ? AND kind IN ({placeholders}) "
            f"ORDER BY bm25({layer}, {TITLE_WEIGHT}, 1.0), rowid LIMIT ?"
        )
        for operator in ("AND", "OR"):
            expression = match_expression(terms, operator)
            rows = self._connection.execute(sql, (expression, *kinds, depth)).fetchall()
            if rows:
                return [row_id for (row_id,) in rows], operator == "AND"
        return [], False

    def _result(self, row_id: int, score: float, layer: str) -> Result:
        chunk = self._chunks[row_id]
        return Result(
            text=chunk.text,
            layer=layer,
            title=chunk.title,
            score=score,
            source=chunk.source,
            position=chunk.position,
        )
