"""The postgres adapter when the database is shared, slow, stopped or handed odd text.

Issue 25: two runs at once on a fresh database, a server that never answers, a NUL
byte in a haystack. Every test talks to a real server (tests/postgres_server.py).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from pytest_qualbench.adapters.postgres import DEFAULT_CONNECT_TIMEOUT_S, PostgresEngine
from tests.adapters.conftest import MakeEntry

# Both processes wait for the same instant, then index at once: the race of two
# `CREATE EXTENSION IF NOT EXISTS pg_trgm` on a database that has none yet.
RACER = textwrap.dedent(
    """
    import sys, time
    from pytest_qualbench.adapters.postgres import PostgresEngine
    from pytest_qualbench.fixtures import Entry

    dsn, start = sys.argv[1], float(sys.argv[2])
    entries = [
        Entry(id=f"e{n}", content_type="plaintext", haystack=f"replica lag number {n}",
              source_label=f"bench-e{n}", source_kind="durable", cases=(),
              path="fixtures.jsonl", line=n + 1, metadata={})
        for n in range(200)
    ]
    engine = PostgresEngine(dsn=dsn)
    time.sleep(max(0.0, start - time.time()))
    try:
        engine.index(entries)
        assert engine.search("replica")
    finally:
        engine.close()
    print("indexed")
    """
)


def test_two_runs_at_once_on_a_fresh_database_both_create_the_extension(
    fresh_database: str, tmp_path: Path
) -> None:
    script = tmp_path / "racer.py"
    script.write_text(RACER, encoding="utf-8")
    start = time.time() + 3.0
    racers = [
        subprocess.Popen(
            [sys.executable, str(script), fresh_database, str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outcomes = [racer.communicate(timeout=120) for racer in racers]
    for racer, (stdout, stderr) in zip(racers, outcomes, strict=True):
        assert racer.returncode == 0, stderr
        assert stdout.strip() == "indexed"


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A port that accepts TCP connections (the kernel's backlog) and never says a word."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield int(listener.getsockname()[1])


@pytest.mark.parametrize("where", ["dsn", "option"])
def test_a_server_that_never_answers_fails_within_the_connect_timeout(
    silent_server: int, where: str
) -> None:
    dsn = f"host=127.0.0.1 port={silent_server} dbname=postgres user=qualbench"
    started = time.monotonic()
    with pytest.raises(psycopg.OperationalError, match="connect_timeout"):
        if where == "dsn":
            PostgresEngine(dsn=f"{dsn} connect_timeout=1")
        else:
            PostgresEngine(dsn=dsn, connect_timeout=1)
    assert time.monotonic() - started < 1 + 5


def test_the_default_connect_timeout_is_bounded(
    silent_server: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PGCONNECT_TIMEOUT", raising=False)
    started = time.monotonic()
    with pytest.raises(psycopg.OperationalError, match=f"{DEFAULT_CONNECT_TIMEOUT_S:g} s"):
        PostgresEngine(dsn=f"host=127.0.0.1 port={silent_server} dbname=postgres user=qualbench")
    assert time.monotonic() - started < DEFAULT_CONNECT_TIMEOUT_S + 5


def test_a_nul_byte_is_a_word_break_as_in_the_builtin_engine(
    postgres: psycopg.Connection[tuple[object, ...]], make_entry: MakeEntry
) -> None:
    engine = PostgresEngine()
    try:
        engine.index(
            [
                make_entry("a", "replica\x00lag grows while vacuum runs"),
                make_entry("b", "the cache is warm"),
            ]
        )
        # The result is the chunk as written, NUL included: needles are judged on it.
        assert [r.text for r in engine.search("lag")] == ["replica\x00lag grows while vacuum runs"]
        assert {r.source for r in engine.search("replica\x00cache")} == {"bench-a", "bench-b"}
    finally:
        engine.close()
