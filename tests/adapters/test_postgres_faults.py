"""The postgres adapter when the database is shared, slow, stopped or handed odd text.

Issue 25: two runs at once on a fresh database, a server that never answers, a NUL
byte in a haystack. Every test talks to a real server (tests/postgres_server.py).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from pytest_qualbench.adapters.postgres import DEFAULT_CONNECT_TIMEOUT_S, PostgresEngine
from tests.adapters.conftest import MakeEntry, qualbench_schemas
from tests.conftest import case, entry, jsonl
from tests.postgres_server import as_server_user, server_binaries, throwaway_server

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


def bench_project(pytester: pytest.Pytester, layer: str = "tsvector") -> None:
    """Two content types, two cases each; "sigma" is the query an engine below waits in."""
    folder = pytester.path / "bench_fixtures"
    folder.mkdir()
    for content_type, prefix in (("markdown", "md"), ("json", "js")):
        entries = [
            entry(
                f"{prefix}_a",
                "alpha beta\n\ngamma delta",
                [case(f"{prefix}_a_q1", "alpha", ["alpha beta"], layer=layer)],
                content_type=content_type,
            ),
            entry(
                f"{prefix}_b",
                "omega kappa\n\nsigma theta",
                [case(f"{prefix}_b_q1", "sigma", ["sigma theta"], layer=layer)],
                content_type=content_type,
            ),
        ]
        (folder / f"{content_type}.jsonl").write_text(jsonl(entries), encoding="utf-8")
    pytester.makeini("[pytest]\n")


def tantivy_directories(temporary: Path) -> list[Path]:
    return sorted(temporary.glob("qualbench-tantivy-*"))


@pytest.mark.parametrize("engine", ["postgres", "tantivy"])
def test_a_two_worker_run_leaves_no_schema_and_no_directory(
    pytester: pytest.Pytester,
    fresh_database: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
    engine: str,
) -> None:
    pytest.importorskip("xdist")
    bench_project(pytester, engine if engine == "tantivy" else "tsvector")
    temporary = tmp_path_factory.mktemp("tmpdir")
    monkeypatch.setenv("TMPDIR", str(temporary))
    monkeypatch.setenv("QUALBENCH_POSTGRES_DSN", fresh_database)
    result = pytester.runpytest_subprocess(
        "--qualbench", "-n", "2", f"--qualbench-engine={engine}", timeout=240
    )
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()
    assert len(read_report(pytester)["cases"]) == 4
    assert qualbench_schemas(fresh_database) == []
    assert tantivy_directories(temporary) == []


# Searching "sigma" touches $SEARCHING, then waits: for $GO to exist, or for a signal.
WAITING_ENGINE = """
import os, time
from pytest_qualbench.adapters.postgres import PostgresEngine

class Waiting(PostgresEngine):
    def search(self, query, **options):
        if query == "sigma":
            open(os.environ["SEARCHING"], "w").close()
            deadline = time.monotonic() + 120
            while not os.path.exists(os.environ["GO"]) and time.monotonic() < deadline:
                time.sleep(0.05)
        return super().search(query, **options)
"""


def start_run(
    pytester: pytest.Pytester, dsn: str, *args: str
) -> tuple[subprocess.Popen[str], Path, Path]:
    """`pytest --qualbench` with the waiting engine, as its own process; its marker files."""
    pytester.makepyfile(waiting=WAITING_ENGINE)
    searching, go = pytester.path / "searching", pytester.path / "go"
    env = {
        **os.environ,
        "QUALBENCH_POSTGRES_DSN": dsn,
        "SEARCHING": str(searching),
        "GO": str(go),
        "PYTHONPATH": os.pathsep.join([str(pytester.path), os.environ.get("PYTHONPATH", "")]),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--qualbench", "--qualbench-engine=waiting:Waiting",
         "-p", "no:cacheprovider", *args],
        cwd=pytester.path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    return process, searching, go


def wait_for(path: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 180
    while not path.exists():
        assert process.poll() is None, process.communicate()[0]
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


def read_report(pytester: pytest.Pytester, name: str = "report.json") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((pytester.path / ".qualbench" / name).read_text())
    return data


def test_sigterm_writes_the_partial_report_and_drops_the_schema(
    pytester: pytest.Pytester, fresh_database: str
) -> None:
    bench_project(pytester)
    process, searching, _ = start_run(pytester, fresh_database)
    wait_for(searching, process)
    os.kill(process.pid, signal.SIGTERM)
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGTERM, output
    assert "Traceback" not in output
    assert "partial report (complete: false)" in output
    partial = read_report(pytester, "report.partial.json")
    assert partial["complete"] is False
    assert not (pytester.path / ".qualbench" / "report.json").exists()
    assert qualbench_schemas(fresh_database) == []


def test_a_server_stopped_mid_run_gives_one_warning_line_not_a_traceback(
    pytester: pytest.Pytester,
) -> None:
    binaries = server_binaries()
    if binaries is None:
        pytest.skip("no PostgreSQL server binaries here: apt-get install postgresql")
    bench_project(pytester)
    with throwaway_server(binaries) as dsn:
        process, searching, go = start_run(pytester, dsn)
        wait_for(searching, process)
        data = Path(str(conninfo_to_dict(dsn)["host"] or "")) / "data"
        stop = [str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]
        subprocess.run(as_server_user(stop), check=True, capture_output=True)
        go.touch()
        output, _ = process.communicate(timeout=180)
    assert process.returncode == pytest.ExitCode.TESTS_FAILED, output
    warnings = [line for line in output.splitlines() if "could not be closed" in line]
    assert len(warnings) == 1, output
    assert warnings[0].startswith("qualbench warning: an engine could not be closed: ")
    assert "pytest_unconfigure" not in output
    assert "INTERNALERROR" not in output
    assert len(read_report(pytester)["cases"]) == 4
