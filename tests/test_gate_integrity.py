"""The gate cannot be defeated silently: reports are written safely, floors speak up.

Issue 16: each test here reproduces a way a run passed, lost its report or
overwrote someone's file, driven through a real `pytest --qualbench` session.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import WriteFixture, case, entry

TWO_CASES = [
    entry("md_a", "alpha beta\n\ngamma delta", [case("md_a_q1", "alpha", ["alpha beta"])]),
    entry("md_b", "omega kappa\n\nsigma theta", [case("md_b_q1", "sigma", ["sigma theta"])]),
]

# An engine that finds nothing: every positive case fails.
EMPTY_ENGINE = """
import wordengine

class Empty(wordengine.WordEngine):
    def search(self, query, *, limit=10, kinds=()):
        return []
"""


@pytest.fixture
def bench(write_fixture: WriteFixture, word_engine: None) -> Path:
    return write_fixture("markdown.jsonl", TWO_CASES)


def strict_json(path: Path) -> Any:
    """Parse as JSON proper: NaN and Infinity are not JSON."""

    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


# ---------------------------------------------------------------- results that pass wrongly


@pytest.mark.usefixtures("bench")
def test_compare_with_the_default_report_path_never_compares_the_run_with_itself(
    pytester: pytest.Pytester,
) -> None:
    pytester.runpytest("--qualbench").assert_outcomes(passed=2)
    baseline = pytester.path / ".qualbench" / "report.json"
    before = baseline.read_bytes()
    pytester.makepyfile(empty=EMPTY_ENGINE)
    result = pytester.runpytest(
        "--qualbench",
        "--qualbench-engine=empty:Empty",
        "--qualbench-checks=negative",
        "--qualbench-compare=.qualbench/report.json",
    )
    assert "no regression" not in result.stdout.str()
    assert result.ret != pytest.ExitCode.OK
    # Either the baseline was read before the run replaced it (and the comparison
    # found the regressions) or the run refused to overwrite its own baseline.
    if baseline.read_bytes() != before:
        result.stdout.fnmatch_lines(["*metrics beyond their rule*"])


@pytest.mark.usefixtures("bench")
def test_floor_on_a_content_type_the_fixture_set_lacks_is_a_usage_error(
    pytester: pytest.Pytester,
) -> None:
    result = pytester.runpytest("--qualbench", "--qualbench-floor=json.mrr:0.9")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "json" in result.stderr.str()
    assert "no json cases" in result.stderr.str() or "no cases" in result.stderr.str()


@pytest.mark.usefixtures("bench")
def test_failing_floor_ends_on_a_red_line_naming_it_not_n_passed(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(empty=EMPTY_ENGINE)
    result = pytester.runpytest(
        "--qualbench",
        "--qualbench-engine=empty:Empty",
        "--qualbench-checks=negative",
        "--qualbench-floor=mrr:0.9",
        "--color=yes",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    last = result.stdout.lines[-1]
    assert "mrr" in last
    assert "floor" in last.lower()
    assert not re.search(r"\d+ passed", last)
    # ANSI red (31) on the final line.
    assert "\x1b[31" in last or "\x1b[1;31" in last


def _project_elsewhere(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path]:
    """A project with a failing floor in its ini, and a fixture folder outside it."""
    project = pytester.mkdir("project")
    (project / "pytest.ini").write_text(
        "[pytest]\nqualbench_engine = wordengine:WordEngine\nqualbench_floors = mrr:0.99\n"
    )
    (project / "wordengine.py").write_text((pytester.path / "wordengine.py").read_text())
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    lines = [
        entry("md_a", "alpha beta", [case("md_a_q1", "alpha", ["alpha beta"])]),
        entry("md_b", "eta theta", [case("md_b_q1", "missing words", ["eta theta"])]),
    ]
    (elsewhere / "markdown.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return project, elsewhere


@pytest.mark.usefixtures("word_engine")
def test_fixture_path_elsewhere_does_not_silently_drop_the_projects_floors(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    project, elsewhere = _project_elsewhere(pytester, tmp_path_factory)
    floor_applied, warned, output = _floors_kept_or_warned(project, str(elsewhere))
    assert floor_applied or warned, output


@pytest.mark.usefixtures("word_engine")
def test_report_option_with_a_space_does_not_silently_drop_the_projects_floors(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    project, elsewhere = _project_elsewhere(pytester, tmp_path_factory)
    (project / "bench_fixtures").mkdir()
    (project / "bench_fixtures" / "markdown.jsonl").write_text(
        (elsewhere / "markdown.jsonl").read_text()
    )
    out = tmp_path_factory.mktemp("out")
    (out / "r.json").write_text("{}")
    floor_applied, warned, output = _floors_kept_or_warned(
        project, "--qualbench-report", str(out / "r.json")
    )
    assert floor_applied or warned, output


def _floors_kept_or_warned(project: Path, *args: str) -> tuple[bool, bool, str]:
    """Run `pytest --qualbench ARGS` in `project`: was its floor applied, was it warned?

    Either the project's floor is applied (and fails the run), or the run says loudly
    that the project's configuration was not read.
    """
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "--qualbench", "-p", "no:cacheprovider", *args],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(project)},
        timeout=120,
        check=False,
    )
    output = completed.stdout + completed.stderr
    floor_applied = "mrr" in output and "floor" in output and completed.returncode != 0
    warned = "pytest.ini" in output and "not" in output and "qualbench" in output
    return floor_applied, warned, output


# ---------------------------------------------------------------- report targets


@pytest.mark.usefixtures("bench")
def test_report_path_that_is_not_a_regular_file_is_refused_untouched(
    pytester: pytest.Pytester,
) -> None:
    # A FIFO stands in for /dev/null: both are special files atomic renaming would replace.
    fifo = pytester.path / "pipe.json"
    os.mkfifo(fifo)
    result = pytester.runpytest("--qualbench", f"--qualbench-report={fifo}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert "regular file" in result.stderr.str()


@pytest.mark.usefixtures("bench")
def test_html_path_that_is_not_a_regular_file_is_refused_untouched(
    pytester: pytest.Pytester,
) -> None:
    fifo = pytester.path / "pipe.html"
    os.mkfifo(fifo)
    result = pytester.runpytest("--qualbench", f"--qualbench-html={fifo}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


@pytest.mark.usefixtures("bench")
def test_symlinked_report_path_writes_its_target_and_keeps_the_link(
    pytester: pytest.Pytester,
) -> None:
    target = pytester.path / "real" / "report.json"
    target.parent.mkdir()
    target.write_text("{}")
    link = pytester.path / "link.json"
    link.symlink_to(target)
    pytester.runpytest("--qualbench", "--qualbench-report=link.json").assert_outcomes(passed=2)
    assert link.is_symlink()
    assert strict_json(target)["overall"]["cases"] == 2


@pytest.mark.usefixtures("bench")
@pytest.mark.parametrize("option", ["--qualbench-report", "--qualbench-html"])
def test_output_over_a_fixture_file_is_refused(pytester: pytest.Pytester, option: str) -> None:
    fixture = pytester.path / "bench_fixtures" / "markdown.jsonl"
    before = fixture.read_bytes()
    result = pytester.runpytest("--qualbench", f"{option}=bench_fixtures/markdown.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert fixture.read_bytes() == before
    assert "fixture" in result.stderr.str()


@pytest.mark.usefixtures("bench")
def test_html_over_the_baseline_or_the_report_is_refused(pytester: pytest.Pytester) -> None:
    pytester.runpytest("--qualbench", "--qualbench-report=base.json").assert_outcomes(passed=2)
    baseline = pytester.path / "base.json"
    before = baseline.read_bytes()
    over_baseline = pytester.runpytest(
        "--qualbench",
        "--qualbench-report=head.json",
        "--qualbench-compare=base.json",
        "--qualbench-html=base.json",
    )
    assert over_baseline.ret == pytest.ExitCode.USAGE_ERROR
    assert baseline.read_bytes() == before
    over_report = pytester.runpytest(
        "--qualbench", "--qualbench-report=head.json", "--qualbench-html=head.json"
    )
    assert over_report.ret == pytest.ExitCode.USAGE_ERROR
    assert not (pytester.path / "head.json").exists()


# ---------------------------------------------------------------- unfinished runs

# Writes "started" when the second case begins, then waits to be interrupted.
WAITING_ENGINE = """
import pathlib, time
import wordengine

