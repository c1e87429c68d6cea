"""The postgres engine that cannot reach its server: one usage error before any case.

Against real servers: the suite's (`tests/postgres_server.py` sets
$QUALBENCH_POSTGRES_DSN), the same one on a port nothing listens on, and one of
its own that asks for a password.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest
from psycopg.conninfo import make_conninfo

from tests.conftest import case, entry, jsonl
from tests.postgres_server import DSN_VARIABLE, server_binaries, throwaway_server

PASSWORD = "right-horse-battery"


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.delenv(DSN_VARIABLE, raising=False)
    (pytester.path / "bench_fixtures").mkdir()
    fixture = [entry("md_001", "# Alpha\n\nalpha beta", [case("md_001_q1", "alpha", ["alpha"])])]
    (pytester.path / "bench_fixtures" / "markdown.jsonl").write_text(jsonl(fixture))
    report = pytester.path / ".qualbench" / "report.json"
    report.parent.mkdir()
    report.write_text('{"the last good run": true}\n')
    return pytester


@pytest.fixture(scope="module")
def password_server() -> Iterator[str]:
    """A throwaway server of this module's own that asks for PASSWORD; its DSN."""
    binaries = server_binaries()
    if binaries is None:
        pytest.skip("no PostgreSQL server here: apt-get install postgresql")
    try:
        with throwaway_server(binaries, password=PASSWORD) as dsn:
            yield dsn
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"PostgreSQL server could not be started: {exc.stderr or exc}")


def run_with_dsn(project: pytest.Pytester, dsn: str | None) -> pytest.RunResult:
    ini = "[pytest]\n" + (f"qualbench_postgres_dsn = {dsn}\n" if dsn is not None else "")
    project.makeini(ini)
    return project.runpytest_subprocess("--qualbench", "--qualbench-engine=postgres")


def assert_stopped_before_the_cases(project: pytest.Pytester, result: pytest.RunResult) -> str:
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    errors = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert len(errors) == 1, result.stderr.str()
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output
    assert len(result.stdout.lines + result.stderr.lines) <= 20, output
    assert "engine postgres could not start for markdown" in errors[0]
    assert (
        "fix: what the cause says, or the engine's settings (ini qualbench_postgres_dsn" in output
    )
    assert "no case ran and no report was written" in output
    assert (
        project.path / ".qualbench" / "report.json"
    ).read_text() == '{"the last good run": true}\n'
    assert not (project.path / ".qualbench" / "report.partial.json").exists()
    return output


def test_no_dsn_names_both_ways_to_give_one(project: pytest.Pytester) -> None:
    output = assert_stopped_before_the_cases(project, run_with_dsn(project, None))
    assert (
        "no server given; set QUALBENCH_POSTGRES_DSN or the ini option qualbench_postgres_dsn"
        in output
    )


def test_a_port_nothing_listens_on(project: pytest.Pytester, postgres_dsn: str) -> None:
    output = assert_stopped_before_the_cases(
        project, run_with_dsn(project, make_conninfo(postgres_dsn, port="1"))
    )
    assert "OperationalError" in output
    assert ".s.PGSQL.1" in output


def test_a_wrong_password(project: pytest.Pytester, password_server: str) -> None:
    wrong = make_conninfo(password_server, password="wrong-horse")
    output = assert_stopped_before_the_cases(project, run_with_dsn(project, wrong))
    assert 'password authentication failed for user "qualbench"' in output
    assert "wrong-horse" not in output


def test_the_right_password_runs_the_cases(project: pytest.Pytester, password_server: str) -> None:
    result = run_with_dsn(project, password_server)
    result.assert_outcomes(passed=1)
