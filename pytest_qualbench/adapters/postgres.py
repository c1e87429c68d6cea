"""`postgres`: PostgreSQL full-text search through psycopg 3 (extra: postgres).

Each corpus becomes one table in the session's schema: a stored `tsvector`
(title weight A, text weight B) with a GIN index, queried by
`websearch_to_tsquery` and ranked by `ts_rank_cd`; optionally a `pg_trgm` GIN
index on the text, ranked by `word_similarity`, fused with the first by RRF.

Every xdist worker of one run uses the same schema (named after xdist's run
id) and the same table for the same corpus (named after its fingerprint): the
first worker to need a corpus loads it, the others find it loaded. Each engine
registers itself in the schema and removes itself in `close()`; the last one
out drops the schema.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from importlib.metadata import version
from typing import Any, ClassVar

import psycopg
from psycopg import errors, sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo, timeout_from_conninfo

from pytest_qualbench.adapters.chunked import ChunkedEngine
from pytest_qualbench.engine.fusion import fuse
from pytest_qualbench.engine.types import Chunk

DSN_VARIABLE = "QUALBENCH_POSTGRES_DSN"
TSVECTOR_LAYER = "tsvector"
TRIGRAM_LAYER = "trigram"
FUSED_LAYER = f"rrf({TSVECTOR_LAYER}+{TRIGRAM_LAYER})"
# A serial session's schema; xdist workers share theirs through the run id.
_PROCESS_RUN_ID = uuid.uuid4().hex
# Seconds to wait for a server to answer the connection, unless the DSN (or
# $PGCONNECT_TIMEOUT) says otherwise: libpq's default is no limit, psycopg's 130 s
# per content type, and a server that accepts but never answers then stalls the run.
DEFAULT_CONNECT_TIMEOUT_S = 10
# One advisory lock for the whole database around CREATE EXTENSION: two sessions
# creating it at once race on pg_extension's unique index (the schema lock is per run).
_EXTENSION_LOCK = "pytest-qualbench: CREATE EXTENSION pg_trgm"

_TS_QUERY = """
SELECT doc, ts_rank_cd(document, query)::float8 AS score
FROM {table}, {tsquery} AS given(query)
WHERE document @@ query AND kind = ANY(%(kinds)s)
ORDER BY score DESC, doc
LIMIT %(depth)s
"""
_ALL_WORDS = "websearch_to_tsquery(%(language)s::regconfig, %(query)s)"
# The query's lexemes OR-ed: the any-word fallback when no chunk has all words.
_ANY_WORD = """(
  SELECT coalesce(string_agg(quote_literal(lexeme), ' | '), '')::tsquery
  FROM unnest(tsvector_to_array(to_tsvector(%(language)s::regconfig, %(query)s))) AS lexeme
)"""
_TRIGRAM_QUERY = """
SELECT doc, word_similarity(%(query)s, body)::float8 AS score
FROM {table}
WHERE %(query)s <%% body AND kind = ANY(%(kinds)s)
ORDER BY score DESC, doc
LIMIT %(depth)s
"""


def session_schema() -> str:
    """The schema of this test run: xdist's run id when under xdist, else this process's."""
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID") or _PROCESS_RUN_ID
    return "qualbench_" + "".join(char for char in run_id if char.isalnum())[:32]


def corpus_fingerprint(chunks: tuple[Chunk, ...], language: str) -> str:
    """sha256 over the language and every chunk's kind, title and text: equal corpora, one table."""
    digest = hashlib.sha256(language.encode())
    for chunk in chunks:
        for part in (chunk.kind, chunk.title, chunk.text):
            digest.update(len(part).to_bytes(8, "big"))
            digest.update(part.encode())
    return digest.hexdigest()[:24]


