"""Per-result layer labels on corpora small enough to say by hand which layer matches what.

A layer matches a chunk in full when the chunk holds every query term: every stem for
the porter layer, every word as a substring for the trigram layer. A result is labeled
with the layers that match it in full; a layer that only reaches it through its
any-term fill (one shared word) does not count, as the fixture guide has it: "single-
layer values like porter are only correct when the other layer genuinely cannot match".
"""

from __future__ import annotations

import pytest

from pytest_qualbench.engine import Engine
from pytest_qualbench.engine.builtin import FuzzyMode
from tests.engine.conftest import MakeEntry

# Each text is built so that one layer matches "rotate certificate" in full:
BOTH = "Rotate the certificate before it expires."  # both words, as words
STEMS = "Rotating certificates every quarter keeps keys fresh."  # stems; no 'rotate' substring
SUBSTRINGS = "The job rotatecertificate runs nightly."  # substrings of one token; no stem
POOL = "Connection pooling settings: maxIdleConns defaults to 10."
LOGS = "Structured logging ships every record to the collector."


def engine(make_entry: MakeEntry, fuzzy: FuzzyMode = "eager", **texts: str) -> Engine:
    built = Engine(fuzzy=fuzzy)
    built.index([make_entry(name, "plaintext", text) for name, text in texts.items()])
    return built


def labels(built: Engine, query: str) -> list[tuple[str, str | None]]:
    return [(result.source, result.layer) for result in built.search(query)]


def test_one_list_labels_each_result_by_the_layers_that_match_it(make_entry: MakeEntry) -> None:
    built = engine(make_entry, both=BOTH, stems=STEMS, substrings=SUBSTRINGS)
    assert labels(built, "rotate certificate") == [
        ("bench-both", "rrf(porter+trigram)"),
        ("bench-substrings", "trigram"),
        ("bench-stems", "porter"),
    ]


def test_a_result_only_the_stems_match_is_porter_though_the_trigram_fill_ranks_it(
    make_entry: MakeEntry,
) -> None:
    # No chunk holds both 'rotate' and 'certificate' as substrings, so the trigram layer
    # falls back to chunks holding either ('certificate' of 'certificates'): it ranks the
    # chunk, but cannot match what the query asks.
    built = engine(make_entry, stems=STEMS, pool=POOL)
    assert labels(built, "rotate certificate") == [("bench-stems", "porter")]


def test_a_result_only_substrings_match_is_trigram_though_the_porter_fill_ranks_it(
    make_entry: MakeEntry,
) -> None:
    # 'idleconns' is no token (maxIdleConns splits into max, idle, conns): the porter
    # layer finds the chunk only through 'defaults'; the trigram layer holds both words.
    built = engine(make_entry, pool=POOL, logs=LOGS)
    assert labels(built, "idleconns defaults") == [("bench-pool", "trigram")]


def test_a_result_both_layers_match_in_full_is_rrf(make_entry: MakeEntry) -> None:
    built = engine(make_entry, pool=POOL, logs=LOGS)
    assert labels(built, "connection pooling") == [("bench-pool", "rrf(porter+trigram)")]


def test_a_result_no_layer_matches_in_full_names_every_layer_that_ranked_it(
    make_entry: MakeEntry,
) -> None:
    # No chunk holds both words in either layer: each result comes from the fills.
    built = engine(make_entry, stems=STEMS, pool=POOL)
    assert labels(built, "rotate pooling") == [
        ("bench-pool", "rrf(porter+trigram)"),  # 'pooling' as a stem and a substring
        ("bench-stems", "porter"),  # 'rotate' only as a stem
    ]


@pytest.mark.parametrize(
    ("query", "corrected", "layer"),
    [
        # 'logs' matches 'logging' through its stem only
        ("colector logs", "collector logs", "fuzzy+porter"),
        # 'loggin' (no correction needed: a substring) is no word nor stem of the corpus
        ("strucutred loggin", "structured loggin", "fuzzy+trigram"),
        ("colector logging", "collector logging", "fuzzy+rrf(porter+trigram)"),
    ],
)
def test_a_corrected_result_prefixes_its_own_label(
    make_entry: MakeEntry, query: str, corrected: str, layer: str
) -> None:
    built = engine(make_entry, pool=POOL, logs=LOGS)
    assert labels(built, query) == [("bench-logs", layer)]
    assert built.corrected_query(query) == corrected


def test_fallback_keeps_a_primary_result_its_primary_label(make_entry: MakeEntry) -> None:
    # The primary pass finds the chunk through the porter fill ('logs'), too few results,
    # so the corrected query runs too; the chunk it finds again stays primary.
    built = engine(make_entry, "fallback", pool=POOL, logs=LOGS)
    assert labels(built, "colector logs") == [("bench-logs", "porter")]
    assert built.corrected_query("colector logs") == "collector logs"