class Waiting(wordengine.WordEngine):
    def search(self, query, *, limit=10, kinds=()):
        if query == "sigma":
            pathlib.Path("started").write_text("yes")
            time.sleep(60)
        return super().search(query, limit=limit, kinds=kinds)
"""


@pytest.mark.usefixtures("bench")
def test_sigint_mid_run_keeps_the_complete_report_and_marks_the_partial_one(
    pytester: pytest.Pytester,
) -> None:
    pytester.runpytest("--qualbench").assert_outcomes(passed=2)
    report = pytester.path / ".qualbench" / "report.json"
    complete = report.read_bytes()
    pytester.makepyfile(waiting=WAITING_ENGINE)
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--qualbench", "--qualbench-engine=waiting:Waiting"],
        cwd=pytester.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONPATH": str(pytester.path)},
        # A CI script's background job inherits SIGINT ignored, and Python then
        # never raises KeyboardInterrupt: the child gets the default disposition.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while not (pytester.path / "started").exists():
        assert process.poll() is None, process.communicate()[0]
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGINT)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == pytest.ExitCode.INTERRUPTED
    assert report.read_bytes() == complete
    partial = strict_json(pytester.path / ".qualbench" / "report.partial.json")
    assert partial["complete"] is False
    assert "partial" in output


# Raises out of a reporting hook after the first case: pytest ends on INTERNALERROR.
FAILING_HOOK = """
def pytest_runtest_logfinish(nodeid, location):
    if nodeid.endswith("md_a_q1"):
        raise RuntimeError("planted internal error")
