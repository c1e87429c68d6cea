"""Adapters are tested against their real libraries and a live PostgreSQL server.

The libraries are imported here, before any pytester session: an in-process
pytester run forgets modules first imported inside it, and native extensions
cannot be imported twice.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import uuid
from collections.abc import Callable, Iterator

import bm25s  # noqa: F401
import psycopg
import pytest
import tantivy  # noqa: F401
import wordllama  # noqa: F401
from psycopg import sql
from psycopg.conninfo import make_conninfo

from pytest_qualbench.fixtures import Entry
from tests.postgres_server import server_binaries, throwaway_server

MakeEntry = Callable[..., Entry]

# The vector stores' extras (chroma, lancedb, faiss) are in `.[test]`, which CI
# installs; a venv made before they were added skips their tests with a reason.
# LanceDB is imported through its adapter, which sets its log level first.
VECTOR_STORE_MODULES = {
    "chromadb": "chromadb",
    "lancedb": "pytest_qualbench.adapters.lancedb",
    "faiss": "faiss",
}


def installed(library: str) -> bool:
    return importlib.util.find_spec(library) is not None


for _library, _module in VECTOR_STORE_MODULES.items():
    if installed(_library):
        importlib.import_module(_module)


def needs(library: str) -> pytest.MarkDecorator:
    """Skip, with the command that installs it, when a vector store's library is absent."""
    return pytest.mark.skipif(
        not installed(library), reason=f"{library} is not installed: pip install -e '.[test]'"
    )


@pytest.fixture
def make_entry() -> MakeEntry:
    def make(
        entry_id: str,
        haystack: str,
        *,
        content_type: str = "markdown",
        kind: str = "durable",
        metadata: dict[str, object] | None = None,
    ) -> Entry:
        return Entry(
            id=entry_id,
            content_type=content_type,
            haystack=haystack,
            source_label=f"bench-{entry_id}",
            source_kind=kind,
            cases=(),
            path="fixtures.jsonl",
            line=1,
            metadata=metadata or {},
        )

    return make


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """$QUALBENCH_POSTGRES_DSN if set, else a throwaway server started for this session."""
    given = os.environ.get("QUALBENCH_POSTGRES_DSN")
    if given:
        yield given
        return
    binaries = server_binaries()
    if binaries is None:
        pytest.skip(
            "no PostgreSQL server here: apt-get install postgresql (or set QUALBENCH_POSTGRES_DSN)"
        )
    try:
        with throwaway_server(binaries) as dsn:
            yield dsn
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"PostgreSQL server could not be started: {exc.stderr or exc}")


@pytest.fixture
def postgres(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    """A connection to the server, with $QUALBENCH_POSTGRES_DSN pointing at it.

    Each test gets a schema of its own: under xdist the engines of one run share a
    schema named after the run id, and a test counting tables must not see the
    tables another worker's test creates at the same time.
    """
    monkeypatch.setenv("QUALBENCH_POSTGRES_DSN", postgres_dsn)
    monkeypatch.setenv("PYTEST_XDIST_TESTRUNUID", uuid.uuid4().hex)
    with psycopg.connect(postgres_dsn, autocommit=True) as connection:
        yield connection


@pytest.fixture
def fresh_database(postgres_dsn: str) -> Iterator[str]:
    """The DSN of a database created for this test (no extension in it yet), dropped after."""
    name = f"qualbench_test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(postgres_dsn, autocommit=True) as connection:
        connection.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE template0").format(sql.Identifier(name))
        )
    try:
        yield make_conninfo(postgres_dsn, dbname=name)
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as connection:
            connection.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def qualbench_schemas(dsn: str) -> list[str]:
    """The qualbench_* schemas in the database: what a run must not leave behind."""
    with psycopg.connect(dsn, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'qualbench%%' ORDER BY 1"
        ).fetchall()
    return [str(row[0]) for row in rows]
