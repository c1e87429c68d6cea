"""Which kernel walks the postings: the compiled extension (`_postings.c`) or its reference in
Python (`reference_kernel`).

Both give the same rankings and scores, bit for bit; the compiled one is several times
faster. `QUALBENCH_KERNEL` chooses: `c` demands the extension (ImportError, naming why it
did not load, when it cannot), `python` takes the reference, and unset (or `auto`) takes
the extension when it imports and otherwise the reference, with one
`KernelFallbackWarning` saying why. An install from the sdist on a machine without a C
compiler has no extension: it runs, slower, on the reference.
"""

from __future__ import annotations

import importlib
import os
import warnings
from types import ModuleType
from typing import TYPE_CHECKING

__all__ = ["KERNEL", "KernelFallbackWarning", "chosen_kernel", "walks"]

KERNEL_VARIABLE = "QUALBENCH_KERNEL"
COMPILED = "c"
REFERENCE = "python"
AUTOMATIC = "auto"
COMPILED_MODULE = "pytest_qualbench.engine._postings"
REFERENCE_MODULE = "pytest_qualbench.engine.reference_kernel"


class KernelFallbackWarning(RuntimeWarning):
    """The compiled kernel could not be imported; the reference in Python runs instead."""


def chosen_kernel(setting: str | None) -> tuple[str, ModuleType]:
    """The kernel `setting` (QUALBENCH_KERNEL's value) asks for: its name and module.

    ValueError for a setting that is none of c, python, auto; ImportError for `c` when the
    extension cannot be imported."""
    wanted = (setting or AUTOMATIC).strip().lower()
    if wanted == REFERENCE:
        return REFERENCE, importlib.import_module(REFERENCE_MODULE)
    if wanted not in (COMPILED, AUTOMATIC):
        raise ValueError(
            f"{KERNEL_VARIABLE}={setting!r}: expected {COMPILED}, {REFERENCE} or {AUTOMATIC}"
        )
    try:
        return COMPILED, importlib.import_module(COMPILED_MODULE)
    except ImportError as error:
        if wanted == COMPILED:
            raise ImportError(
                f"{KERNEL_VARIABLE}=c, but the compiled kernel {COMPILED_MODULE} cannot be "
                f"imported ({error}); reinstall with a C compiler, or set "
                f"{KERNEL_VARIABLE}=python"
            ) from error
        warnings.warn(
            f"the compiled kernel cannot be imported ({error}); the engine runs on the "
            f"reference kernel in Python, slower (set {KERNEL_VARIABLE}=python to choose it)",
            KernelFallbackWarning,
            stacklevel=2,
        )
        return REFERENCE, importlib.import_module(REFERENCE_MODULE)


if TYPE_CHECKING:
    # Both kernels have the extension's signatures (`_postings.pyi`).
    from pytest_qualbench.engine import _postings as walks

    KERNEL: str
else:
    KERNEL, walks = chosen_kernel(os.environ.get(KERNEL_VARIABLE))
