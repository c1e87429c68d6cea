"""The bm25s adapter over the built-in chunks, with the real bm25s library."""

from __future__ import annotations

from importlib.metadata import version

from pytest_qualbench.adapters.bm25s import Bm25sEngine
from pytest_qualbench.engine.types import ALL_KINDS
from tests.adapters.conftest import MakeEntry


def test_ranks_the_chunk_sharing_the_rare_stemmed_word_first(make_entry: MakeEntry) -> None:
    engine = Bm25sEngine()
    engine.index(
        [
            make_entry("a", "# Cache\n\nThe cache evicts keys when memory runs out."),
            make_entry(
                "b", "# Replicas\n\nReplica lag grows while the primary is running a vacuum."
            ),
        ]
    )
    results = engine.search("replicas lagging", kinds=ALL_KINDS)
    assert [result.source for result in results] == ["bench-b"]
    assert results[0].layer == "bm25s"
    assert results[0].title == "Replicas"


def test_stemming_is_an_option(make_entry: MakeEntry) -> None:
    entries = [make_entry("a", "The primary was running a vacuum.")]
    stemmed, plain = Bm25sEngine(), Bm25sEngine(stemmer="none")
    stemmed.index(entries)
    plain.index(entries)
    assert [result.source for result in stemmed.search("runs")] == ["bench-a"]
    assert plain.search("runs") == []


def test_stopwords_are_an_option(make_entry: MakeEntry) -> None:
    entries = [make_entry("a", "This is the plan for it")]
    dropping, keeping = Bm25sEngine(), Bm25sEngine(stopwords="none")
    dropping.index(entries)
    keeping.index(entries)
    assert dropping.search("this is it") == []
    assert [result.source for result in keeping.search("this is it")] == ["bench-a"]


def test_only_the_asked_kinds_are_searched(make_entry: MakeEntry) -> None:
    engine = Bm25sEngine()
    engine.index(
        [
            make_entry("a", "failover runbook", kind="ephemeral"),
            make_entry("b", "failover checklist", kind="durable"),
        ]
    )
    assert [result.source for result in engine.search("failover")] == ["bench-b"]
    assert {result.source for result in engine.search("failover", kinds=ALL_KINDS)} == {
        "bench-a",
        "bench-b",
    }


def test_equal_scores_keep_source_order_and_limit_applies(make_entry: MakeEntry) -> None:
    engine = Bm25sEngine()
    engine.index([make_entry(name, "identical failover text") for name in ("c", "a", "b")])
    assert [result.source for result in engine.search("failover", limit=2)] == [
        "bench-a",
        "bench-b",
    ]


def test_config_records_the_library_version_and_parameters() -> None:
    config = Bm25sEngine(k1=1.2, method="bm25+").config
    assert config["library"] == f"bm25s {version('bm25s')}"
    assert (config["k1"], config["method"]) == (1.2, "bm25+")
