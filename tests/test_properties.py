"""Properties on random input: the loader, the chunkers and the built-in engine.

What "the chunks cover the haystack" means here, from docs/engine.md (Chunking):
chunkers cut only at line breaks, after turning CRLF and lone CR into LF, and
never cut a line. So every non-blank line of the normalised haystack occurs
whole in some chunk's text. The one exception is a JSON document over 4 KB,
which is re-rendered along its key paths (`"key": value`, one line, `, ` and
`: ` separators): there every key and every scalar value, rendered as JSON,
occurs in some chunk.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_qualbench.engine import ALL_KINDS, Engine
from pytest_qualbench.engine.chunking import MAX_CHUNK_CHARS, chunk_entry, normalize_newlines
from pytest_qualbench.fixtures.loading import load_fixture_file, load_fixture_set
from pytest_qualbench.fixtures.parsing import parse_entry
from pytest_qualbench.fixtures.schema import CONTENT_TYPES, EXPECTED_LAYERS, SOURCE_KINDS, Entry
from tests import conftest

# Loader ---------------------------------------------------------------------------

FIELD_NAMES = (
    "id", "content_type", "haystack", "source_label", "source_kind", "cases", "metadata",
    "case_id", "query", "needles", "expected_layer", "expected_rank_ceiling", "neeldes",
)  # fmt: skip
json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(FIELD_NAMES) | st.text(max_size=8), children, max_size=6)
    ),
    max_leaves=25,
)
valid_looking_case = st.fixed_dictionaries(
    {
        "case_id": st.text(max_size=6),
        "query": st.text(max_size=6),
        "needles": st.lists(st.text(max_size=4), max_size=3) | json_values,
        "expected_layer": st.sampled_from(EXPECTED_LAYERS) | json_values,
        "expected_rank_ceiling": st.integers(-2, 5) | json_values,
    }
)
valid_looking_entry = st.fixed_dictionaries(
    {
        "id": st.text(max_size=6) | json_values,
        "content_type": st.sampled_from(CONTENT_TYPES) | json_values,
        "haystack": st.text(max_size=30) | json_values,
        "source_label": st.text(max_size=6),
        "source_kind": st.sampled_from(SOURCE_KINDS) | json_values,
        "cases": st.lists(valid_looking_case | json_values, max_size=3) | json_values,
    },
    optional={"metadata": json_values, "neeldes": json_values},
)


@settings(max_examples=100, deadline=None)
@given(json_values | valid_looking_entry)
def test_any_json_value_gives_an_entry_or_errors_never_an_exception(raw: Any) -> None:
    entry, errors = parse_entry(raw, "f.jsonl", 3)
    assert all(error.path == "f.jsonl" and error.line == 3 and error.field for error in errors)
    if entry is None:
        assert errors
        return
    assert entry.content_type in CONTENT_TYPES and entry.source_kind in SOURCE_KINDS
    for case in entry.cases:
        assert case.expected_layer in EXPECTED_LAYERS
        assert isinstance(case.expected_rank_ceiling, int) and case.expected_rank_ceiling >= 0
        assert all(isinstance(needle, str) and needle for needle in case.needles)
        assert case.is_negative == (case.expected_layer == "none")


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.binary(max_size=40) | json_values.map(json.dumps).map(str.encode), max_size=6))
def test_any_bytes_load_into_entries_and_located_errors(tmp_path: Path, lines: list[bytes]) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(b"\n".join(lines))
    loaded = load_fixture_file(path, "fuzz.jsonl")
    line_count = max(1, len(b"\n".join(lines).split(b"\n")))
    assert all(1 <= error.line <= line_count for error in loaded.errors)
    assert loaded.entries or loaded.errors


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.lists(st.tuples(st.sampled_from("abc"), st.lists(st.sampled_from("pqrs"), max_size=3))),
        min_size=1,
        max_size=3,
    )
)
def test_the_first_of_each_id_and_case_id_is_kept_and_every_repeat_is_an_error(
    tmp_path: Path, files: list[list[tuple[str, list[str]]]]
) -> None:
    """Random files of entries whose ids and case ids collide at random."""
    paths = []
    for number, entries in enumerate(files):
        path = tmp_path / f"f{number}.jsonl"
        written_entries = [
            conftest.entry(entry_id, "h", [conftest.case(c, "q", ["h"]) for c in case_ids])
            for entry_id, case_ids in entries
        ]
        path.write_text(conftest.jsonl(written_entries), encoding="utf-8")
        paths.append(path)
    written = [item for entries in files for item in entries]
    kept_entries: list[tuple[str, list[str]]] = []
    for entry_id, case_ids in written:
        if entry_id not in [kept_id for kept_id, _ in kept_entries]:
            kept_entries.append((entry_id, case_ids))
    kept_case_ids = list(dict.fromkeys(c for _, case_ids in kept_entries for c in case_ids))

    loaded = load_fixture_set(paths, tmp_path)
    assert [e.id for e in loaded.entries()] == [entry_id for entry_id, _ in kept_entries]
    assert [c.case_id for c in loaded.cases()] == kept_case_ids
    repeats = [error for error in loaded.errors() if error.field in ("id", "case_id")]
    # A repeated entry is one error; its cases go with it and are not counted again.
    cases_in_kept_entries = sum(len(case_ids) for _, case_ids in kept_entries)
    assert len(repeats) == (len(written) - len(kept_entries)) + (
        cases_in_kept_entries - len(kept_case_ids)
    )


# Chunkers -------------------------------------------------------------------------

STRUCTURE_LINES = (
    "# Title", "## Section", "#### Deep", "##### too deep", "```", "~~~", "```python",
    "Human: hello", "Assistant: hi", "Human:", "", "   ", "\t", "{", "}", "[1, 2]",
    '{"key": "value"}', "- item", "    indented code",
)  # fmt: skip
structured_lines = st.lists(st.sampled_from(STRUCTURE_LINES) | st.text(max_size=60), max_size=40)
haystacks = st.builds(
    lambda parts, newline: newline.join(parts),
    structured_lines,
    st.sampled_from(["\n", "\r\n", "\r"]),
)
json_documents = st.builds(
    lambda value, padding: json.dumps({"padding": "p" * padding, "value": value}, indent=1),
    json_values,
    st.integers(0, 2 * MAX_CHUNK_CHARS),
)


def make_entry(entry_id: str, content_type: str, haystack: str, **fields: str) -> Entry:
    return Entry(
        id=entry_id,
        content_type=content_type,
        haystack=haystack,
        source_label=fields.get("source_label", f"bench-{entry_id}"),
        source_kind=fields.get("source_kind", "durable"),
        cases=(),
        path="f.jsonl",
        line=1,
    )


def json_parts(value: Any) -> Iterator[str]:
    """Every key and scalar of a JSON value, rendered as the JSON chunker renders them."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield json.dumps(key, ensure_ascii=False)
            yield from json_parts(item)
    elif isinstance(value, list):
        for item in value:
            yield from json_parts(item)
    else:
        yield json.dumps(value, ensure_ascii=False)


