"""The plugin with its default, built-in engine, end to end."""

from __future__ import annotations

import json

import pytest

from tests.conftest import WriteFixture, case, entry

MARKDOWN = [
    entry(
        "md_001",
        "# Database Guide\n\nHow the service talks to PostgreSQL.\n\n"
        "## Connection Pool Settings\n\n`maxIdleConns` defaults to 10.\n",
        [
            case("md_001_q1", "connection pool settings", ["## Connection Pool Settings"],
                 layer="rrf(porter+trigram)", ceiling=1),
            case("md_001_q2", "cnofiguration of the pool", ["maxIdleConns"],
                 layer="fuzzy+rrf(porter+trigram)", ceiling=3),
            case("md_001_q_neg", "anomalocaris opabinia hallucigenia", []),
        ],
    ),
    entry("md_002", "# Deployment\n\nThe configuration file lives per region.\n", []),
]  # fmt: skip
JSON_ENTRIES = [
    entry(
        "json_001",
        '{"metrics": {"http": {"p99_latency_ms": 250, "error_rate": 0.01}}}',
        [
            case(
                "json_001_q1",
                "p99 latency",
                ["p99_latency_ms"],
                layer="rrf(porter+trigram)",
                ceiling=5,
            )
        ],
        content_type="json",
    ),
    entry("json_002", '{"broken": ', [], content_type="json"),
]


@pytest.fixture
def bench(write_fixture: WriteFixture) -> None:
    write_fixture("markdown.jsonl", MARKDOWN)
    write_fixture("json.jsonl", JSON_ENTRIES)


@pytest.mark.usefixtures("bench")
def test_structure_needles_typos_and_negatives(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--qualbench", "-p", "no:randomly")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["engine warning: json_002: invalid JSON*indexed as plaintext"])
    report = json.loads((pytester.path / ".qualbench/report.json").read_text())
    typo = next(c for c in report["cases"] if c["case_id"] == "md_001_q2")
    assert typo["corrected_query"] == "configuration of the pool"
    assert typo["layer"] == "fuzzy+rrf(porter+trigram)"
    engine = report["metadata"]["engine"]
    assert engine["name"] == "pytest_qualbench.engine.builtin:Engine"
    assert engine["config"]["porter"]["bm25_k1"] == 1.2
    assert (
        engine["warnings"]
        == [w for w in engine["warnings"] if w.startswith("json_002: invalid JSON")]
        != []
    )