def connect(dsn: str, connect_timeout: int) -> psycopg.Connection[Any]:
    """An autocommit connection, waiting at most the DSN's connect_timeout, else ours."""
    conninfo = resolve_dsn(dsn)
    if "connect_timeout" not in conninfo_to_dict(conninfo) and not os.environ.get(
        "PGCONNECT_TIMEOUT"
    ):
        conninfo = make_conninfo(conninfo, connect_timeout=connect_timeout)
    try:
        return psycopg.connect(conninfo, autocommit=True)
    except errors.ConnectionTimeout as exc:
        seconds = timeout_from_conninfo(conninfo_to_dict(conninfo))
        raise errors.ConnectionTimeout(
            f"postgres engine: the server did not answer within {seconds:g} s "
            "(connect_timeout: set it in the DSN or with the engine option connect_timeout)"
        ) from exc


def searchable(text: str) -> str:
    """`text` as PostgreSQL can store it: a NUL byte (which text columns refuse) as a space.

    The built-in engine's tokenizer breaks words at a NUL as at any other
    non-word character, so the two engines see the same words.
    """
    return text.replace("\x00", " ")


def resolve_dsn(dsn: str) -> str:
    """The DSN given, else $QUALBENCH_POSTGRES_DSN; a clear error without either."""
    resolved = dsn or os.environ.get(DSN_VARIABLE, "")
    if not resolved:
        raise ValueError(
            f"postgres engine: no server given; set {DSN_VARIABLE} or the ini option "
            "qualbench_postgres_dsn (e.g. postgresql://user@localhost/dbname)"
        )
    return resolved


