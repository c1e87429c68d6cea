"""Each chunker keeps the structure a needle may quote."""

from __future__ import annotations

import json

import pytest

from pytest_qualbench.engine.chunking import (
    MAX_CHUNK_CHARS,
    Chunked,
    chunk_entry,
    chunk_entry_with_warnings,
)
from tests.engine.conftest import MakeEntry

MARKDOWN = """# Database Guide

Intro paragraph.

## Connection Pool Settings

`maxIdleConns` defaults to 10.

```yaml
# a comment, not a heading
pool: 10
```

### Timeouts

Idle timeout is 30s.

##### Deep heading stays inside its section

## Replication
Replicas lag.
"""


def test_markdown_sections_keep_heading_line_and_path(make_entry: MakeEntry) -> None:
    chunks = chunk_entry(make_entry("md_001", "markdown", MARKDOWN))
    assert [c.title for c in chunks] == [
        "Database Guide",
        "Database Guide > Connection Pool Settings",
        "Database Guide > Connection Pool Settings > Timeouts",
        "Database Guide > Replication",
    ]
    assert chunks[1].text.startswith("## Connection Pool Settings\n")
    assert "# a comment, not a heading\npool: 10\n```" in chunks[1].text
    assert "##### Deep heading" in chunks[2].text
    assert [c.position for c in chunks] == [0, 1, 2, 3]
    origins = {(c.source, c.kind, c.entry_id) for c in chunks}
    assert origins == {("bench-md_001", "durable", "md_001")}


def test_markdown_large_section_splits_at_blank_lines_but_never_inside_a_fence(
    make_entry: MakeEntry,
) -> None:
    paragraph = "word " * 300
    fence = "```\n" + "\n".join(f"line {n}" for n in range(900)) + "\n\n\nafter blank\n```"
    haystack = "# Big\n\n" + "\n\n".join([paragraph] * 10) + "\n\n" + fence + "\n\ntail text"
    chunks = chunk_entry(make_entry("md_002", "markdown", haystack))
    assert len(chunks) > 2
    assert {c.title for c in chunks} == {"Big"}
    assert all(len(c.text) <= MAX_CHUNK_CHARS for c in chunks if "```" not in c.text)
    fenced = [c for c in chunks if "```" in c.text]
    assert len(fenced) == 1
    assert fenced[0].text.startswith("```") and fenced[0].text.endswith("```")


def test_small_json_stays_verbatim_with_its_key_names(make_entry: MakeEntry) -> None:
    haystack = '{"service":"api","metrics":{"http":{"p99_latency_ms":120}}}'
    chunks = chunk_entry(make_entry("json_001", "json", haystack))
    assert [c.text for c in chunks] == [haystack]
    assert chunks[0].title == "service, metrics"


def test_large_json_splits_by_key_path_and_batches_arrays_by_identity(
    make_entry: MakeEntry,
) -> None:
    users = [{"id": f"user-{n}", "bio": "x" * 200} for n in range(60)]
    document = {"version": 3, "users": users, "metrics": {"http": {"p99_latency_ms": 120}}}
    chunks = chunk_entry(make_entry("json_002", "json", json.dumps(document)))
    user_chunks = [c for c in chunks if c.title.startswith("users: ")]
    assert len(user_chunks) > 1
    assert user_chunks[0].title.startswith("users: user-0, user-1")
    assert user_chunks[0].text.startswith('"users": {"id": "user-0"')
    assert all(len(c.text) <= MAX_CHUNK_CHARS + 20 for c in chunks)
    rest = [c for c in chunks if not c.title.startswith("users")]
    assert [c.title for c in rest] == ["version", "metrics"]
    assert '"version": 3' in rest[0].text
    assert rest[1].text == '"metrics": {"http": {"p99_latency_ms": 120}}'
    seen_users = "".join(c.text for c in user_chunks)
    assert all(f'"id": "user-{n}"' in seen_users for n in range(60))


def test_invalid_json_falls_back_to_plaintext_with_a_warning(make_entry: MakeEntry) -> None:
    chunked = chunk_entry_with_warnings(make_entry("json_003", "json", '{"a": 1,\n\n"b": oops'))
    assert [c.text for c in chunked.chunks] == ['{"a": 1,', '"b": oops']
    assert len(chunked.warnings) == 1
    assert chunked.warnings[0].startswith("json_003: invalid JSON (")
    assert "indexed as plaintext" in chunked.warnings[0]


