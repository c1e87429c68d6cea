"""Comparisons lead with what differs between the runs: real report pairs, real engines."""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from pytest_qualbench import __version__
from pytest_qualbench.cli.qualstat import main as qualstat
from pytest_qualbench.compare.diff import compare_reports
from pytest_qualbench.compare.loading import load_report
from pytest_qualbench.compare.render import render_comparison
from tests.conftest import WriteFixture, case, entry

pytest.importorskip("tantivy")

BUILTIN = "--qualbench-engine=builtin"


@pytest.fixture
def runs(pytester: pytest.Pytester, write_fixture: WriteFixture) -> Path:
    """Three reports of one fixture set: built-in, built-in with k1 0.5, tantivy."""
    write_fixture(
        "plaintext.jsonl",
        [
            entry(
                f"txt_{n:03}",
                f"{topic} keeps the service healthy.\n\nUnrelated notes about {other}.",
                [case(f"txt_{n:03}_q1", topic, [topic], layer="any", ceiling=3)],
                content_type="plaintext",
            )
            for n, (topic, other) in enumerate(
                [
                    ("connection pooling", "lunch"),
                    ("garbage collection", "weather"),
                    ("backpressure", "travel"),
                    ("replica lag", "music"),
                ],
                start=1,
            )
        ],
    )
    for name, *options in (
        ("builtin", BUILTIN),
        ("k1", BUILTIN, "--qualbench-engine-option=k1=0.5"),
        ("tantivy", "--qualbench-engine=tantivy"),
    ):
        result = pytester.runpytest("--qualbench", *options, f"--qualbench-report={name}.json")
        result.assert_outcomes(passed=4)
    return pytester.path


def compared(folder: Path, base: str, head: str, fmt: str = "text") -> str:
    return render_comparison(
        compare_reports(load_report(folder / f"{base}.json"), load_report(folder / f"{head}.json")),
        fmt,
    )


def test_an_engine_option_that_changed_comes_before_any_metric(runs: Path) -> None:
    text = compared(runs, "builtin", "k1")
    lines = text.splitlines()
    assert lines[3:7] == [
        "What differs between the runs (3)",
        "---------------------------------",
        "",
        "setting                        base  head",
    ]
    # The option as given, and what the engine's config says it changed.
    assert [line.split() for line in lines[7:10]] == [
        ["engine", "option", "k1", "-", "0.5"],
        ["engine", "config", "porter.bm25_k1", "1.2", "0.5"],
        ["engine", "config", "trigram.bm25_k1", "1.2", "0.5"],
    ]
    assert text.index("What differs") < text.index("overall\n")


def test_another_engine_names_itself_its_options_and_its_library(runs: Path) -> None:
    text = compared(runs, "builtin", "tantivy")
    rows = text[text.index("What differs") : text.index("dataset ")].splitlines()[4:]
    named = {row.split("  ")[0] for row in rows if row}
    assert {"engine", "engine config", "engine config library"} <= named
    engine_row = next(row for row in rows if row.startswith("engine "))
    assert engine_row.split()[1:] == [
        "pytest_qualbench.engine.builtin:Engine",
        "pytest_qualbench.adapters.tantivy:TantivyEngine",
    ]
    # A new engine's config keys are counted on one row, not listed one by one, but
    # each engine's library and version keep theirs.
    config = next(row for row in rows if row.split("  ")[0] == "engine config").split()
    assert int(config[2]) > 0
    assert config[3:] == ["keys", "differ", "(another", "engine)"]
    library = next(row for row in rows if row.startswith("engine config library"))
    assert library.split()[3:] == ["pytest-qualbench", __version__, "tantivy", version("tantivy")]


def test_markdown_lists_what_differs_in_the_comment_summary(runs: Path) -> None:
    markdown = compared(runs, "builtin", "k1", "markdown")
    lines = markdown.splitlines()
    assert lines[2:6] == [
        "### What differs between the runs (3)",
        "",
        "| setting | base | head |",
        "|---|---|---|",
    ]
    assert lines[6] == "| engine option k1 | - | 0.5 |"


def test_the_json_comparison_carries_the_setup(runs: Path) -> None:
    data = json.loads(compared(runs, "builtin", "k1", "json"))
    assert data["setup"] == [
        {"name": "engine option k1", "base": "-", "head": "0.5"},
        {"name": "engine config porter.bm25_k1", "base": "1.2", "head": "0.5"},
        {"name": "engine config trigram.bm25_k1", "base": "1.2", "head": "0.5"},
    ]
    assert data["unrecorded"] == []


