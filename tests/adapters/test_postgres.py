"""The postgres adapter against a live server (throwaway, or $QUALBENCH_POSTGRES_DSN)."""

from __future__ import annotations

from importlib.metadata import version

import psycopg
import pytest

from pytest_qualbench.adapters.postgres import PostgresEngine, session_schema
from pytest_qualbench.engine.types import ALL_KINDS
from tests.adapters.conftest import MakeEntry

Connection = psycopg.Connection[tuple[object, ...]]


def schema_exists(connection: Connection, schema: str) -> bool:
    row = connection.execute(
        "SELECT count(*) FROM pg_namespace WHERE nspname = %s", [schema]
    ).fetchone()
    return row == (1,)


def corpus_tables(connection: Connection, schema: str) -> int:
    row = connection.execute(
        "SELECT count(*) FROM pg_tables WHERE schemaname = %s AND tablename LIKE 'corpus_%%'",
        [schema],
    ).fetchone()
    assert row is not None
    return int(str(row[0]))


def test_websearch_syntax_ranks_by_ts_rank_cd(postgres: Connection, make_entry: MakeEntry) -> None:
    engine = PostgresEngine(trigram=False)
    try:
        engine.index(
            [
                make_entry(
                    "a", "# Replicas\n\nReplica lag grows while vacuum runs on the primary."
                ),
                make_entry("b", "# Cache\n\nThe cache lags behind the primary after a vacuum."),
            ]
        )
        # ts_rank_cd ranks by cover density: b has the two words closer together.
        assert [r.source for r in engine.search("lagging primary")] == ["bench-b", "bench-a"]
        # websearch_to_tsquery: a leading '-' excludes the word.
        results = engine.search("primary -cache")
        assert [(r.source, r.layer, r.title) for r in results] == [
            ("bench-a", "tsvector", "Replicas")
        ]
    finally:
        engine.close()


def test_no_chunk_with_every_word_falls_back_to_any_word(
    postgres: Connection, make_entry: MakeEntry
) -> None:
    engine = PostgresEngine(trigram=False)
    try:
        engine.index([make_entry("a", "replica lag"), make_entry("b", "eviction storm")])
        assert {r.source for r in engine.search("replica eviction unicorn")} == {
            "bench-a",
            "bench-b",
        }
    finally:
        engine.close()


def test_the_trigram_layer_finds_a_word_fragment_and_is_labeled(
    postgres: Connection, make_entry: MakeEntry
) -> None:
    engine = PostgresEngine()
    try:
        engine.index(
            [
                make_entry("a", "replication slots fill the disk"),
                make_entry("b", "unrelated text about lunch"),
            ]
        )
        assert [(r.source, r.layer) for r in engine.search("replicat")] == [("bench-a", "trigram")]
        both = engine.search("replication slots")
        assert [(r.source, r.layer) for r in both] == [("bench-a", "rrf(tsvector+trigram)")]
    finally:
        engine.close()


def test_only_the_asked_kinds_are_searched(postgres: Connection, make_entry: MakeEntry) -> None:
    engine = PostgresEngine()
    try:
        engine.index(
            [
                make_entry("a", "failover runbook", kind="ephemeral"),
                make_entry("b", "failover checklist"),
            ]
        )
        assert [r.source for r in engine.search("failover")] == ["bench-b"]
        assert len(engine.search("failover", kinds=ALL_KINDS)) == 2
    finally:
        engine.close()


def test_engines_share_one_table_per_corpus_and_the_last_one_out_drops_the_schema(
    postgres: Connection, make_entry: MakeEntry
) -> None:
    entries = [make_entry("a", "replica lag")]
    first, second, other = PostgresEngine(), PostgresEngine(), PostgresEngine()
    schema = session_schema()
    first.index(entries)
    second.index(entries)
    other.index([make_entry("b", "eviction storm")])
    assert corpus_tables(postgres, schema) == 2
    first.close()
    other.close()
    assert schema_exists(postgres, schema)
    assert [r.source for r in second.search("replica")] == ["bench-a"]
    second.close()
    assert not schema_exists(postgres, schema)


def test_the_schema_follows_xdists_run_id(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_TESTRUNUID", "0123abcd")
    assert session_schema() == "qualbench_0123abcd"


def test_without_a_dsn_the_error_names_both_ways_to_give_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("QUALBENCH_POSTGRES_DSN", raising=False)
    with pytest.raises(
        ValueError, match="QUALBENCH_POSTGRES_DSN or the ini option qualbench_postgres_dsn"
    ):
        PostgresEngine()


def test_config_records_driver_and_server_versions(postgres: Connection) -> None:
    engine = PostgresEngine()
    try:
        assert engine.config["library"] == f"psycopg {version('psycopg')}"
        # What the server itself says, asked over this test's own connection.
        row = postgres.execute("SHOW server_version").fetchone()
        assert row is not None
        assert engine.config["server"] == f"PostgreSQL {row[0]}"
    finally:
        engine.close()
