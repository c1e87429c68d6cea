"""An engine that cannot start is a usage error: one message, before any case, nothing written.

The engine's factory or its `index()` raising for a content type (a server down,
a wrong option, a broken index) is no case's failure: every case of the type
would fail the same way, each with the same traceback, and the report would
hold zeros as if measured. The run stops before the cases instead, naming the
engine, the content type, the cause and the fix, and writes no report.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_qualbench.cli.qualbench import main as qualbench
from tests.conftest import case, entry, jsonl

BROKEN_INDEX = """
class Broken:
    def index(self, entries):
        raise OSError("cannot open index")

    def search(self, query, *, limit=10, kinds=()):
        return []
"""

BROKEN_FACTORY = """
class Broken:
    def __init__(self):
        raise ConnectionRefusedError("search service at localhost:9200 refused the connection")

    def index(self, entries):
        pass

    def search(self, query, *, limit=10, kinds=()):
        return []
"""

FIXTURES = {
    "markdown.jsonl": [
        entry("md_001", "# Alpha\n\nalpha beta", [case("md_001_q1", "alpha", ["alpha"])]),
        entry(
            "md_002",
            "gamma delta",
            [case("md_002_q1", "gamma", ["gamma"]), case("md_002_q_neg", "xuakxyph", [])],
        ),
    ],
    "json.jsonl": [
        entry(
            "json_001",
            '{"port": 8080}',
            [case("json_001_q1", "port", ["8080"])],
            content_type="json",
        )
    ],
}


def write_project(root: Path, engine_source: str) -> None:
    (root / "startup_broken.py").write_text(engine_source)
    (root / "pytest.ini").write_text("[pytest]\nqualbench_engine = startup_broken:Broken\n")
    (root / "bench_fixtures").mkdir(exist_ok=True)
    for name, entries in FIXTURES.items():
        (root / "bench_fixtures" / name).write_text(jsonl(entries))


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    write_project(pytester.path, BROKEN_INDEX)
    pytester.syspathinsert()
    return pytester


def assert_one_usage_error(result: pytest.RunResult, *expected: str) -> None:
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    errors = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert len(errors) == 1, result.stderr.str()
    text = result.stderr.str()
    for part in expected:
        assert part in text, text
    output = result.stdout.str() + text
    assert "Traceback" not in output
    assert "_pytest" not in output
    assert " passed" not in output and " failed" not in output


def test_an_index_that_raises_stops_the_run_before_any_case(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess("--qualbench")
    assert_one_usage_error(
        result,
        "ERROR: qualbench: engine startup_broken:Broken could not start for json",
        "OSError: cannot open index",
        "raised at startup_broken.py:4, in index",
        "fix:",
        "no case ran and no report was written",
    )
    assert len(result.stdout.lines + result.stderr.lines) <= 20, result.stdout.str()
    assert not (project.path / ".qualbench" / "report.json").exists()
    assert not (project.path / ".qualbench" / "report.partial.json").exists()


def test_a_factory_that_raises_stops_the_run_and_keeps_the_last_report(
    project: pytest.Pytester,
) -> None:
    report = project.path / ".qualbench" / "report.json"
    report.parent.mkdir()
    report.write_text('{"the last good run": true}\n')
    (project.path / "startup_broken.py").write_text(BROKEN_FACTORY)
    result = project.runpytest_subprocess("--qualbench")
    assert_one_usage_error(
        result,
        "engine startup_broken:Broken could not start for json",
        "ConnectionRefusedError: search service at localhost:9200 refused the connection",
        "raised at startup_broken.py:4, in __init__",
    )
    assert report.read_text() == '{"the last good run": true}\n'
    assert sorted(path.name for path in report.parent.iterdir() if path.suffix == ".json") == [
        "report.json"
    ]


def test_under_xdist_a_workers_failed_start_is_the_same_usage_error(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest_subprocess("--qualbench", "-p", "xdist", "-n", "2")
    assert_one_usage_error(
        result,
        "engine startup_broken:Broken could not start for ",
        "OSError: cannot open index",
        "no case ran and no report was written",
    )
    assert not (project.path / ".qualbench" / "report.json").exists()
    assert not (project.path / ".qualbench" / "report.partial.json").exists()


@pytest.fixture
def forget_engine_module() -> Iterator[None]:
    """The commands import the engine into this process, not a pytester run's: forget it."""
    yield
    sys.modules.pop("startup_broken", None)


@pytest.mark.usefixtures("forget_engine_module")
@pytest.mark.parametrize(
    ("command", "content_type"),
    [
        (["show", "md_001_q1"], "markdown"),
        (
            ["case", "bench_fixtures/markdown.jsonl", "md_001", "beta", "--needle", "alpha beta"],
            "markdown",
        ),
        # lint starts the engine for every content type, in order: json comes first.
        (["lint", "--engine", "startup_broken:Broken"], "json"),
    ],
)
def test_the_authoring_commands_give_the_same_one_message(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
    content_type: str,
) -> None:
    write_project(tmp_path, BROKEN_INDEX)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = (tmp_path / "bench_fixtures" / "markdown.jsonl").read_bytes()
    assert qualbench(command) == 2
    captured = capsys.readouterr()
    assert f"engine startup_broken:Broken could not start for {content_type}:" in captured.err
    assert "OSError: cannot open index" in captured.err
    assert "Traceback" not in captured.out + captured.err
    assert len((captured.out + captured.err).splitlines()) <= 6, captured.out + captured.err
    assert (tmp_path / "bench_fixtures" / "markdown.jsonl").read_bytes() == before
