"""The kernels a test can call: the reference always, the compiled one where it is built.

An install without a C compiler has no compiled kernel (its optional build only warned),
and the engine runs on the reference: tests of the compiled kernel itself skip there,
with `NOT_BUILT` as the reason. CI cannot skip them: .ci/run checks that the compiled
kernel imports before the suite runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

import pytest

from pytest_qualbench.engine import bm25, chunk_words, fusion, reference_kernel, trigram_postings
from pytest_qualbench.engine.kernel import COMPILED_MODULE

NOT_BUILT = "the compiled kernel is not built (installed without a C compiler)"


def compiled_kernel() -> ModuleType | None:
    """The compiled kernel, or None where it is not built."""
    try:
        return importlib.import_module(COMPILED_MODULE)
    except ImportError:
        return None


COMPILED = compiled_kernel()
needs_compiled = pytest.mark.skipif(COMPILED is None, reason=NOT_BUILT)
# Each kernel as a parameter, the compiled one skipped where it is not built.
KERNEL_PARAMS = [
    pytest.param(COMPILED, id="c", marks=needs_compiled),
    pytest.param(reference_kernel, id="python"),
]
# The kernels this install has, the compiled one first.
BUILT_KERNELS = tuple(kernel for kernel in (COMPILED, reference_kernel) if kernel is not None)

# Every engine module that calls the kernel, each through its own `walks` name.
KERNEL_USERS = (bm25, chunk_words, fusion, trigram_postings)


@contextmanager
def running_on(kernel: ModuleType) -> Iterator[None]:
    """The engine's modules call `kernel` inside the block, whichever one was chosen."""
    saved = [user.walks for user in KERNEL_USERS]
    for user in KERNEL_USERS:
        user.walks = kernel  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for user, walks in zip(KERNEL_USERS, saved, strict=True):
            user.walks = walks  # type: ignore[attr-defined]
