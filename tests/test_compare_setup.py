"""Comparisons lead with what differs between the runs: real report pairs, real engines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

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
    assert {"engine", "engine config", "library tantivy"} <= named
    engine_row = next(row for row in rows if row.startswith("engine "))
    assert engine_row.split()[1:] == [
        "pytest_qualbench.engine.builtin:Engine",
        "pytest_qualbench.adapters.tantivy:TantivyEngine",
    ]
    # A new engine's config keys are counted on one row, not listed one by one.
    config = next(row for row in rows if row.startswith("engine config")).split()
    assert int(config[2]) > 0
    assert config[3:] == ["keys", "differ", "(another", "engine)"]
    library = next(row for row in rows if row.startswith("library tantivy"))
    assert library.split()[2] == "-"


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
