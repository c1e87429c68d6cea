"""QUALBENCH_KERNEL chooses the kernel; a compiled kernel that cannot be imported falls back
with one warning, unless it was demanded."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest

from pytest_qualbench.engine import reference_kernel
from pytest_qualbench.engine.kernel import (
    COMPILED_MODULE,
    KernelFallbackWarning,
    chosen_kernel,
)
from tests.kernels import COMPILED, needs_compiled


@pytest.fixture
def extension_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    # None in sys.modules makes the import itself fail, as a missing or broken build does.
    monkeypatch.setitem(sys.modules, COMPILED_MODULE, None)


@needs_compiled
@pytest.mark.parametrize("setting", [None, "", "auto", "c", " C "])
def test_the_compiled_kernel_runs_when_it_imports(setting: str | None) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert chosen_kernel(setting) == ("c", COMPILED)


def test_python_chooses_the_reference() -> None:
    assert chosen_kernel("python") == ("python", reference_kernel)


@pytest.mark.usefixtures("extension_missing")
def test_a_missing_extension_falls_back_to_the_reference_with_one_warning() -> None:
    with pytest.warns(KernelFallbackWarning, match="compiled kernel cannot be imported") as caught:
        assert chosen_kernel(None) == ("python", reference_kernel)
    assert len(caught) == 1
    assert "\n" not in str(caught[0].message)


@pytest.mark.usefixtures("extension_missing")
def test_a_demanded_compiled_kernel_that_is_missing_fails_loudly() -> None:
    with pytest.raises(ImportError, match="QUALBENCH_KERNEL=c, but the compiled kernel"):
        chosen_kernel("c")


def test_an_unknown_setting_is_refused() -> None:
    with pytest.raises(ValueError, match="QUALBENCH_KERNEL='rust': expected c, python or auto"):
        chosen_kernel("rust")


@pytest.mark.parametrize(
    ("setting", "kernel"),
    [
        ("python", "python"),
        pytest.param("c", "c", marks=needs_compiled),
        pytest.param("", "c", marks=needs_compiled),
    ],
)
def test_the_engine_names_the_kernel_that_ran(setting: str, kernel: str) -> None:
    # A fresh process: the kernel is chosen once, when the engine is first imported.
    code = "from pytest_qualbench.engine import Engine; print(Engine().config['kernel'])"
    ran = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "QUALBENCH_KERNEL": setting},
        capture_output=True,
        text=True,
        check=True,
    )
    assert ran.stdout.strip() == kernel
