"""Releasing a build's freed memory is safe to call anywhere, and keeps the index whole."""

from __future__ import annotations

import platform

import pytest

from pytest_qualbench.engine import memory
from pytest_qualbench.engine.builtin import Engine
from pytest_qualbench.engine.types import Chunk


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_glibc_has_malloc_trim() -> None:
    assert memory._malloc_trim() is not None


def test_release_then_search() -> None:
    engine = Engine()
    engine.index_chunks([Chunk("alpha beta", "", "s", "durable", 0)])
    memory.release_free_memory()
    assert [result.text for result in engine.search("alpha")] == ["alpha beta"]
