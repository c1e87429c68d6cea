"""Rankers and the head-to-head table: formulas by hand, registry, and the quality lift."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pytest

from pytest_qualbench.engine import Engine
from pytest_qualbench.engine.types import Chunk, Result, SearchEngine
from pytest_qualbench.fixtures.parsing import parse_entry
from pytest_qualbench.fixtures.schema import Case, Entry
from pytest_qualbench.sections import rankers
from pytest_qualbench.sections.head_to_head import HEAD_TO_HEAD_METRICS, head_to_head, lift
from pytest_qualbench.sections.rankers import (
    BM25_STOPWORDS,
    Bm25Analyzer,
    Bm25Ranker,
    FlatfileRanker,
    Ranker,
    RankerSpecError,
    chunk_quality,
    flatfile_terms,
    lucene_bm25,
    lucene_idf,
    parse_ranker_names,
    quality_score,
    register_ranker,
    registered_rankers,
    resolve_ranker,
    result_chunk_indexes,
)


def chunk(text: str, source: str = "s", position: int = 0, **metadata: Any) -> Chunk:
    return Chunk(text, "", source, "durable", position, source, metadata)


def lesson(entry_id: str, haystack: str, outcome: str, confidence: float) -> dict[str, Any]:
    return {
        "id": entry_id,
        "content_type": "plaintext",
        "haystack": haystack,
        "source_label": f"lessons-{entry_id}",
        "source_kind": "durable",
        "cases": [],
        "metadata": {"outcome": outcome, "confidence": confidence},
    }


# Each failed attempt repeats the query's words, so text similarity ranks it above
# the fix that worked; only the metadata tells them apart.
LESSONS = [
    lesson(
        "ci_1",
        "Flaky CI timeout: raised the pytest timeout for the flaky CI job. "
        "The flaky CI timeout came back.",
        "failure",
        0.9,
    ),
    lesson(
        "ci_2",
        "CI timeout was flaky until we mocked the slow network call in the fixture.",
        "success",
        0.9,
    ),
    lesson(
        "db_1",
        "Deadlock in migrations: retried the deadlocked migration. "
        "Retrying the migration deadlock did not help.",
        "failure",
        0.8,
    ),
    lesson(
        "db_2",
        "Migration deadlock resolved by taking the advisory lock before altering tables.",
        "success",
        0.8,
    ),
]


def lesson_case(case_id: str, query: str, needle: str) -> Case:
    return Case(case_id, query, (needle,), "rrf(porter+trigram)", 1, "", "plaintext", "t", 1)


LESSON_CASES = [
    lesson_case("ci_q1", "flaky CI timeout", "mocked the slow network call"),
    lesson_case("db_q1", "migration deadlock", "advisory lock"),
]


def lesson_entries(lessons: Sequence[dict[str, Any]] = LESSONS) -> list[Entry]:
    entries = []
    for line, raw in enumerate(lessons, start=1):
        entry, errors = parse_entry(raw, "lessons.jsonl", line)
        assert entry is not None and not errors
        entries.append(entry)
    return entries


@pytest.fixture(scope="module")
def lesson_engine() -> Engine:
    engine = Engine()
    engine.index(lesson_entries())
    return engine


def test_flatfile_terms_are_distinct_lowercased_and_three_characters_or_more() -> None:
    assert flatfile_terms("The DB db is on it: pool-size") == ["the", "pool", "size"]


def test_flatfile_counts_contained_terms_and_keeps_chunk_order_on_ties() -> None:
    chunks = [
        chunk("pool settings", position=0),
        chunk("nothing here", position=1),
        chunk("connection pool settings", position=2),
        chunk("POOL sizing", position=3),
    ]
    # Scores: 2, 0, 3, 1 ("settings" and "pool" are substrings; case is folded).
    assert FlatfileRanker().rank("connection pool settings", chunks) == [2, 0, 3]


def test_flatfile_matches_substrings_without_idf() -> None:
    chunks = [chunk("pooling"), chunk("pool pool pool")]
    # "pool" is inside "pooling", and repetition earns nothing: a tie, chunk order.
    assert FlatfileRanker().rank("pool", chunks) == [0, 1]


def test_bm25_analysis_lowercases_drops_lucene_stopwords_and_porter_stems() -> None:
    assert Bm25Analyzer().terms("The Cats are running, a dog is NOT.") == ["cat", "run", "dog"]
    # One-character words are no tokens; digits are word characters.
    assert Bm25Analyzer().terms("x y2 404") == ["y2", "404"]
    assert len(BM25_STOPWORDS) == 33


def test_lucene_idf_written_out() -> None:
    assert lucene_idf(3, 2) == math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    # A term in every document keeps a positive weight (Okapi's IDF would be negative).
    assert lucene_idf(3, 3) == math.log(1 + 0.5 / 3.5) > 0


def test_bm25_scores_are_the_formula_by_hand() -> None:
    # Terms: [cat, sat], [cat, cat, dog], [bird]; N = 3, avgdl = 6 / 3 = 2.
    chunks = [
        chunk("cat sat", position=0),
        chunk("cats cat dog", position=1),
        chunk("bird", position=2),
    ]
    model = lucene_bm25([Bm25Analyzer().terms(c.text) for c in chunks], k1=1.2, b=0.75)
    idf_cat = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))  # df 2
    idf_dog = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))  # df 1
    # idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))
    cat_0 = idf_cat * 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 2 / 2))
    cat_1 = idf_cat * 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 3 / 2))
    dog_1 = idf_dog * 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 3 / 2))
    assert model.get_scores(["cat", "dog"]).tolist() == pytest.approx(
        [cat_0, cat_1 + dog_1, 0.0], rel=1e-12
    )
    assert Bm25Ranker(chunks).rank("cat", chunks) == [1, 0]
    assert Bm25Ranker(chunks).rank("dogs and cats", chunks) == [1, 0]
    # A word repeated in the query counts twice, as Lucene's sum of term clauses does.
    doubled = model.get_scores(["dog", "dog"]).tolist()
    assert doubled == pytest.approx([0.0, 2 * dog_1, 0.0], rel=1e-12)


def test_bm25_indexes_the_title_with_the_text() -> None:
    titled = [Chunk("body words", "Pooling", "s", "durable", 0, "s", {}), chunk("other", "t")]
    assert Bm25Ranker(titled).rank("pooling", titled) == [0]


def test_bm25_ranks_as_bm25s_lucene_does() -> None:
    """The same analysis, k1 and b through bm25s's Lucene variant: the same order, and
    scores that differ only by Lucene 8's dropped constant k1 + 1."""
    bm25s = pytest.importorskip("bm25s")
    from pytest_qualbench.adapters.bm25s import porter_stems

    texts = [
        "connection pool settings for the database",
        "the pool of workers and the pool of connections",
        "the connection was reset by the peer",
        "nothing relevant at all",
        "database connections are pooled; pool size 10",
    ]
    chunks = [chunk(text, position=i) for i, text in enumerate(texts)]
    retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    retriever.index(
        bm25s.tokenize(texts, stopwords="en", stemmer=porter_stems, show_progress=False),
        show_progress=False,
    )
    ours = lucene_bm25([Bm25Analyzer().terms(text) for text in texts], k1=1.2, b=0.75)
    for query in ("connection pool", "database pool size", "peer reset", "workers"):
        terms = Bm25Analyzer().terms(query)
        theirs = retriever.get_scores(terms).tolist()
        assert (ours.get_scores(terms) / 2.2).tolist() == pytest.approx(theirs, rel=1e-6)
        by_bm25s = sorted(
            (i for i, score in enumerate(theirs) if score > 0), key=lambda i: (-theirs[i], i)
        )
        assert Bm25Ranker(chunks).rank(query, chunks) == by_bm25s


