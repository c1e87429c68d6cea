"""Hostile text through the engine's public API: it indexes and answers, on both kernels.

NUL bytes, lone surrogates, 100,000-character queries, one word a million times, a
5,000-letter token, no document, one document and many identical ones: each must give
a ranking (possibly empty) of chunks the engine holds, the same on either kernel and
under either label rule, and never crash the process. The sanitizer stage of .ci/run runs this file too.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_qualbench.engine import (
    ALL_KINDS,
    Engine,
)
from pytest_qualbench.engine.builtin import LABEL_RULES
from pytest_qualbench.fixtures.schema import Entry
from tests.engine.conftest import MakeEntry
from tests.kernels import BUILT_KERNELS, running_on

CONTENT_TYPES = ("markdown", "json", "plaintext", "transcript")
HOSTILE = {
    "nul bytes": "conn\x00ection pool\x00\x00 settings",
    "lone surrogates": "\ud800 retry \udfff policy \ud83d",
    "long token": "x" * 5000,
    "long query": ("maxIdleConns defaults " * 5000)[:100_000],
    "repeated word": " ".join(["pool"] * 1000),
    "control and bidi": "\u202e\u0007pool\u200b\ufeff settings\r\n\t",
    "astral": "\U0001f600 \U0001d518 pool",
}


Ranked = list[list[tuple[str, int, float, str | None]]]


def answers(entries: list[Entry], queries: list[str]) -> Ranked:
    """Each query's results as (source, position, score, layer), on each kernel and under
    each label rule (`labels=fts5` reads every returned chunk's text): the kernels must
    agree, the rules must rank alike, and every result must be a chunk the engine holds.
    The default rule's answers are returned."""
    found: dict[tuple[int, str], Ranked] = {}
    for number, kernel in enumerate(BUILT_KERNELS):
        with running_on(kernel):
            for rule in LABEL_RULES:
                engine = Engine(labels=rule)
                engine.index(entries)
                held = {(chunk.source, chunk.position) for chunk in engine.chunks()}
                ranked = []
                for query in queries:
                    results = engine.search(query, kinds=ALL_KINDS)
                    assert all((result.source, result.position) in held for result in results)
                    ranked.append([(r.source, r.position, r.score, r.layer) for r in results])
                found[number, rule] = ranked
    for (_, rule_of), ranked in found.items():
        assert ranked == found[0, rule_of]
        assert [[hit[:3] for hit in hits] for hits in ranked] == [
            [hit[:3] for hit in hits] for hits in found[0, "fusion"]
        ]
    return found[0, "fusion"]


@pytest.mark.parametrize("content_type", CONTENT_TYPES)
def test_hostile_haystacks_and_queries(make_entry: MakeEntry, content_type: str) -> None:
    entries = [
        make_entry(f"e_{at}", content_type, text) for at, text in enumerate(HOSTILE.values())
    ]
    entries.append(make_entry("e_plain", content_type, "connection pool settings and retries"))
    answers(entries, [*HOSTILE.values(), "pool", "", "   ", "\x00"])


def test_one_word_a_million_times(make_entry: MakeEntry) -> None:
    entries = [make_entry("e_0", "plaintext", "pool " * 1_000_000)]
    assert answers(entries, ["pool", "poool"])[0]


def test_no_document_and_one_document(make_entry: MakeEntry) -> None:
    assert answers([], ["pool", ""]) == [[], []]
    assert answers([make_entry("e_0", "plaintext", "pool")], ["pool", "pol", "x"])[0]


def test_many_identical_documents(make_entry: MakeEntry) -> None:
    entries = [
        make_entry(f"e_{at:04d}", "markdown", "# Pool\n\npool settings") for at in range(3000)
    ]
    ranked = answers(entries, ["pool settings"])[0]
    # Equal scores keep (source, position) order.
    assert [source for source, *_ in ranked] == sorted(source for source, *_ in ranked)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.text(max_size=200), min_size=0, max_size=6),
    st.lists(st.text(max_size=60), min_size=1, max_size=4),
)
def test_any_text_at_all(texts: list[str], queries: list[str]) -> None:
    entries = [
        Entry(
            id=f"e_{at}",
            content_type="plaintext",
            haystack=text,
            source_label=f"bench-e_{at}",
            source_kind="durable",
            cases=(),
            path="fixtures.jsonl",
            line=1,
        )
        for at, text in enumerate(texts)
    ]
    answers(entries, queries)