def test_the_same_setup_says_so(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert qualstat([str(runs / "k1.json"), str(runs / "k1.json")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[3] == "Same engine, options, libraries, plugin version, dataset and Python."


def test_a_report_from_an_older_plugin_gets_the_rerun_hint(runs: Path) -> None:
    old: dict[str, Any] = json.loads((runs / "builtin.json").read_text())
    for key in ("libraries", "limit", "checks"):
        del old["metadata"][key]
    (runs / "old.json").write_text(json.dumps(old))
    text = compared(runs, "old", "builtin")
    assert (
        "the base report does not record libraries, limit, checks (an older plugin made it): "
        "re-run it with this version to compare them"
    ) in text.splitlines()


def test_the_gate_prints_what_differs_before_its_numbers(
    runs: Path, pytester: pytest.Pytester
) -> None:
    result = pytester.runpytest(
        "--qualbench",
        BUILTIN,
        "--qualbench-engine-option=k1=0.5",
        "--qualbench-limit=5",
        "--qualbench-compare=builtin.json",
    )
    out = result.stdout.str()
    section = out[out.index("- qualbench compare -") :]
    assert section.index("What differs between the runs (4)") < section.index("overall\n")
    result.stdout.fnmatch_lines(
        ["engine option k1 * - * 0.5", "engine config porter.bm25_k1 * 1.2 * 0.5", "limit * 10 * 5"]
    )


def edited_copy(folder: Path, name: str, edit: Callable[[dict[str, Any]], None]) -> str:
    """A copy of report `name` with one value edited: two installed versions of a library
    cannot be had in one environment, so the head report is the base with its version moved."""
    report: dict[str, Any] = json.loads((folder / f"{name}.json").read_text())
    edit(report)
    copy = folder / f"{name}-edited.json"
    copy.write_text(json.dumps(report))
    return str(copy)


def setup_rows(out: str) -> list[list[str]]:
    lines = out.splitlines()
    start = [line.split() for line in lines].index(["setting", "base", "head"]) + 1
    return [line.split() for line in lines[start : lines.index("", start)]]


def set_engine_library(report: dict[str, Any]) -> None:
    report["metadata"]["engine"]["config"]["library"] = "pytest-qualbench 0.0.1"


def set_numpy(report: dict[str, Any]) -> None:
    report["metadata"]["libraries"]["numpy"] = "1.26.4"


@pytest.mark.parametrize(
    ("edit", "row"),
    [
        (
            set_engine_library,
            [
                "engine",
                "config",
                "library",
                "pytest-qualbench",
                __version__,
                "pytest-qualbench",
                "0.0.1",
            ],
        ),
        (set_numpy, ["library", "numpy", version("numpy"), "1.26.4"]),
    ],
)
def test_qualstat_shows_a_library_version_that_moved(
    runs: Path,
    capsys: pytest.CaptureFixture[str],
    edit: Callable[[dict[str, Any]], None],
    row: list[str],
) -> None:
    head = edited_copy(runs, "builtin", edit)
    assert qualstat([str(runs / "builtin.json"), head]) == 0
    out = capsys.readouterr().out
    assert "What differs between the runs (1)" in out
    # The one row: what moved, the base's version, then the edited one.
    assert setup_rows(out) == [row]


def test_rankers_record_their_config_and_qualstat_shows_a_version_that_moved(
    runs: Path, pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    result = pytester.runpytest(
        "--qualbench", BUILTIN, "--qualbench-rankers=bm25,tantivy,engine",
        "--qualbench-report=rankers.json",
    )  # fmt: skip
    result.assert_outcomes(passed=4)
    report = json.loads((runs / "rankers.json").read_text())
    # `engine` ranks with the benchmarked engine, whose config metadata.engine holds.
    libraries = {name: config["library"] for name, config in report["rankers"]["config"].items()}
    assert libraries == {
        "bm25": f"rank-bm25 {version('rank-bm25')}",
        "tantivy": f"tantivy {version('tantivy')}",
    }

    def set_tantivy(report: dict[str, Any]) -> None:
        report["rankers"]["config"]["tantivy"]["library"] = "tantivy 0.0.1"

    assert qualstat([str(runs / "rankers.json"), edited_copy(runs, "rankers", set_tantivy)]) == 0
    rows = setup_rows(capsys.readouterr().out)
    assert rows == [
        [
            "ranker",
            "tantivy",
            "config",
            "library",
            "tantivy",
            version("tantivy"),
            "tantivy",
            "0.0.1",
        ]
    ]