def test_bm25_leaves_out_chunks_without_a_query_term_and_handles_empty_input() -> None:
    chunks = [chunk("alpha beta"), chunk("gamma")]
    assert Bm25Ranker(chunks).rank("gamma", chunks) == [1]
    assert Bm25Ranker(chunks).rank("the", chunks) == []
    assert Bm25Ranker([]).rank("gamma", []) == []
    only_stopwords = [chunk("the"), chunk("a")]
    assert Bm25Ranker(only_stopwords).rank("the gamma", only_stopwords) == []


def test_results_map_to_chunks_by_source_position_text_then_by_text() -> None:
    chunks = [chunk("same", "a", 0), chunk("same", "b", 0), chunk("other", "b", 1)]
    results = [
        Result("same", source="b", position=0),
        Result("other"),  # a custom engine that reports text only
        Result("same", source="b", position=0),  # repeated: kept once
        Result("not a chunk"),
    ]
    assert result_chunk_indexes(results, chunks) == [1, 2]


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({"outcome": "success", "confidence": 0.9}, (1.0 + 0.9) / 2),
        ({"outcome": "Failure", "confidence": 0.9}, (0.0 + 0.9) / 2),
        ({"outcome": "partial"}, (0.5 + 0.5) / 2),
        ({"confidence": 7}, (0.5 + 1.0) / 2),
        ({"outcome": "shipped", "confidence": "high"}, (0.5 + 0.5) / 2),
        ({"confidence": True}, (0.5 + 0.5) / 2),
        ({}, 0.5),
    ],
)
def test_chunk_quality(metadata: dict[str, Any], expected: float) -> None:
    assert chunk_quality(metadata) == pytest.approx(expected)


def test_quality_score_compresses_rank_then_multiplies_by_quality() -> None:
    assert quality_score(1, 0.5) == pytest.approx(1.0 * (0.4 + 0.6 * 0.5))
    assert quality_score(4, 1.0) == pytest.approx(4**-0.3 * 1.0)
    # A proven fix at rank 2 overtakes a confident failure at rank 1 ...
    assert quality_score(2, (1.0 + 0.9) / 2) > quality_score(1, (0.0 + 0.9) / 2)
    # ... while equal quality never reorders.
    assert quality_score(1, 0.5) > quality_score(2, 0.5)


