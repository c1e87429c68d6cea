"""Each result's label is what capy's two FTS5 MATCH queries say, checked against SQLite.

capy labels a result by the layers whose MATCH returns it: an FTS5 `porter unicode61`
table and a `trigram` table over each chunk's title and content, queried with every
term required and, when neither returns anything, with any term. Each test below is
one of the shapes in which the fusion's labels disagreed with capy's fixtures (issue
55), built small; each builds those two tables over the engine's own chunks, runs
the MATCH strings capy's `sanitizePorterQuery`/`sanitizeTrigramQuery` make of the
query (written out by hand here), and asserts the engine's label is SQLite's.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager

import pytest

from pytest_qualbench.engine import Engine
from pytest_qualbench.engine.analysis import porter_stemmer, stem
from pytest_qualbench.engine.layer_match import (
    IRREGULAR_PREFIXES,
    capy_terms,
    fts5_tokens,
    stem_prefix,
    trigram_pieces,
)
from tests.engine.conftest import MakeEntry

POOL = "Connection pooling settings: maxIdleConns defaults to 10."
LOGS = "Structured logging ships every record to the collector."
ALLOW = "Requests from an IP address outside the allowlist are rejected."
LATEST = "Connection pooling settings are covered by the latest suite."
CONFUSING = "Confusing pooling settings break the build."
GLOBALS = "Avoid using globals in handlers."


@contextmanager
def fts5_tables(built: Engine) -> Iterator[sqlite3.Connection]:
    """capy's two tables (internal/store/schema.go) over the engine's chunks, row i+1 chunk i."""
    with closing(sqlite3.connect(":memory:")) as connection:
        for table, tokenizer in (("porter", "porter unicode61"), ("trigram", "trigram")):
            connection.execute(
                f"CREATE VIRTUAL TABLE {table} USING fts5(title, content, tokenize='{tokenizer}')"
            )
            connection.executemany(
                f"INSERT INTO {table} (rowid, title, content) VALUES (?, ?, ?)",
                [(row, chunk.title, chunk.text) for row, chunk in enumerate(built.chunks(), 1)],
            )
        yield connection


def sqlite_labels(
    connection: sqlite3.Connection, every: tuple[str, str], any_: tuple[str, str]
) -> dict[int, str]:
    """Each row capy's pass returns, with its label: the layers whose MATCH returned it,
    the all-terms strings first and the any-term ones when those return nothing."""
    for porter, trigram in (every, any_):
        found = {
            layer: {row for (row,) in connection.execute(
                f"SELECT rowid FROM {layer} WHERE {layer} MATCH ?", (match,)
            )} if match else set()
            for layer, match in (("porter", porter), ("trigram", trigram))
        }  # fmt: skip
        rows = found["porter"] | found["trigram"]
        if rows:
            return {
                row: "rrf(porter+trigram)"
                if row in found["porter"] and row in found["trigram"]
                else "porter"
                if row in found["porter"]
                else "trigram"
                for row in rows
            }
    return {}


def engine_labels(built: Engine, query: str) -> dict[int, str | None]:
    """The engine's label of each result, by the result's row in `fts5_tables`."""
    rows = {(chunk.source, chunk.position): row for row, chunk in enumerate(built.chunks(), 1)}
    return {rows[result.source, result.position]: result.layer for result in built.search(query)}


def row_of(built: Engine, text: str) -> int:
    return next(row for row, chunk in enumerate(built.chunks(), 1) if chunk.text == text)


def indexed(make_entry: MakeEntry, *texts: str) -> Engine:
    built = Engine(fuzzy="fallback", labels="fts5")
    built.index([make_entry(f"e{n}", "plaintext", text) for n, text in enumerate(texts)])
    return built


@pytest.mark.parametrize(
    ("texts", "query", "every", "any_", "labeled"),
    [
        pytest.param(
            # capy keeps "to" (not in its stopwords) and drops "what" and "does": the
            # trigram layer holds both remaining words. The fusion required every word
            # of three letters or more, "what" and "does" too, and said porter.
            (POOL, LOGS),
            "what does maxIdleConns default to",
            ('"maxidleconns" "default" "to"', '"maxidleconns" "default"'),
            ('"maxidleconns" OR "default" OR "to"', '"maxidleconns" OR "default"'),
            (POOL, "rrf(porter+trigram)"),
            id="porter-was-rrf",
        ),
        pytest.param(
            # The trigram term keeps its hyphen: "ip-address" is no substring of "IP
            # address". The fusion's trigram words were "address" and "allowlist".
            (ALLOW, LOGS),
            "ip-address allowlist",
            ('"ip-address" "allowlist"', '"ip-address" "allowlist"'),
            ('"ip-address" OR "allowlist"', '"ip-address" OR "allowlist"'),
            (ALLOW, "porter"),
            id="rrf-was-porter",
        ),
        pytest.param(
            # capy's porter query requires "of", which the chunk lacks; this engine's
            # porter layer drops "of" as a stopword and said rrf.
            (POOL, LOGS),
            "settings of pooling",
            ('"settings" "of" "pooling"', '"settings" "pooling"'),
            ('"settings" OR "of" OR "pooling"', '"settings" OR "pooling"'),
            (POOL, "trigram"),
            id="rrf-was-trigram",
        ),
        pytest.param(
            # capy drops "test" (a changelog stopword of its list); the fusion required
            # its stem, which the chunk lacks, and found "test" only inside "latest".
            (LATEST, LOGS),
            "test pooling",
            ('"pooling"', '"pooling"'),
            ('"pooling"', '"pooling"'),
            (LATEST, "rrf(porter+trigram)"),
            id="trigram-was-rrf",
        ),
    ],
)
def test_a_primary_result_is_labeled_by_the_matches_sqlite_returns(
    make_entry: MakeEntry,
    texts: Sequence[str],
    query: str,
    every: tuple[str, str],
    any_: tuple[str, str],
    labeled: tuple[str, str],
) -> None:
    built = indexed(make_entry, *texts)
    text, label = labeled
    with fts5_tables(built) as connection:
        expected = sqlite_labels(connection, every, any_)
    row = row_of(built, text)
    assert expected[row] == label
    labels = engine_labels(built, query)
    assert labels[row] == label
    # Every result capy would return carries capy's label.
    assert {row: labels[row] for row in expected if row in labels} == expected


@pytest.mark.parametrize(
    ("texts", "query", "corrected", "primary", "every", "labeled"),
    [
        pytest.param(
            # The corrected query requires "of" in capy's porter MATCH: trigram only.
            (POOL, LOGS),
            "conection poolnig of",
            "connection pooling of",
            ('"conection" OR "poolnig" OR "of"', '"conection" OR "poolnig"'),
            ('"connection" "pooling" "of"', '"connection" "pooling"'),
            (POOL, "fuzzy+trigram"),
            id="fuzzy-rrf-was-fuzzy-trigram",
        ),
        pytest.param(
            # capy drops "using"; the fusion's porter layer required its stem, and its
            # trigram layer found "using" inside "Confusing".
            (CONFUSING, GLOBALS),
            "usign poolign",
            "using pooling",
            ('"usign" OR "poolign"', '"usign" OR "poolign"'),
            ('"pooling"', '"pooling"'),
            (CONFUSING, "fuzzy+rrf(porter+trigram)"),
            id="fuzzy-trigram-was-fuzzy-rrf",
        ),
    ],
)
def test_a_corrected_result_is_labeled_by_the_corrected_querys_matches(
    make_entry: MakeEntry,
    texts: Sequence[str],
    query: str,
    corrected: str,
    primary: tuple[str, str],
    every: tuple[str, str],
    labeled: tuple[str, str],
) -> None:
    built = indexed(make_entry, *texts)
    text, label = labeled
    assert built.corrected_query(query) == corrected
    with fts5_tables(built) as connection:
        # capy's first pass finds nothing (all terms, then any), so the corrected one runs.
        assert sqlite_labels(connection, primary, primary) == {}
        expected = sqlite_labels(connection, every, every)
    row = row_of(built, text)
    assert "fuzzy+" + expected[row] == label
    assert engine_labels(built, query)[row] == label


@pytest.mark.parametrize(
    ("query", "terms", "pieces"),
    [
        ("what does maxIdleConns default to", ["maxidleconns", "default", "to"], None),
        ("ip-address allowlist", ["ip-address", "allowlist"], ("ip-address", "allowlist")),
        # Special characters go, trailing punctuation is trimmed, repeats are dropped.
        ('"alloc/op" (bench), Alloc/op?', ["alloc/op", "bench"], ("alloc", "bench")),
        # Every term a stopword: all are kept.
        ("how to use the", ["to"], ()),
        ("how the", ["how", "the"], ("how", "the")),
        ("café naïve", ["café", "naïve"], ("caf",)),
    ],
)
def test_query_terms_and_trigram_pieces_are_capys(
    query: str, terms: list[str], pieces: tuple[str, ...] | None
) -> None:
    assert capy_terms(query) == terms
    if pieces is not None:
        assert trigram_pieces(capy_terms(query)) == pieces


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("max_idle_conns maxIdleConns", ["max", "idle", "conns", "maxidleconns"]),
        ("alloc/op __init__ e-mail", ["alloc", "op", "init", "e", "mail"]),
        ("Café NAÏVE", ["cafe", "naive"]),
    ],
)
def test_tokens_are_those_of_fts5s_unicode61(text: str, tokens: list[str]) -> None:
    assert fts5_tokens(text) == tokens
    with closing(sqlite3.connect(":memory:")) as connection:
        connection.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='unicode61')")
        connection.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        connection.execute("INSERT INTO t VALUES (?)", (text,))
        assert [term for (term,) in connection.execute("SELECT term FROM v ORDER BY offset")] == (
            tokens
        )


@pytest.mark.parametrize(
    ("text", "query", "label"),
    [
        # A phrase: the tokens of "max_idle_conns" must stand in a row, in one column.
        ("Set max_idle_conns here.", "max_idle_conns", "rrf(porter+trigram)"),
        ("Set max idle conns here.", "max_idle_conns", "porter"),
        ("Set max and idle conns.", "max_idle_conns conns", "rrf(porter+trigram)"),
        # maxIdleConns is one unicode61 token: "idle" is no porter token of it.
        ("Set maxIdleConns here.", "idle conns", "trigram"),
        # Diacritics go in the porter table, not in the trigram one.
        ("Le café est ouvert.", "cafe ouvert", "porter"),
    ],
)
def test_single_chunk_labels_agree_with_sqlite(
    make_entry: MakeEntry, text: str, query: str, label: str
) -> None:
    built = indexed(make_entry, text, LOGS)
    terms = capy_terms(query)
    porter = ['"' + term + '"' for term in terms]
    trigram = ['"' + piece + '"' for piece in trigram_pieces(terms)]
    with fts5_tables(built) as connection:
        expected = sqlite_labels(
            connection,
            (" ".join(porter), " ".join(trigram)),
            (" OR ".join(porter), " OR ".join(trigram)),
        )
    row = row_of(built, text)
    assert expected[row] == label
    assert engine_labels(built, query)[row] == label


def test_every_word_of_nltks_irregular_forms_starts_with_its_stems_prefix() -> None:
    pool: dict[str, str] = porter_stemmer().pool
    assert all(word.startswith(stem_prefix(stemmed)) for word, stemmed in pool.items())
    # The written-out exceptions are needed: each is a stem some pool word breaks.
    assert all(
        any(s == stemmed and not word.startswith(stemmed[:-1]) for word, s in pool.items())
        for stemmed in IRREGULAR_PREFIXES
    )
    assert stem("dying") == "die"


def test_the_default_keeps_the_fusions_labels_and_the_rule_changes_no_ranking(
    make_entry: MakeEntry,
) -> None:
    # "settings of pooling": the fusion says both layers match POOL in full; capy's porter
    # MATCH requires "of", which POOL lacks (the shape `rrf-was-trigram` above).
    entries = [make_entry(f"e{n}", "plaintext", text) for n, text in enumerate((POOL, LOGS))]
    by_fusion, by_fts5 = Engine(fuzzy="fallback"), Engine(fuzzy="fallback", labels="fts5")
    by_fusion.index(entries)
    by_fts5.index(entries)
    fusion_results = by_fusion.search("settings of pooling")
    fts5_results = by_fts5.search("settings of pooling")
    assert [r.layer for r in fusion_results][:1] == ["rrf(porter+trigram)"]
    assert [r.layer for r in fts5_results][:1] == ["trigram"]
    assert [(r.source, r.position, r.score) for r in fusion_results] == [
        (r.source, r.position, r.score) for r in fts5_results
    ]
    assert by_fusion.labels == "fusion"
    assert by_fts5.labels == "fts5"


def test_an_unknown_label_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="labels='capy': choose one of fusion, fts5"):
        Engine(labels="capy")  # type: ignore[arg-type]
