"""`qualbench add`, `case`, `show` and `lint` through main(argv), in a project folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_qualbench.cli.qualbench import main

ECHO_ENGINE = """
from pytest_qualbench.engine.types import Result

class Echo:
    def index(self, entries):
        self.texts = [entry.haystack for entry in entries]

    def search(self, query, *, limit=10, kinds=()):
        return [Result(text, "porter") for text in self.texts[:limit]]
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "pytest.ini").write_text("[pytest]\nqualbench_paths = bench\n")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "install.md").write_text("# Install\n\nRun `pip install widget` first.\n")
    (docs / "tuning.md").write_text("# Tuning\n\nSet `pool_size` to 12 for the widget.\n")
    (tmp_path / "echo.py").write_text(ECHO_ENGINE)
    return tmp_path


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_add_case_show_from_documents_to_a_checked_case(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["add", "docs", "--to", "bench/docs.jsonl"]) == 0
    out = capsys.readouterr().out
    assert "bench/docs.jsonl: 2 entries added" in out
    assert "  md_001     docs/install.md (markdown, 1 chunk)" in out

    status = main(
        ["case", "bench/docs.jsonl", "md_002", "pool size", "--needle", "`pool_size` to 12"]
    )
    out = capsys.readouterr().out
    assert status == 0
    assert (
        "   1. [rrf(porter+trigram)] md_002 | Tuning | # Tuning Set >>>`pool_size` to 12<<< for the widget."
        in out
    )
    assert "added md_002_q1 to bench/docs.jsonl (layer rrf(porter+trigram), ceiling 3)" in out
    assert [case["case_id"] for case in entries(project / "bench/docs.jsonl")[1]["cases"]] == [
        "md_002_q1"
    ]

    assert main(["show", "md_002_q1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("md_002_q1 [markdown] bench/docs.jsonl:2 (entry md_002)\n")
    assert "  rank     pass  rank 1 <= ceiling 3" in out


def test_a_refusal_says_why_and_exits_two(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["add", "docs", "--to", "bench/docs.jsonl"])
    before = (project / "bench/docs.jsonl").read_bytes()
    capsys.readouterr()
    assert main(["case", "bench/docs.jsonl", "md_001", "widget", "--needle", "widget"]) == 2
    assert capsys.readouterr().err == (
        "qualbench case: needle 'widget' also occurs in md_002: a result from there would "
        "count as relevant; choose text only this entry has\n"
    )
    assert (project / "bench/docs.jsonl").read_bytes() == before


def test_a_case_that_fails_as_drafted_is_not_written(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["add", "docs", "--to", "bench/docs.jsonl"])
    before = (project / "bench/docs.jsonl").read_bytes()
    status = main(["case", "bench/docs.jsonl", "md_002", "widget", "--needle", "`pool_size` to 12",
                   "--ceiling", "1", "--engine", "echo:Echo"])  # fmt: skip
    assert status == 1
    assert capsys.readouterr().err == (
        "not written: md_002_q1 fails as drafted (rank 2 > ceiling 1); "
        "if the engine's answer is acceptable, pass --ceiling 2; "
        "if not, keep it as a known failure with --expect-fail REASON\n"
    )
    assert (project / "bench/docs.jsonl").read_bytes() == before


def test_expect_fail_writes_the_failing_case_as_a_known_failure(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["add", "docs", "--to", "bench/docs.jsonl"])
    status = main(["case", "bench/docs.jsonl", "md_002", "widget", "--needle", "`pool_size` to 12",
                   "--ceiling", "1", "--engine", "echo:Echo",
                   "--expect-fail", "the echo engine\nranks it 2nd"])  # fmt: skip
    assert status == 0
    out = capsys.readouterr().out
    assert (
        "added md_002_q1 to bench/docs.jsonl (layer porter, ceiling 1; "
        "known failure: rank (the echo engine ranks it 2nd))"
    ) in out
    written = entries(project / "bench/docs.jsonl")[1]["cases"][0]
    assert written["xfail"] == {"reason": "the echo engine ranks it 2nd", "checks": ["rank"]}
    # The plugin reads it back as the strict known failure it is.
    assert main(["show", "md_002_q1", "--engine", "echo:Echo"]) == 1


def test_expect_fail_refuses_a_case_the_engine_passes(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["add", "docs", "--to", "bench/docs.jsonl"])
    before = (project / "bench/docs.jsonl").read_bytes()
    status = main(["case", "bench/docs.jsonl", "md_002", "pool size", "--needle",
                   "`pool_size` to 12", "--expect-fail", "flaky"])  # fmt: skip
    assert status == 2
    assert capsys.readouterr().err == (
        "qualbench case: the engine passes this case, so it is no known failure: "
        "drop --expect-fail\n"
    )
    assert (project / "bench/docs.jsonl").read_bytes() == before


def test_the_configured_engine_is_used_and_a_bad_one_is_a_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "pytest.ini").write_text(
        "[pytest]\nqualbench_paths = bench\nqualbench_engine = echo:Echo\n"
    )
    main(["add", "docs", "--to", "bench/docs.jsonl"])
    capsys.readouterr()
    assert main(["case", "bench/docs.jsonl", "md_001", "xuakxyph", "--negative"]) == 2
    assert "returns 2 result(s) from the engine" in capsys.readouterr().err
    assert main(["show", "md_001_q1", "--engine", "nowhere:Engine"]) == 2
    assert "engine 'nowhere:Engine': cannot import 'nowhere'" in capsys.readouterr().err


def test_engine_options_reach_the_commands_and_a_bad_one_is_a_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["add", "docs", "--to", "bench/docs.jsonl"])
    capsys.readouterr()
    assert main(["lint", "--engine-option", "fuzzy=fallback"]) == 0
    assert main(["lint", "--engine-option", "k9=1"]) == 2
    assert (
        "engine option 'k9': pytest_qualbench.engine:Engine accepts b," in capsys.readouterr().err
    )


def test_lint_checks_negatives_with_the_configured_engine(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["add", "docs", "--to", "bench/docs.jsonl"])
    main(["case", "bench/docs.jsonl", "md_001", "xuakxyph", "--negative"])
    capsys.readouterr()
    assert main(["lint"]) == 0
    assert "the engine returns" not in capsys.readouterr().out
    main(["lint", "--engine", "echo:Echo"])
    assert "negative case md_001_q_neg: the engine returns 2 result(s)" in capsys.readouterr().out


def test_help_names_every_authoring_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for command in ("add", "case", "show", "lint", "import"):
        assert command in out
