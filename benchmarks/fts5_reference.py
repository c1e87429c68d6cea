"""SQLite FTS5 as the reference engine: the C engine the fixture format was designed around.

Two FTS5 indexes over one content table, the way a production deployment would
lay it out: `porter unicode61` (stemmed words) and `trigram` (case-insensitive
substrings). A query runs the same two MATCH queries the built-in engine's
layers correspond to, each ranked by bm25() with the title column weighted 2.0,
all terms required first and any term when that finds nothing, and fuses the two
rankings by Reciprocal Rank Fusion. It has no fuzzy layer: FTS5 has none.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

TITLE_WEIGHT = 2.0
RRF_K = 60
TITLE_CHARS = 80
_TERM = re.compile(r"\w+")


@dataclass(frozen=True)
class ReferenceHit:
    """One fused hit: the chunk's row id, its text and the layer label the engine would give."""

    rowid: int
    text: str
    layer: str
    score: float


def rrf_score(ranks: Sequence[int], k: int = RRF_K) -> float:
    """Reciprocal Rank Fusion (Cormack et al. 2009): sum of 1/(k + rank), ranks from 1."""
    return sum(1.0 / (k + rank) for rank in ranks)


def match_expression(terms: Sequence[str], operator: str) -> str:
    """An FTS5 MATCH string of quoted terms, so no term is read as FTS5 syntax."""
    return f" {operator} ".join('"' + term.replace('"', '""') + '"' for term in terms)


def first_line_title(text: str) -> str:
    """The first non-blank line, cut to TITLE_CHARS, as the plaintext chunker titles a chunk."""
    for line in text.split("\n"):
        if line.strip():
            return line.strip()[:TITLE_CHARS]
    return ""


def supports_fts5_trigram() -> bool:
    """Whether this Python's SQLite has FTS5 with the trigram tokenizer (SQLite >= 3.34)."""
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute("CREATE VIRTUAL TABLE probe USING fts5(text, tokenize='trigram')")
    except sqlite3.OperationalError:
        return False
    finally:
        connection.close()
    return True


class Fts5Reference:
    """An in-memory SQLite database with a content table and two FTS5 indexes over it."""

    def __init__(self) -> None:
        self._db = sqlite3.connect(":memory:")
        self._texts: list[str] = []

    def index(self, texts: Sequence[str]) -> None:
        """Store the texts once and build both FTS5 indexes over them in one transaction."""
        self._texts = list(texts)
        with self._db:
            self._db.execute("CREATE TABLE chunks (id INTEGER PRIMARY KEY, title TEXT, text TEXT)")
            for name, tokenizer in (("porter", "porter unicode61"), ("trigram", "trigram")):
                self._db.execute(
                    f"CREATE VIRTUAL TABLE {name} USING fts5(title, text, "
                    f"content='chunks', content_rowid='id', tokenize='{tokenizer}')"
                )
            self._db.executemany(
                "INSERT INTO chunks (id, title, text) VALUES (?, ?, ?)",
                ((rowid, first_line_title(text), text) for rowid, text in enumerate(self._texts)),
            )
            for name in ("porter", "trigram"):
                self._db.execute(
                    f"INSERT INTO {name} (rowid, title, text) SELECT id, title, text FROM chunks"
                )

    def size_bytes(self) -> int:
        """The database size: page_count * page_size (content table plus both indexes)."""
        (page_count,) = self._db.execute("PRAGMA page_count").fetchone()
        (page_size,) = self._db.execute("PRAGMA page_size").fetchone()
        return int(page_count) * int(page_size)

    def search(self, query: str, limit: int = 10) -> list[ReferenceHit]:
        """Both layers' bm25 rankings fused by RRF; ties break by row id."""
        terms = _TERM.findall(query.lower())
        rankings = {
            "porter": self._layer("porter", terms, limit),
            # A trigram MATCH term shorter than three characters matches nothing.
            "trigram": self._layer("trigram", [term for term in terms if len(term) >= 3], limit),
        }
        ranks: dict[int, list[int]] = {}
        layers: dict[int, list[str]] = {}
        for layer, rowids in rankings.items():
            for rank, rowid in enumerate(rowids, start=1):
                ranks.setdefault(rowid, []).append(rank)
                layers.setdefault(rowid, []).append(layer)
        fused = sorted(ranks, key=lambda rowid: (-rrf_score(ranks[rowid]), rowid))[:limit]
        return [
            ReferenceHit(
                rowid, self._texts[rowid], _layer_label(layers[rowid]), rrf_score(ranks[rowid])
            )
            for rowid in fused
        ]

    def _layer(self, table: str, terms: Sequence[str], limit: int) -> list[int]:
        if not terms:
            return []
        for operator in ("AND", "OR"):
            rows = self._db.execute(
                f"SELECT rowid FROM {table} WHERE {table} MATCH ? "
                f"ORDER BY bm25({table}, {TITLE_WEIGHT}, 1.0), rowid LIMIT ?",
                (match_expression(terms, operator), limit),
            ).fetchall()
            if rows:
                return [rowid for (rowid,) in rows]
        return []

    def close(self) -> None:
        self._db.close()


def _layer_label(layers: Sequence[str]) -> str:
    return "rrf(porter+trigram)" if len(layers) == 2 else layers[0]