def test_quality_keeps_the_engine_order_without_metadata() -> None:
    engine = Engine()
    engine.index(lesson_entries([{**raw, "metadata": {}} for raw in LESSONS]))
    chunks = engine.chunks()
    quality = resolve_ranker("quality")(engine, chunks)
    plain = resolve_ranker("engine")(engine, chunks)
    for query in ("flaky CI timeout", "migration deadlock"):
        assert quality.rank(query, chunks) == plain.rank(query, chunks) != []


def test_quality_lifts_precision_at_1_over_a_text_similar_failed_attempt(
    lesson_engine: Engine,
) -> None:
    rankers = [(name, resolve_ranker(name)) for name in ("flatfile", "bm25", "engine", "quality")]
    section = head_to_head(LESSON_CASES, lambda _: (lesson_engine, lesson_engine.chunks()), rankers)
    precision = section["metrics"]["precision@1"]
    assert precision == {"flatfile": 0.0, "bm25": 0.0, "engine": 0.0, "quality": 1.0}
    # The fix is second for every text ranker: mrr 1/2; quality puts it first.
    assert section["metrics"]["mrr"] == {
        "flatfile": 0.5,
        "bm25": 0.5,
        "engine": 0.5,
        "quality": 1.0,
    }
    assert section["lift"]["quality"]["precision@1"] == {"absolute": -1.0, "relative": -1.0}


def test_head_to_head_shape_and_lift_arithmetic(lesson_engine: Engine) -> None:
    rankers = [(name, resolve_ranker(name)) for name in ("quality", "engine")]
    negative = Case("neg", "zzz", (), "none", 0, "", "plaintext", "t", 1)
    section = head_to_head(
        [*LESSON_CASES, negative], lambda _: (lesson_engine, lesson_engine.chunks()), rankers
    )
    assert section["rankers"] == ["quality", "engine"]
    assert section["cases"] == 2 and section["depth"] == 10
    assert list(section["metrics"]) == list(HEAD_TO_HEAD_METRICS)
    assert section["by_content_type"]["plaintext"]["cases"] == 2
    assert section["by_content_type"]["plaintext"]["metrics"] == section["metrics"]
    # engine 1/2 against quality 1: ndcg with one relevant chunk is 1/log2(3) against 1.
    ndcg = section["lift"]["quality"]["ndcg@10"]
    assert ndcg["absolute"] == pytest.approx(1 / math.log2(3) - 1)
    assert ndcg["relative"] == pytest.approx((1 / math.log2(3) - 1) / 1)


def test_lift_is_absolute_and_relative_to_the_other_ranker() -> None:
    assert lift(0.9, 0.6) == {"absolute": pytest.approx(0.3), "relative": pytest.approx(0.3 / 0.6)}
    assert lift(0.5, 0.0) == {"absolute": 0.5, "relative": None}
    assert lift(None, 0.5) == {"absolute": None, "relative": None}


def test_no_lift_without_the_engine_ranker(lesson_engine: Engine) -> None:
    section = head_to_head(
        LESSON_CASES,
        lambda _: (lesson_engine, lesson_engine.chunks()),
        [("flatfile", resolve_ranker("flatfile"))],
    )
    assert section["lift"] == {}


class ReversedRanker:
    def rank(self, query: str, chunks: Sequence[Chunk]) -> list[int]:
        return list(reversed(range(len(chunks))))


def make_reversed(engine: SearchEngine, chunks: Sequence[Chunk]) -> Ranker:
    return ReversedRanker()


def test_registry_and_module_factory_specs(monkeypatch: pytest.MonkeyPatch) -> None:
    assert {"flatfile", "bm25", "engine", "quality"} <= set(registered_rankers())
    monkeypatch.setattr(rankers, "_REGISTRY", dict(rankers._REGISTRY))
    register_ranker("reversed-for-test", make_reversed)
    assert resolve_ranker("reversed-for-test") is make_reversed
    assert resolve_ranker("tests.test_rankers:make_reversed") is make_reversed


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("bm52", "unknown ranker 'bm52'; registered: "),
        ("tests.no_such_module:make", "cannot load it"),
        ("tests.test_rankers:no_such_factory", "cannot load it"),
        ("tests.test_rankers:LESSONS", "not callable"),
    ],
)
def test_bad_ranker_specs(spec: str, message: str) -> None:
    with pytest.raises(RankerSpecError, match=message):
        resolve_ranker(spec)


def test_bad_ranker_names_are_refused() -> None:
    with pytest.raises(RankerSpecError):
        register_ranker("a:b", make_reversed)


def test_ranker_names_option_splits_strips_and_deduplicates() -> None:
    assert parse_ranker_names(" bm25, engine,,bm25 ,flatfile") == ("bm25", "engine", "flatfile")
