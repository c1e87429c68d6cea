"""The tantivy adapter, with a real tantivy index on disk."""

from __future__ import annotations

import os
from importlib.metadata import version

import pytest

from pytest_qualbench.adapters.tantivy import TantivyEngine
from pytest_qualbench.engine.types import ALL_KINDS
from tests.adapters.conftest import MakeEntry


def test_a_title_match_outranks_the_same_word_in_the_text(make_entry: MakeEntry) -> None:
    engine = TantivyEngine()
    engine.index(
        [
            make_entry("a", "# Notes\n\nWe talked about failover and lunch."),
            make_entry("b", "# Failover\n\nSteps we follow and lunch."),
        ]
    )
    assert [result.source for result in engine.search("failover")] == ["bench-b", "bench-a"]


def test_en_stem_matches_other_forms_of_a_word(make_entry: MakeEntry) -> None:
    engine = TantivyEngine()
    engine.index([make_entry("a", "The primary was running a vacuum.")])
    results = engine.search("runs")
    assert [(result.source, result.layer) for result in results] == [("bench-a", "tantivy")]


def test_fuzzy_terms_find_a_typo_and_are_labeled(make_entry: MakeEntry) -> None:
    entries = [make_entry("a", "replication lag on the orders cluster")]
    exact, fuzzy = TantivyEngine(), TantivyEngine(fuzzy_distance=1)
    exact.index(entries)
    fuzzy.index(entries)
    assert exact.search("ordrs") == []
    assert [(result.source, result.layer) for result in fuzzy.search("ordrs")] == [
        ("bench-a", "fuzzy")
    ]


def test_query_syntax_characters_are_plain_text(make_entry: MakeEntry) -> None:
    engine = TantivyEngine()
    engine.index([make_entry("a", "select the rows and count them")])
    assert [r.source for r in engine.search('"rows AND (count:', kinds=ALL_KINDS)] == ["bench-a"]


def test_close_removes_the_index_directory(make_entry: MakeEntry) -> None:
    engine = TantivyEngine()
    engine.index([make_entry("a", "text")])
    directory = engine._directory
    assert directory is not None and os.path.isdir(directory)
    engine.close()
    assert not os.path.exists(directory)


def test_fuzzy_distance_outside_tantivys_range_is_refused() -> None:
    with pytest.raises(ValueError, match="fuzzy_distance: 3"):
        TantivyEngine(fuzzy_distance=3)


def test_config_records_the_library_version() -> None:
    assert TantivyEngine().config["library"] == f"tantivy {version('tantivy')}"
