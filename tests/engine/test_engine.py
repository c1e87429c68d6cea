"""The Engine facade: needles found, typos corrected, fabrications rejected, order irrelevant."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_qualbench.engine import ALL_KINDS, Engine, Result, SearchEngine
from pytest_qualbench.fixtures.schema import Entry
from tests.engine.conftest import MakeEntry

MARKDOWN = [
    (
        "md_001",
        "# Database Guide\n\nHow the service talks to PostgreSQL.\n\n"
        "## Connection Pool Settings\n\n`maxIdleConns` defaults to 10 and "
        "`maxOpenConns` to 100.\n\n## Migrations\n\nRun migrations before deploy.",
    ),
    (
        "md_002",
        "# Deployment\n\nBlue-green deployment with a configuration file per region.\n\n"
        "## Rollback\n\nRoll back by switching the load balancer target.",
    ),
    (
        "md_003",
        "# Caching\n\nRedis caches session tokens; eviction policy is allkeys-lru.\n\n"
        "## Configuration\n\nSet `cacheTtlSeconds` in the service configuration.",
    ),
    ("md_004", "# Logging\n\nStructured JSON logs, shipped to the collector every 5 seconds."),
]


def engine_for(make_entry: MakeEntry, content_type: str, items: list[tuple[str, str]]) -> Engine:
    engine = Engine()
    engine.index([make_entry(entry_id, content_type, text) for entry_id, text in items])
    return engine


def first_rank(results: list[Result], needle: str) -> int | None:
    for rank, result in enumerate(results, start=1):
        if needle in result.text:
            return rank
    return None


@pytest.fixture
def markdown_engine(make_entry: MakeEntry) -> Engine:
    return engine_for(make_entry, "markdown", MARKDOWN)


def test_markdown_heading_needle_is_found(markdown_engine: Engine) -> None:
    results = markdown_engine.search("connection pool settings")
    assert first_rank(results, "## Connection Pool Settings") == 1
    assert results[0].layer == "rrf(porter+trigram)"
    assert results[0].title == "Database Guide > Connection Pool Settings"


def test_json_key_name_needle_is_found(make_entry: MakeEntry) -> None:
    documents = [
        ("json_001", json.dumps({"service": "api", "metrics": {"http": {"p99_latency_ms": 120}}})),
        ("json_002", json.dumps({"service": "worker", "queue": {"depth": 3, "latency": "low"}})),
        ("json_003", json.dumps({"users": [{"id": "u1", "role": "admin"}]})),
    ]
    engine = engine_for(make_entry, "json", documents)
    results = engine.search("p99 latency ms")
    assert first_rank(results, "p99_latency_ms") == 1
    assert first_rank(engine.search("p99_latency_ms"), "p99_latency_ms") == 1


def test_typo_is_corrected_and_its_results_come_first(markdown_engine: Engine) -> None:
    assert markdown_engine.corrected_query("cnofiguration") == "configuration"
    results = markdown_engine.search("cnofiguration")
    assert results
    assert all(r.layer is not None and r.layer.startswith("fuzzy+") for r in results)
    assert "configuration" in results[0].text.lower()


def test_correction_leads_a_query_half_of_whose_words_are_unknown(
    markdown_engine: Engine,
) -> None:
    assert markdown_engine.corrected_query("service cnofiguration") == "service configuration"
    results = markdown_engine.search("service cnofiguration")
    assert first_rank(results, "service configuration") == 1
    assert results[0].layer == "fuzzy+rrf(porter+trigram)"


def test_eager_leaves_an_unknown_word_among_mostly_known_ones(markdown_engine: Engine) -> None:
    # One unknown word of four: a real word the corpus lacks more often than a typo.
    query = "redis session tokens expiry"
    assert markdown_engine.corrected_query(query) is None
    assert all(
        r.layer is not None and "fuzzy" not in r.layer for r in markdown_engine.search(query)
    )


def test_fallback_appends_corrected_results_and_keeps_primary_labels(
    make_entry: MakeEntry,
) -> None:
    engine = Engine(fuzzy="fallback")
    engine.index([make_entry(entry_id, "markdown", text) for entry_id, text in MARKDOWN])
    results = engine.search("service cnofiguration", kinds=ALL_KINDS)
    assert results.corrected_query == "service configuration"
    layers = [r.layer or "" for r in results]
    primary = [layer for layer in layers if not layer.startswith("fuzzy+")]
    assert primary and layers[: len(primary)] == primary, "primary results come first"
    assert any(layer.startswith("fuzzy+") for layer in layers), "corrected results follow"
    # The chunk both find ("service configuration") keeps its primary label.
    rank = first_rank(results, "service configuration")
    assert rank is not None and not layers[rank - 1].startswith("fuzzy+")


def test_fallback_corrects_only_when_results_are_too_few(make_entry: MakeEntry) -> None:
    engine = Engine(fuzzy="fallback")
    engine.index([make_entry(entry_id, "markdown", text) for entry_id, text in MARKDOWN])
    results = engine.search("service cnofiguration", limit=1, kinds=ALL_KINDS)
    assert results[0].layer is not None and not results[0].layer.startswith("fuzzy+")
    assert results.corrected_query is None
    assert engine.search("cnofiguration", limit=1, kinds=ALL_KINDS).corrected_query == (
        "configuration"
    )


def test_unknown_fuzzy_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="eager, fallback"):
        Engine(fuzzy="sometimes")  # type: ignore[arg-type]


def test_a_distractor_holding_every_term_does_not_hide_the_rest(make_entry: MakeEntry) -> None:
    documents = [
        ("n_001", "retry budget exhausted: retry the payment later"),
        ("n_002", "Fix: raise the retry limit in payments.yaml"),
        ("n_003", "Fix: the budget alarm fires before the limit"),
    ]
    engine = engine_for(make_entry, "plaintext", documents)
    results = engine.search("retry budget", kinds=ALL_KINDS)
    assert first_rank(results, "retry budget exhausted") == 1
    assert first_rank(results, "raise the retry limit") is not None
    assert first_rank(results, "budget alarm") is not None


def test_stopwords_numbers_and_identifier_fragments_are_never_corrections(
    make_entry: MakeEntry,
) -> None:
    engine = engine_for(make_entry, "plaintext", [("c_001", "set DB_SSL_CERT in 1969 when")])
    assert engine.corrected_query("cerata") is None
    assert engine.corrected_query("1979") is None
    assert engine.corrected_query("whem") is None


def test_known_words_are_not_corrected(markdown_engine: Engine) -> None:
    assert markdown_engine.corrected_query("connection pooling") is None
    assert markdown_engine.corrected_query("maxidle") is None


def test_a_new_index_gets_new_corrections(make_entry: MakeEntry) -> None:
    engine = engine_for(make_entry, "plaintext", [("c_001", "the database file")])
    assert engine.corrected_query("databse") == "database"
    engine.index([make_entry("c_002", "plaintext", "the databases folder")])
    assert engine.corrected_query("databse") == "databases"


def test_fabricated_query_returns_nothing(markdown_engine: Engine) -> None:
    assert markdown_engine.search("anomalocaris opabinia hallucigenia", kinds=ALL_KINDS) == []
    assert markdown_engine.corrected_query("anomalocaris opabinia hallucigenia") is None


def test_substring_only_query_is_found_by_trigram(markdown_engine: Engine) -> None:
    results = markdown_engine.search("idleconn")
    assert first_rank(results, "maxIdleConns") == 1
    assert results[0].layer == "trigram"


def test_entry_order_does_not_change_rankings(make_entry: MakeEntry) -> None:
    forward = engine_for(make_entry, "markdown", MARKDOWN)
    backward = engine_for(make_entry, "markdown", MARKDOWN[::-1])
    assert forward.chunks() == backward.chunks()
    for query in ("configuration", "service", "deploy rollback", "cnofiguration", "the"):
        assert forward.search(query) == backward.search(query)


def test_kinds_filter_visibility(make_entry: MakeEntry) -> None:
    engine = Engine()
    engine.index(
        [
            make_entry("a", "plaintext", "shared needle durable", kind="durable"),
            make_entry("b", "plaintext", "shared needle ephemeral", kind="ephemeral"),
            make_entry("c", "plaintext", "shared needle session", kind="session"),
        ]
    )
    assert [r.source for r in engine.search("shared needle")] == ["bench-a", "bench-c"]
    assert len(engine.search("shared needle", kinds=ALL_KINDS)) == 3
    assert [r.source for r in engine.search("shared needle", kinds=["ephemeral"])] == ["bench-b"]


def test_equal_scores_tie_break_by_source_then_position(make_entry: MakeEntry) -> None:
    engine = Engine()
    engine.index([make_entry(name, "plaintext", "same words", source=name) for name in "cab"])
    assert [(r.source, r.position) for r in engine.search("same words")] == [
        ("a", 0),
        ("b", 0),
        ("c", 0),
    ]


def test_shared_source_labels_get_distinct_positions(make_entry: MakeEntry) -> None:
    engine = Engine()
    engine.index(
        [
            make_entry("x2", "plaintext", "one\n\ntwo", source="shared"),
            make_entry("x1", "plaintext", "three", source="shared"),
        ]
    )
    assert [(c.entry_id, c.position) for c in engine.chunks()] == [("x1", 0), ("x2", 1), ("x2", 2)]


def test_limit_is_respected(markdown_engine: Engine) -> None:
    assert len(markdown_engine.search("the", limit=2)) == 2
    assert markdown_engine.search("configuration", limit=0) == []


def test_invalid_json_warning_is_exposed(make_entry: MakeEntry) -> None:
    engine = engine_for(make_entry, "json", [("json_bad", '{"broken": ')])
    assert len(engine.warnings) == 1
    assert engine.warnings[0].startswith("json_bad: invalid JSON")
    assert engine.search("broken")


@pytest.mark.parametrize(
    ("haystack", "query", "needle"),
    [
        ("Die Größe des Caches und café résumé naïve", "größe", "Größe"),
        ("Le café est prêt", "CAFÉ", "café"),
        ("検索エンジンの設定を変更します", "検索", "検索"),
        ("検索エンジンの設定を変更します", "エンジン", "エンジン"),
    ],
)
def test_accented_and_cjk_text_is_searchable(
    make_entry: MakeEntry, haystack: str, query: str, needle: str
) -> None:
    engine = engine_for(make_entry, "plaintext", [("u_001", haystack), ("u_002", "other text")])
    assert first_rank(engine.search(query), needle) == 1


@pytest.mark.parametrize("content_type", ["markdown", "json", "plaintext", "transcript", "curated"])
def test_empty_haystacks_and_empty_queries_do_not_crash(
    make_entry: MakeEntry, content_type: str
) -> None:
    engine = engine_for(make_entry, content_type, [("e_001", ""), ("e_002", "   \n")])
    assert engine.chunks() == ()
    assert engine.search("anything") == []
    assert engine.search("") == []
    assert engine.corrected_query("anything") is None


def test_unindexed_engine_returns_nothing() -> None:
    assert Engine().search("anything") == []
    assert Engine().chunks() == ()


@pytest.mark.parametrize("content_type", ["markdown", "json", "plaintext", "transcript", "curated"])
def test_very_long_lines_do_not_crash(make_entry: MakeEntry, content_type: str) -> None:
    long_line = "alpha " * 10_000 + "needleword" + " omega" * 10_000
    engine = engine_for(make_entry, content_type, [("long_001", long_line)])
    assert first_rank(engine.search("needleword"), "needleword") == 1


def test_punctuation_only_query_returns_nothing(markdown_engine: Engine) -> None:
    assert markdown_engine.search("?!  --") == []


def test_config_names_every_constant(markdown_engine: Engine) -> None:
    config = Engine(k1=1.5).config
    porter = config["porter"]
    assert isinstance(porter, dict)
    assert porter["bm25_k1"] == 1.5
    assert porter["title_weight"] == 2.0
    assert porter["bm25_k3"] == 8.0
    fusion = config["fusion"]
    assert isinstance(fusion, dict)
    assert fusion["rrf_k"] == 10
    assert fusion["depth_per_layer"] == 100
    assert fusion["trigram_full_weight_words"] == 4
    assert fusion["score_gap_weight"] == 0.03
    fuzzy = config["fuzzy"]
    assert isinstance(fuzzy, dict)
    assert fuzzy["mode"] == "eager"
    assert Engine(fuzzy="fallback").config["fuzzy"] != fuzzy
    json.dumps(config)


def test_entries_are_accepted_as_any_sequence(make_entry: MakeEntry) -> None:
    entries: tuple[Entry, ...] = (make_entry("t_001", "transcript", "Human: hi\nAssistant: hello"),)
    engine = Engine()
    engine.index(entries)
    assert [c.title for c in engine.chunks()] == ["turns 1-2"]


@settings(max_examples=40, deadline=None)
@given(
    content_type=st.sampled_from(["markdown", "json", "plaintext", "transcript", "curated"]),
    haystack=st.text(max_size=300),
    query=st.text(max_size=40),
)
def test_any_text_indexes_and_searches(content_type: str, haystack: str, query: str) -> None:
    entry = Entry("h_001", content_type, haystack, "bench-h", "durable", (), "f.jsonl", 1)
    engine = Engine()
    engine.index([entry])
    results = engine.search(query, kinds=ALL_KINDS)
    assert len(results) <= 10
    assert all(result.text in {chunk.text for chunk in engine.chunks()} for result in results)


def test_no_kinds_means_no_results(markdown_engine: Engine) -> None:
    assert markdown_engine.search("configuration", kinds=()) == []


def test_engine_speaks_the_protocol() -> None:
    assert isinstance(Engine(), SearchEngine)