def must_be_covered(content_type: str, haystack: str) -> list[str]:
    """The strings the chunks must hold between them (module docstring)."""
    text = normalize_newlines(haystack)
    maybe_json = content_type == "json" or (
        content_type == "curated" and text.lstrip().startswith(("{", "["))
    )
    if maybe_json and len(text) > MAX_CHUNK_CHARS:
        try:
            return list(json_parts(json.loads(text)))
        except json.JSONDecodeError:
            pass
    return [line for line in text.split("\n") if line.strip()]


def assert_covered(content_type: str, haystack: str) -> None:
    chunks = chunk_entry(make_entry("e_001", content_type, haystack))
    assert [chunk.position for chunk in chunks] == list(range(len(chunks)))
    for part in must_be_covered(content_type, haystack):
        assert any(part in chunk.text for chunk in chunks), part


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(CONTENT_TYPES), haystacks | st.text())
def test_chunks_cover_every_line_of_any_text(content_type: str, haystack: str) -> None:
    assert_covered(content_type, haystack)


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(["json", "curated"]), json_documents)
def test_chunks_cover_every_key_and_value_of_any_json(content_type: str, document: str) -> None:
    assert_covered(content_type, document)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["markdown", "plaintext", "transcript"]), st.integers(1, 3))
def test_long_documents_are_covered_across_chunks(content_type: str, seed: int) -> None:
    """Past 4 KB and 200 paragraphs the chunkers split and window; nothing may fall between."""
    rng = random.Random(seed)
    lines = [
        rng.choice(["# Part", "Human: ask", "Assistant: answer", ""])
        + f" line{n} "
        + "w" * rng.randrange(200)
        for n in range(600)
    ]
    assert_covered(content_type, "\n".join(lines))


# Engine ---------------------------------------------------------------------------

VOCABULARY = ("pool", "connection", "settings", "cache", "evict", "retry", "maxIdleConns", "p99")
words = st.sampled_from(VOCABULARY) | st.text(min_size=1, max_size=8)
texts = st.lists(words, max_size=30).map(" ".join)


@st.composite
def corpora(draw: st.DrawFn) -> list[Entry]:
    content_type = draw(st.sampled_from(CONTENT_TYPES))
    count = draw(st.integers(1, 6))
    return [
        make_entry(
            f"e_{n:03d}",
            content_type,
            draw(haystacks | texts),
            source_label=draw(st.sampled_from(["bench-a", "bench-b", f"bench-{n}"])),
            source_kind=draw(st.sampled_from(SOURCE_KINDS)),
        )
        for n in range(count)
    ]


def indexed(entries: list[Entry]) -> Engine:
    engine = Engine()
    engine.index(entries)
    return engine


@settings(max_examples=50, deadline=None)
@given(
    corpora(), st.lists(texts | st.text(max_size=20), min_size=1, max_size=4), st.integers(1, 15)
)
def test_search_never_exceeds_the_limit_and_repeats_itself(
    entries: list[Entry], queries: list[str], limit: int
) -> None:
    engine = indexed(entries)
    chunk_texts = {chunk.text for chunk in engine.chunks()}
    for query in queries:
        results = engine.search(query, limit=limit, kinds=ALL_KINDS)
        assert len(results) <= limit
        assert all(result.text in chunk_texts for result in results)
        assert engine.search(query, limit=limit, kinds=ALL_KINDS) == results


@settings(max_examples=50, deadline=None)
@given(corpora(), st.lists(texts, min_size=1, max_size=4), st.randoms(use_true_random=False))
def test_entry_order_does_not_change_rankings(
    entries: list[Entry], queries: list[str], rng: random.Random
) -> None:
    shuffled = list(entries)
    rng.shuffle(shuffled)
    first, second = indexed(entries), indexed(shuffled)
    assert first.chunks() == second.chunks()
    for query in queries:
        assert first.search(query, kinds=ALL_KINDS) == second.search(query, kinds=ALL_KINDS)
        assert first.corrected_query(query) == second.corrected_query(query)
