"""Helpers for building entries the way the fixture loader would."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pytest_qualbench.fixtures.schema import Entry

MakeEntry = Callable[..., Entry]


@pytest.fixture
def make_entry() -> MakeEntry:
    def make(
        entry_id: str,
        content_type: str,
        haystack: str,
        *,
        kind: str = "durable",
        source: str | None = None,
    ) -> Entry:
        return Entry(
            id=entry_id,
            content_type=content_type,
            haystack=haystack,
            source_label=source or f"bench-{entry_id}",
            source_kind=kind,
            cases=(),
            path="fixtures.jsonl",
            line=1,
        )

    return make
