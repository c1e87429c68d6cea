"""Memory work around a build or a restore: freed pages, and the cyclic collector.

A build's temporaries are freed when it ends, but glibc's allocator keeps most
of those pages mapped for the process to reuse: at 10^4 chunks 100 MB of the
~220 MB resident after a build was such free heap. `malloc_trim` returns it.

Restoring a cached index allocates hundreds of thousands of long-lived containers
(chunks, the parsed manifest), none of them garbage. Each allocation burst can
start a full collection that walks every object in the process, which in a pytest
session includes every collected item: at 10^5 cases those walks were a third of
the load. (Pausing the collector for a build measured no gain there.)
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import gc
from collections.abc import Callable, Iterator


@functools.lru_cache(maxsize=1)
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, None where the C library has none (macOS, Windows, musl)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    trim: Callable[[int], int] | None = getattr(ctypes.CDLL(name), "malloc_trim", None)
    return trim


def release_free_memory() -> None:
    """Return the allocator's free pages to the OS; nothing where that is not possible."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block, back as it was after it.

    Reference counting still frees what the block drops; only cycles wait for the
    next collection after it.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
