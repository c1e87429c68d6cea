"""Report output survives hostile conditions: a crash mid-write, hostile fixture text.

A crash while writing never leaves a partial report or a stray temporary file.
"""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from pytest_qualbench.report import writing as report_module
from pytest_qualbench.report.writing import write_report
from tests.conftest import WriteFixture, case, entry

PREVIOUS = {"dataset_hash": "sha256:previous", "cases": []}
NEXT = {"dataset_hash": "sha256:next", "cases": [{"case_id": "x" * 1000}]}


@pytest.fixture
def target(tmp_path: Path) -> Path:
    path = tmp_path / "out" / "report.json"
    write_report(path, PREVIOUS)
    return path


def assert_previous_report_intact(target: Path) -> None:
    assert json.loads(target.read_text(encoding="utf-8")) == PREVIOUS
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.json"]


class HalfWritingStream(io.StringIO):
    """Accepts half of what it is given, then fails as a full disk would."""

    def __init__(self, real: Any) -> None:
        super().__init__()
        self.real = real

    def write(self, text: str) -> int:
        self.real.write(text[: len(text) // 2])
        self.real.flush()
        raise OSError(28, "No space left on device")

    def close(self) -> None:
        self.real.close()
        super().close()


def test_serialising_crash_keeps_the_previous_report(
    target: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_dumps(*args: Any, **kwargs: Any) -> str:
        raise TypeError("Object of type Engine is not JSON serializable")

    monkeypatch.setattr(f"{report_module.__name__}.json.dumps", broken_dumps)
    with pytest.raises(TypeError):
        write_report(target, NEXT)
    assert_previous_report_intact(target)


def test_crash_halfway_through_the_write_keeps_the_previous_report(
    target: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fdopen = os.fdopen

    def half_writing_fdopen(descriptor: int, *args: Any, **kwargs: Any) -> HalfWritingStream:
        return HalfWritingStream(real_fdopen(descriptor, *args, **kwargs))

    monkeypatch.setattr(os, "fdopen", half_writing_fdopen)
    with pytest.raises(OSError, match="No space left"):
        write_report(target, NEXT)
    assert_previous_report_intact(target)


def test_interrupt_during_the_write_keeps_the_previous_report(
    target: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted_replace(source: str, destination: Path) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted_replace)
    with pytest.raises(KeyboardInterrupt):
        write_report(target, NEXT)
    assert_previous_report_intact(target)


def test_report_file_gets_the_usual_permissions(tmp_path: Path) -> None:
    previous_umask = os.umask(0o022)
    try:
        write_report(tmp_path / "report.json", PREVIOUS)
    finally:
        os.umask(previous_umask)
    assert stat.S_IMODE((tmp_path / "report.json").stat().st_mode) == 0o644


SURROGATE_ENGINE = """
from pytest_qualbench.engine.types import Result

class FileNameEngine:
    '''Titles from os.fsdecode: undecodable bytes in a file name become lone surrogates.'''

    def index(self, entries):
        self._entries = list(entries)

    def search(self, query, *, limit=10, kinds=()):
        return [Result("alpha text", "porter", "notes-\\udcff.md")]
"""


def test_a_lone_surrogate_from_a_custom_engine_does_not_lose_the_report(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    pytester.makepyfile(filenameengine=SURROGATE_ENGINE)
    pytester.syspathinsert()
    # The case fails (wrong layer), so the report carries its top results and their titles.
    write_fixture(
        "markdown.jsonl",
        [entry("md_001", "alpha text", [case("md_001_q1", "alpha", ["alpha"], layer="trigram")])],
    )
    result = pytester.runpytest("--qualbench", "--qualbench-engine=filenameengine:FileNameEngine")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert (pytester.path / ".qualbench/report.json").exists()


def test_html_page_crash_halfway_keeps_the_previous_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_qualbench.report import html as html_report

    page = tmp_path / "report.html"
    html_report.write_html(page, "<p>previous</p>")
    real_fdopen = os.fdopen

    def half_writing_fdopen(descriptor: int, *args: Any, **kwargs: Any) -> HalfWritingStream:
        return HalfWritingStream(real_fdopen(descriptor, *args, **kwargs))

    monkeypatch.setattr(os, "fdopen", half_writing_fdopen)
    with pytest.raises(OSError, match="No space left"):
        html_report.write_html(page, "<p>next</p>" * 1000)
    assert page.read_text(encoding="utf-8") == "<p>previous</p>"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_a_pipe_in_a_case_id_stays_inside_its_markdown_table_cell() -> None:
    """qualstat's markdown escapes `|` in cells; a case id with one must not add a column."""
    from pytest_qualbench.compare.diff import compare_reports
    from pytest_qualbench.compare.render import render_comparison

    data = Path(__file__).parent / "data" / "reports"
    reports = [
        json.loads((data / name).read_text(encoding="utf-8"))
        for name in ("base.json", "head_regression.json")
    ]
    for report in reports:
        for record in report["cases"]:
            if record["case_id"] == "pt_002_q2":
                record["case_id"] = "pt|002_q2"
    markdown = render_comparison(compare_reports(*reports), "markdown")
    rows = [line for line in markdown.splitlines() if "002\\_q2" in line and line.startswith("|")]
    assert rows == ["| pt\\|002\\_q2 | - |", "| pt\\|002\\_q2 | 6 | 2 | +0.3333 |"]
