"""What a fixture line and a stored index keep of their mappings: read-only copies, and
one shared empty mapping for the many records that have none (a 50k fixture set held
10^5 empty proxies, each traversed by every full garbage collection of the run)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_qualbench.engine.snapshot import chunk_columns, chunks_of
from pytest_qualbench.engine.types import Chunk
from pytest_qualbench.fixtures.parsing import parse_entry
from pytest_qualbench.fixtures.schema import EMPTY_MAPPING


def raw_entry(**extra: Any) -> dict[str, Any]:
    case = {
        "case_id": "md_a_q1",
        "query": "alpha",
        "needles": ["alpha"],
        "expected_layer": "porter",
        "expected_rank_ceiling": 3,
    }
    return {
        "id": "md_a", "content_type": "markdown", "haystack": "alpha beta",
        "source_label": "a.md", "source_kind": "durable", "cases": [case], **extra,
    }  # fmt: skip


def test_an_entry_and_case_without_metadata_or_grades_share_the_one_empty_mapping() -> None:
    first, _ = parse_entry(raw_entry(), "f.jsonl", 1)
    second, _ = parse_entry(raw_entry(), "f.jsonl", 2)
    assert first is not None and second is not None
    assert first.metadata is EMPTY_MAPPING and second.metadata is EMPTY_MAPPING
    assert first.cases[0].relevant is EMPTY_MAPPING
    assert dict(EMPTY_MAPPING) == {}


def test_given_metadata_is_a_read_only_copy_of_the_line() -> None:
    raw = raw_entry(metadata={"team": "search"})
    parsed, errors = parse_entry(raw, "f.jsonl", 1)
    assert parsed is not None and not errors
    raw["metadata"]["team"] = "changed after parsing"
    assert dict(parsed.metadata) == {"team": "search"}
    with pytest.raises(TypeError):
        parsed.metadata["team"] = "x"  # type: ignore[index]


def test_restored_chunks_without_metadata_share_the_empty_mapping() -> None:
    chunks = [
        Chunk(text="alpha", title="A", source="a.md", kind="durable", position=0),
        Chunk(
            text="beta", title="B", source="b.md", kind="durable", position=0,
            metadata={"team": "search"},
        ),
    ]  # fmt: skip
    restored = chunks_of(chunk_columns(chunks))
    assert restored == tuple(chunks)
    assert restored[0].metadata is EMPTY_MAPPING
    assert dict(restored[1].metadata) == {"team": "search"}
    with pytest.raises(TypeError):
        restored[1].metadata["team"] = "x"  # type: ignore[index]
