"""Bad input is refused where it is, and the rest of the benchmark still runs.

Issue 16: input that used to be accepted (and so made cases match everything or
look equal when they are not), input that broke the whole session, and input
whose parsing took super-linear time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import WriteFixture, case, entry, jsonl

GOOD = [
    entry("md_a", "alpha beta\n\ngamma delta", [case("md_a_q1", "alpha", ["alpha beta"])]),
    entry("md_b", "omega kappa\n\nsigma theta", [case("md_b_q1", "sigma", ["sigma theta"])]),
]


@pytest.mark.usefixtures("word_engine")
def test_whitespace_only_needle_is_an_error_naming_file_line_field(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    bad = entry("md_c", "iota rho", [case("md_c_q1", "iota", ["iota", " \t "])])
    write_fixture("markdown.jsonl", [*GOOD, bad])
    result = pytester.runpytest("--qualbench")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*markdown.jsonl:3: cases[[]0[]].needles[[]1[]]: *whitespace*"])


@pytest.mark.usefixtures("word_engine")
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("case_id", "md_c\u200b_q1"),  # zero-width space
        ("case_id", "md_c_q1\u202e"),  # right-to-left override
        ("id", "md_\u2066c"),  # left-to-right isolate
        ("id", "md_c\ufeff"),  # zero-width no-break space
    ],
)
def test_invisible_or_bidi_characters_in_ids_are_errors(
    pytester: pytest.Pytester, write_fixture: WriteFixture, field: str, value: str
) -> None:
    bad = entry("md_c", "iota rho", [case("md_c_q1", "iota", ["iota rho"])])
    if field == "id":
        bad["id"] = value
    else:
        bad["cases"][0]["case_id"] = value
    write_fixture("markdown.jsonl", [*GOOD, bad])
    result = pytester.runpytest("--qualbench")
    result.assert_outcomes(passed=2, errors=1)
    shown = field if field == "id" else "cases[[]0[]].case_id"
    result.stdout.fnmatch_lines([f"*markdown.jsonl:3: {shown}: *invisible*"])


@pytest.mark.usefixtures("word_engine")
def test_cr_only_line_endings_get_a_clear_message(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    path = write_fixture("markdown.jsonl", GOOD)
    path.write_bytes(jsonl(GOOD).replace("\n", "\r").encode())
    result = pytester.runpytest("--qualbench")
    result.stdout.fnmatch_lines(["*markdown.jsonl:1: *CR*line endings*"])


@pytest.mark.usefixtures("word_engine")
def test_unreadable_fixture_file_is_one_error_item_and_the_rest_runs(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write_fixture("markdown.jsonl", GOOD)
    broken = pytester.path / "bench_fixtures" / "unreadable.jsonl"
    if os.geteuid() == 0:
        # Root reads any file whatever its mode; reading this one fails with EIO.
        broken.symlink_to("/proc/self/mem")
    else:
        broken.write_text(jsonl(GOOD))
        broken.chmod(0)
    result = pytester.runpytest("--qualbench")
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=2, errors=1)
    # The error names the file (as the symlink's target when it is one) and the reason.
    result.stdout.fnmatch_lines(["*cannot read*"])
    assert "unreadable.jsonl" in result.stdout.str()
    report = json.loads((pytester.path / ".qualbench" / "report.json").read_text())
    assert report["overall"]["cases"] == 2


@pytest.mark.usefixtures("word_engine")
def test_symlink_loops_under_the_fixture_path_collect_each_file_once(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write_fixture("markdown.jsonl", GOOD)
    folder = pytester.path / "bench_fixtures"
    (folder / "loop").symlink_to(folder, target_is_directory=True)
    (folder / "again").symlink_to(folder, target_is_directory=True)
    result = pytester.runpytest_subprocess("--qualbench", timeout=60)
    result.assert_outcomes(passed=2)


@pytest.mark.usefixtures("word_engine")
def test_several_fixture_files_named_on_the_command_line_are_each_collected(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    # pytest collects a directory once per argument inside it: the second visit of
    # a file by the same path is no symlinked duplicate and must not be dropped.
    write_fixture("markdown.jsonl", GOOD)
    write_fixture(
        "plaintext.jsonl",
        [
            entry(
                "txt_a",
                "lorem ipsum",
                [case("txt_a_q1", "lorem", ["lorem"])],
                content_type="plaintext",
            )
        ],
    )
    result = pytester.runpytest(
        "--qualbench", "bench_fixtures/markdown.jsonl", "bench_fixtures/plaintext.jsonl"
    )
    result.assert_outcomes(passed=3)
    assert "not found" not in result.stdout.str()


# ---------------------------------------------------------------- linear regexes


# Indexes one fixture file with the built-in engine and prints the CPU seconds it took.
INDEX_TIMER = """
import sys, time
from pathlib import Path
from pytest_qualbench.engine import Engine
from pytest_qualbench.fixtures.loading import load_fixture_file

entries = load_fixture_file(Path(sys.argv[1])).entries
started = time.process_time()
Engine().index(entries)
print(time.process_time() - started)
"""


def test_markdown_heading_of_many_spaces_chunks_in_linear_time(tmp_path: Path) -> None:
    # 60,000 spaces before a non-closing "#": the quadratic heading regex needed about
    # 36 s of CPU for this line (3.9 s for 20,000). CPU time, so a loaded machine
    # does not fail the test; the bound is generous against a linear parse's milliseconds.
    heading = "# a" + " " * 60_000 + "#x"
    fixture = tmp_path / "markdown.jsonl"
    fixture.write_text(
        jsonl([entry("md_a", heading + "\n\nalpha beta", [case("md_a_q1", "alpha", ["alpha"])])])
    )
    completed = subprocess.run(
        [sys.executable, "-c", INDEX_TIMER, str(fixture)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert float(completed.stdout) < 10.0


def test_trec_import_of_an_unclosed_docno_runs_in_linear_time(tmp_path: Path) -> None:
    docs = tmp_path / "docs.txt"
    docs.write_text(
        "<DOC><DOCNO>d1</DOCNO><TEXT>alpha beta</TEXT></DOC>\n"
        "<DOC><DOCNO>" + " " * 20_000 + "</DOC>\n" + "<DOC>" * 20_000 + "\n"
    )
    topics = tmp_path / "topics.txt"
    topics.write_text("<top><num> Number: 1\n<title> alpha\n</top>\n" + "<top>" * 20_000)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 d1 1\n")
    # A subprocess, so a super-linear regex fails on the timeout instead of hanging the suite.
    completed = subprocess.run(
        [
            str(Path(sys.executable).with_name("qualbench")),
            "import",
            "trec",
            "--docs",
            str(docs),
            "--topics",
            str(topics),
            "--qrels",
            str(qrels),
            "-o",
            str(tmp_path / "out.jsonl"),
        ],
        capture_output=True,
        text=True,
        # Linear: a few seconds with start-up on a loaded machine; cubic: hours.
        timeout=120,
        check=False,
    )
    assert "Traceback" not in completed.stderr