class PostgresEngine(ChunkedEngine):
    """tsvector full-text search, with an optional pg_trgm layer fused by RRF."""

    layers: ClassVar[tuple[str, ...]] = (TSVECTOR_LAYER, TRIGRAM_LAYER, FUSED_LAYER)

    def __init__(
        self,
        *,
        dsn: str = "",
        language: str = "english",
        trigram: bool = True,
        rrf_k: int = 60,
        fusion_depth: int = 100,
        connect_timeout: int = DEFAULT_CONNECT_TIMEOUT_S,
    ) -> None:
        super().__init__()
        self.language = language
        self.trigram = trigram
        self.rrf_k = rrf_k
        self.fusion_depth = fusion_depth
        self.schema = session_schema()
        self._token = uuid.uuid4().hex
        self._table: sql.Identifier | None = None
        self._connection: psycopg.Connection[Any] | None = connect(dsn, connect_timeout)
        row = self._connection.execute("SHOW server_version").fetchone()
        self._server_version = str(row[0]) if row else "unknown"

    @property
    def config(self) -> dict[str, object]:
        return {
            "engine": "postgres",
            "library": f"psycopg {version('psycopg')}",
            "server": f"PostgreSQL {self._server_version}",
            "language": self.language,
            "tsvector": "setweight(title, A) || setweight(text, B), GIN index",
            "query": "websearch_to_tsquery, then any word when no chunk has all",
            "rank": "ts_rank_cd",
            "trigram": "pg_trgm word_similarity, GIN index" if self.trigram else None,
            "fusion": {"method": "rrf", "rrf_k": self.rrf_k, "depth_per_layer": self.fusion_depth},
            "schema": "one per session, dropped when its last engine closes",
            "tie_break": "(source, position)",
        }

    def _connected(self) -> psycopg.Connection[Any]:
        if self._connection is None:
            raise RuntimeError("postgres engine: used after close()")
        return self._connection

    def _build(self, chunks: tuple[Chunk, ...]) -> None:
        connection = self._connected()
        schema = sql.Identifier(self.schema)
        name = "corpus_" + corpus_fingerprint(chunks, self.language)
        table = sql.Identifier(self.schema, name)
        if self.trigram:
            # Its own short transaction: the lock is the database's, not this run's.
            with connection.transaction():
                connection.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [_EXTENSION_LOCK])
                connection.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        with connection.transaction():
            # One lock per schema serialises its DDL across workers (and sessions).
            connection.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [self.schema])
            connection.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(schema))
            connection.execute(
                sql.SQL("CREATE TABLE IF NOT EXISTS {} (token text PRIMARY KEY)").format(
                    sql.Identifier(self.schema, "engines")
                )
            )
            connection.execute(
                sql.SQL("INSERT INTO {} VALUES (%s) ON CONFLICT DO NOTHING").format(
                    sql.Identifier(self.schema, "engines")
                ),
                [self._token],
            )
            exists = connection.execute(
                "SELECT to_regclass(%s) IS NOT NULL", [f"{self.schema}.{name}"]
            ).fetchone()
            if not (exists and exists[0]):
                self._load(connection, table, chunks)
        self._table = table

    def _load(
        self, connection: psycopg.Connection[Any], table: sql.Identifier, chunks: tuple[Chunk, ...]
    ) -> None:
        language = sql.Literal(self.language)
        connection.execute(
            sql.SQL(
                "CREATE TABLE {table} (doc integer PRIMARY KEY, kind text NOT NULL, "
                "title text NOT NULL, body text NOT NULL, document tsvector GENERATED ALWAYS AS "
                "(setweight(to_tsvector({language}::regconfig, title), 'A') || "
                "setweight(to_tsvector({language}::regconfig, body), 'B')) STORED)"
            ).format(table=table, language=language)
        )
        with connection.cursor().copy(
            sql.SQL("COPY {} (doc, kind, title, body) FROM STDIN").format(table)
        ) as copy:
            for doc, chunk in enumerate(chunks):
                row = (doc, chunk.kind, searchable(chunk.title), searchable(chunk.text))
                try:
                    copy.write_row(row)
                except (psycopg.DataError, UnicodeEncodeError) as exc:
                    raise ValueError(
                        f"postgres engine: entry {chunk.entry_id!r} ({chunk.source}) "
                        f"cannot be stored: {exc}"
                    ) from exc
        connection.execute(sql.SQL("CREATE INDEX ON {} USING gin (document)").format(table))
        if self.trigram:
            connection.execute(
                sql.SQL("CREATE INDEX ON {} USING gin (body gin_trgm_ops)").format(table)
            )
        connection.execute(sql.SQL("ANALYZE {}").format(table))

    def ranked(self, query: str, kinds: frozenset[str], limit: int) -> list[tuple[int, float, str]]:
        if self._table is None:
            return []
        depth = max(limit, self.fusion_depth)
        params = {
            "query": searchable(query),
            "kinds": sorted(kinds),
            "depth": depth,
            "language": self.language,
        }
        words = self._select(_TS_QUERY, _ALL_WORDS, params)
        if not words:
            words = self._select(_TS_QUERY, _ANY_WORD, params)
        if not self.trigram:
            return [(doc, score, TSVECTOR_LAYER) for doc, score in words]
        trigrams = self._select(_TRIGRAM_QUERY, "", params)
        rankings = [
            (TSVECTOR_LAYER, [doc for doc, _ in words]),
            (TRIGRAM_LAYER, [doc for doc, _ in trigrams]),
        ]
        return [(item.doc, item.score, item.label) for item in fuse(rankings, self.rrf_k)]

    def _select(
        self, template: str, tsquery: str, params: dict[str, Any]
    ) -> list[tuple[int, float]]:
        statement = sql.SQL(template).format(table=self._table, tsquery=sql.SQL(tsquery))
        rows = self._connected().execute(statement, params).fetchall()
        return [(int(doc), float(score)) for doc, score in rows]

    def close(self) -> None:
        """Unregister; the last engine of the session drops its schema."""
        if self._connection is None:
            return
        connection, self._connection = self._connection, None
        engines = sql.Identifier(self.schema, "engines")
        with connection, connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [self.schema])
            if connection.execute(
                "SELECT to_regclass(%s)", [f"{self.schema}.engines"]
            ).fetchone() == (None,):
                return
            connection.execute(
                sql.SQL("DELETE FROM {} WHERE token = %s").format(engines), [self._token]
            )
            remaining = connection.execute(
                sql.SQL("SELECT count(*) FROM {}").format(engines)
            ).fetchone()
            if remaining == (0,):
                connection.execute(
                    sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(self.schema))
                )