def test_plaintext_paragraphs_with_crlf(make_entry: MakeEntry) -> None:
    haystack = "First line of one\r\nmore\r\n\r\nSecond paragraph " + "y" * 100 + "\r\n"
    chunks = chunk_entry(make_entry("txt_001", "plaintext", haystack))
    assert [c.text for c in chunks] == ["First line of one\nmore", "Second paragraph " + "y" * 100]
    assert chunks[1].title == ("Second paragraph " + "y" * 100)[:80]


def test_plaintext_without_paragraphs_uses_overlapping_line_windows(
    make_entry: MakeEntry,
) -> None:
    haystack = "\n".join(f"log line {n}" for n in range(45))
    chunks = chunk_entry(make_entry("txt_002", "plaintext", haystack))
    assert [c.title for c in chunks] == ["log line 0", "log line 18", "log line 36"]
    assert chunks[0].text.split("\n")[-2:] == ["log line 18", "log line 19"]
    assert chunks[-1].text.endswith("log line 44")


@pytest.mark.parametrize("lines", [1, 19, 20])
def test_a_text_of_one_window_is_kept_as_the_entrys_own_string(
    make_entry: MakeEntry, lines: int
) -> None:
    haystack = "\n".join(f"log line {n}" for n in range(lines))
    entry = make_entry("txt_003", "plaintext", haystack)
    [chunk] = chunk_entry(entry)
    assert chunk.text is entry.haystack


def test_a_text_of_one_window_is_still_stripped_of_blank_edges(make_entry: MakeEntry) -> None:
    [chunk] = chunk_entry(make_entry("txt_004", "plaintext", "\n\nlog one\nlog two\n\n"))
    assert chunk.text == "log one\nlog two"


def test_transcript_windows_of_four_turns_overlapping_by_one(make_entry: MakeEntry) -> None:
    turns = [f"{'Human' if n % 2 == 0 else 'Assistant'}: turn {n + 1}\ndetail" for n in range(7)]
    chunks = chunk_entry(make_entry("tr_001", "transcript", "\n".join(turns)))
    assert [c.title for c in chunks] == ["turns 1-4", "turns 4-7"]
    assert chunks[0].text == "\n".join(turns[:4])
    assert chunks[1].text.startswith("Assistant: turn 4\ndetail")


def test_curated_detects_json_markdown_and_plaintext(make_entry: MakeEntry) -> None:
    as_json = chunk_entry(make_entry("cur_001", "curated", '{"name": "ADR-7", "status": "ok"}'))
    as_markdown = chunk_entry(make_entry("cur_002", "curated", "# ADR 7\n\nUse pools."))
    as_text = chunk_entry(make_entry("cur_003", "curated", "Plain note.\n\nSecond note."))
    assert [c.title for c in as_json] == ["ADR-7"]
    assert [c.title for c in as_markdown] == ["ADR 7"]
    assert [c.title for c in as_text] == ["Plain note.", "Second note."]


def test_empty_and_blank_haystacks_give_no_chunks_and_no_warning(make_entry: MakeEntry) -> None:
    for content_type in ("markdown", "plaintext", "transcript", "curated"):
        for haystack in ("", " \n\n "):
            assert chunk_entry_with_warnings(make_entry("e", content_type, haystack)) == (
                Chunked((), ())
            )


def test_transcript_without_turns_is_plaintext_with_a_warning(make_entry: MakeEntry) -> None:
    chunked = chunk_entry_with_warnings(make_entry("tr_002", "transcript", "just a note"))
    assert [c.text for c in chunked.chunks] == ["just a note"]
    assert chunked.warnings == ("tr_002: no Human:/Assistant: turns found; indexed as plaintext",)


def test_large_nested_json_pieces_name_their_key_and_path(make_entry: MakeEntry) -> None:
    rows = {f"row.{n}": "v" * 100 for n in range(60)}
    document = {"service": "api", "tables": {"a.b": rows}}
    chunks = chunk_entry(make_entry("json_004", "json", json.dumps(document)))
    nested = [c for c in chunks if c.title.startswith("tables.a.b.")]
    assert nested
    assert all(c.text.startswith('"tables": "a.b": "row.') for c in nested)
