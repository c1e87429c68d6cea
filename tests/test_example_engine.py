"""The SQLite FTS5 example engine: safe queries, kinds, labels, and the shipped benchmark."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from examples.sqlite_fts5.engine import Fts5Engine, fts5_unsupported_reason, query_terms
from pytest_qualbench.engine.chunking import chunk_entry
from pytest_qualbench.engine.types import ALL_KINDS, DEFAULT_KINDS
from pytest_qualbench.fixtures.discovery import dataset_hash
from pytest_qualbench.fixtures.schema import Entry
from tests.conftest import WriteFixture, case, entry

REASON = fts5_unsupported_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

ENGINE = "examples.sqlite_fts5.engine:Fts5Engine"
REPO = Path(__file__).parent.parent
SHIPPED = REPO / "bench_fixtures"
EXAMPLE_INI = REPO / "examples" / "sqlite_fts5" / "pytest.ini"


def make_entry(entry_id: str, haystack: str, source_kind: str = "durable") -> Entry:
    return Entry(
        id=entry_id,
        content_type="plaintext",
        haystack=haystack,
        source_label=f"bench-{entry_id}",
        source_kind=source_kind,
        cases=(),
        path="inline.jsonl",
        line=1,
    )


@pytest.fixture(scope="module")
def engine() -> Fts5Engine:
    engine = Fts5Engine()
    engine.index(
        [
            make_entry("b", "Idle connections are closed after five minutes."),
            make_entry("a", "The pool keeps one connection warm.\n\nRetries back off."),
            make_entry("c", "Scratch note: connection draft", source_kind="ephemeral"),
        ]
    )
    return engine


def test_query_terms_strip_outer_punctuation_and_repeats() -> None:
    assert query_terms('"pool" max-idle-conns? (pool) *') == ["pool", "max-idle-conns"]


@pytest.mark.parametrize(
    "query",
    ['"', '"pool', "*", "pool*", "title:pool", "-pool", "pool -warm", "NEAR(pool warm)",
     "pool AND", "OR", "^pool", "''", 'a"b*c:d-e', "   ", "nul\x00byte"],
)  # fmt: skip
def test_fts5_syntax_in_a_query_is_plain_text(engine: Fts5Engine, query: str) -> None:
    engine.search(query, kinds=ALL_KINDS)


@given(query=st.text())
def test_no_query_raises(engine: Fts5Engine, query: str) -> None:
    engine.search(query, kinds=ALL_KINDS)


def test_layers_label_who_found_a_result(engine: Fts5Engine) -> None:
    # Stemming only (connected -> connect), substring only (nnecti), both (pool).
    assert [r.layer for r in engine.search("connected")] == ["porter", "porter"]
    assert {r.layer for r in engine.search("nnecti")} == {"trigram"}
    top = engine.search("pool")[0]
    assert (top.layer, top.text) == ("rrf(porter+trigram)", "The pool keeps one connection warm.")
    assert top.score == 1 / (60 + 1) + 1 / (60 + 1)


def test_a_table_that_only_ors_its_way_to_a_result_is_left_out_of_its_label(
    engine: Fts5Engine,
) -> None:
    # The porter table holds both stems in chunk a; the trigram table holds no chunk
    # with 'connected' and 'pool', so its OR query ranks a through 'pool' alone.
    assert [(r.source, r.layer) for r in engine.search("connected pool")] == [("bench-a", "porter")]


def test_all_terms_first_then_any_term(engine: Fts5Engine) -> None:
    assert [r.source for r in engine.search("pool warm")] == ["bench-a"]
    assert {r.source for r in engine.search("pool idle")} == {"bench-a", "bench-b"}


def test_kinds_and_limit_are_honoured(engine: Fts5Engine) -> None:
    assert "bench-c" not in {r.source for r in engine.search("connection", kinds=DEFAULT_KINDS)}
    assert "bench-c" in {r.source for r in engine.search("connection", kinds=ALL_KINDS)}
    assert len(engine.search("connection", kinds=ALL_KINDS, limit=1)) == 1
    assert engine.search("connection", limit=0) == []


def test_chunks_are_the_shared_chunker_output(engine: Fts5Engine) -> None:
    a = make_entry("a", "The pool keeps one connection warm.\n\nRetries back off.")
    assert [c.text for c in engine.chunks()][:2] == [c.text for c in chunk_entry(a)]
    assert len(engine.chunks()) == 4


def read_report(pytester: pytest.Pytester) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((pytester.path / ".qualbench/report.json").read_text())
    return data


def test_selected_by_option_on_a_small_fixture_set(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write_fixture(
        "markdown.jsonl",
        [
            entry(
                "md_001",
                "# Pool\n\n## Idle connections\n\nmax-idle-conns caps idle connections.",
                [
                    case("md_001_q1", "idle connections", ["## Idle connections"],
                         layer="rrf(porter+trigram)"),
                    case("md_001_q2", "dle-con", ["max-idle-conns"], layer="trigram"),
                    case("md_001_q_neg", "zzyzx qwxv", []),
                ],
            )
        ],
    )  # fmt: skip
    result = pytester.runpytest("--qualbench", f"--qualbench-engine={ENGINE}")
    result.assert_outcomes(passed=3)
    metadata = read_report(pytester)["metadata"]
    assert metadata["engine"]["name"] == "examples.sqlite_fts5.engine:Fts5Engine"
    assert metadata["engine"]["config"]["fuzzy"] is None
    assert metadata["relevant_set"] == "chunks"


def test_its_ini_gates_the_shipped_benchmark(pytester: pytest.Pytester) -> None:
    # The example's own ini: its engine, fixtures and floors; the report goes to tmp.
    result = pytester.runpytest(
        "-c", str(EXAMPLE_INI), "--qualbench", "--qualbench-report=report.json",
        "-p", "no:cacheprovider", "-q",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["floors: all 4 met"])
    report = json.loads((pytester.path / "report.json").read_text())
    # The hash names each file relative to the rootdir, the folder of the ini.
    shipped = sorted(SHIPPED.glob("*.jsonl"))
    assert report["dataset_hash"] == dataset_hash(shipped, EXAMPLE_INI.parent)
    assert len(report["cases"]) == report["metadata"]["selection"]["cases_in_fixture_set"]
    assert report["negatives"]["negative_pass"] == 1.0
    # Measured 0.810: every keyword case without a typo is found, and 62 of the 66
    # questions; typo cases need a fuzzy layer.
    assert report["overall"]["hit@10"] >= 0.75
    assert report["by_layer"]["rrf(porter+trigram)"]["hit@10"] >= 0.95
    assert report["by_layer"]["fuzzy+rrf(porter+trigram)"]["layer_accuracy"] == 0.0