"""


@pytest.mark.usefixtures("bench")
def test_internal_error_keeps_the_complete_report_and_marks_the_partial_one(
    pytester: pytest.Pytester,
) -> None:
    pytester.runpytest("--qualbench").assert_outcomes(passed=2)
    report = pytester.path / ".qualbench" / "report.json"
    complete = report.read_bytes()
    pytester.makeconftest(FAILING_HOOK)
    result = pytester.runpytest_subprocess("--qualbench")
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    # Some cases ran and none is missing from pytest's view: only the exit status
    # says the other case never did. Its absence must not read as a subset run.
    assert report.read_bytes() == complete
    partial = strict_json(pytester.path / ".qualbench" / "report.partial.json")
    assert partial["complete"] is False
    assert [row["case_id"] for row in partial["cases"]] == ["md_a_q1"]
    result.stdout.fnmatch_lines(["*run did not finish (internal error)*"])


@pytest.mark.usefixtures("bench")
def test_run_where_nothing_ran_does_not_leave_the_old_report_looking_current(
    pytester: pytest.Pytester,
) -> None:
    pytester.runpytest("--qualbench").assert_outcomes(passed=2)
    complete = (pytester.path / ".qualbench" / "report.json").read_bytes()
    result = pytester.runpytest("--qualbench", "-k", "no_such_case")
    assert (pytester.path / ".qualbench" / "report.json").read_bytes() == complete
    partial = strict_json(pytester.path / ".qualbench" / "report.partial.json")
    assert partial["complete"] is False
    assert partial["cases"] == []
    result.stdout.fnmatch_lines(["*no case ran*"])


@pytest.mark.usefixtures("bench")
def test_a_fixture_path_that_does_not_exist_writes_no_report(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--qualbench", "bench_fixtures/nope.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: file or directory not found: bench_fixtures/nope.jsonl"])
    assert not (pytester.path / ".qualbench").exists()


# ---------------------------------------------------------------- strict, unlosable reports

CONFIG_ENGINE = """
import wordengine

class NanConfig(wordengine.WordEngine):
    config = {{"weight": float("nan"), "cap": float("inf"), "kinds": {{"a", "b"}}, "x": {extra}}}
"""


@pytest.mark.usefixtures("bench")
def test_engine_config_with_nan_and_a_set_gives_strict_json_and_a_warning(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(nanconfig=CONFIG_ENGINE.format(extra="object()"))
    result = pytester.runpytest(
        "--qualbench", "--qualbench-engine=nanconfig:NanConfig", "-W", "default"
    )
    result.assert_outcomes(passed=2)
    config = strict_json(pytester.path / ".qualbench" / "report.json")["metadata"]["engine"][
        "config"
    ]
    assert config["weight"] is None
    assert config["cap"] is None
    assert isinstance(config["kinds"], str)
    assert isinstance(config["x"], str)
    result.stdout.fnmatch_lines(["*not JSON*"])


NON_STR_ENGINE = """
from pytest_qualbench.engine.types import Result
import wordengine

class NonStr(wordengine.WordEngine):
    def search(self, query, *, limit=10, kinds=()):
        return [Result(12345, "porter", "s", 1.0, "s", 0)]
"""


@pytest.mark.usefixtures("bench")
def test_engine_returning_non_str_text_keeps_the_report(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(nonstr=NON_STR_ENGINE)
    result = pytester.runpytest("--qualbench", "--qualbench-engine=nonstr:NonStr")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    report = strict_json(pytester.path / ".qualbench" / "report.json")
    assert len(report["cases"]) == 2


HUGE_ENGINE = """
from pytest_qualbench.engine.types import Result
import wordengine

class Huge(wordengine.WordEngine):
    def search(self, query, *, limit=10, kinds=()):
        return [Result("alpha beta sigma theta " + "x" * 1_200_000, "porter", "s", 1.0, "s", 0)]
"""


@pytest.mark.usefixtures("bench")
def test_result_of_a_million_characters_keeps_the_report(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(huge=HUGE_ENGINE)
    result = pytester.runpytest("--qualbench", "--qualbench-engine=huge:Huge")
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    report = strict_json(pytester.path / ".qualbench" / "report.json")
    assert len(report["cases"]) == 2
    assert "token_cost" in report


RANKER = """
class Broken:
    def __init__(self, engine, chunks):
        raise RuntimeError("ranker exploded")
"""


@pytest.mark.usefixtures("bench")
def test_failing_optional_section_records_its_error_and_keeps_the_report(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(brokenranker=RANKER)
    result = pytester.runpytest(
        "--qualbench", "--qualbench-rankers=bm25,brokenranker:Broken", "--qualbench-start-times"
    )
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    report = strict_json(pytester.path / ".qualbench" / "report.json")
    assert "ranker exploded" in json.dumps(report["rankers"])
    assert math.isfinite(report["overall"]["mrr"])
