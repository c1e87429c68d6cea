"""Releasing a build's freed memory is safe to call anywhere, and keeps the index whole;
pausing the collector puts it back as it was."""

from __future__ import annotations

import gc
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


def test_collector_paused_turns_it_off_and_back_on() -> None:
    assert gc.isenabled()
    with memory.collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_collector_paused_turns_it_back_on_after_an_error() -> None:
    with pytest.raises(KeyError), memory.collector_paused():
        raise KeyError("restore failed")
    assert gc.isenabled()


def test_collector_paused_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        with memory.collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
