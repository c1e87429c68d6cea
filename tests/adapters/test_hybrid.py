"""The hybrid adapter: RRF of the built-in engine and dense, labeled by who found each result."""

from __future__ import annotations

from pytest_qualbench.adapters.dense import DenseEngine
from pytest_qualbench.adapters.hybrid import HybridEngine
from pytest_qualbench.engine.builtin import Engine
from pytest_qualbench.engine.types import ALL_KINDS
from tests.adapters.conftest import MakeEntry

ENTRIES = (
    ("a", "# Brakes\n\nThe car needs new brake pads and an oil change."),
    ("b", "# Bread\n\nBake the banana bread for forty minutes."),
    ("c", "# Failover\n\nPromote the replica when the primary is down."),
)


def test_each_result_is_labeled_by_the_sides_that_found_it(make_entry: MakeEntry) -> None:
    entries = [make_entry(name, text) for name, text in ENTRIES]
    hybrid, builtin, dense = HybridEngine(), Engine(), DenseEngine()
    hybrid.index(entries)
    builtin.index(entries)
    dense.index_chunks(builtin.chunks())
    for query in ("automobile maintenance", "brake pads", "primary down", "zzzz"):
        by_builtin = {r.source for r in builtin.search(query, limit=100, kinds=ALL_KINDS)}
        by_dense = {r.source for r in dense.search(query, limit=100, kinds=ALL_KINDS)}
        expected = {
            source: "rrf(builtin+dense)"
            if source in by_builtin and source in by_dense
            else "builtin"
            if source in by_builtin
            else "dense"
            for source in by_builtin | by_dense
        }
        results = hybrid.search(query, limit=100, kinds=ALL_KINDS)
        assert {r.source: r.layer for r in results} == expected, query


def test_a_result_both_sides_found_outranks_one_only_one_side_found(make_entry: MakeEntry) -> None:
    hybrid = HybridEngine()
    hybrid.index([make_entry(name, text) for name, text in ENTRIES])
    results = hybrid.search("brake pads", kinds=ALL_KINDS)
    assert (results[0].source, results[0].layer) == ("bench-a", "rrf(builtin+dense)")


def test_chunks_are_the_builtin_engines(make_entry: MakeEntry) -> None:
    entries = [make_entry(name, text) for name, text in ENTRIES]
    hybrid, builtin = HybridEngine(), Engine()
    hybrid.index(entries)
    builtin.index(entries)
    assert hybrid.chunks() == builtin.chunks()


def test_config_holds_both_sides() -> None:
    config = HybridEngine().config
    assert set(config) >= {"builtin", "dense", "fusion"}
