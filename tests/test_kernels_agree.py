"""End to end: the shipped benchmark gives one report on either kernel, timings aside.

`pytest --qualbench` over bench_fixtures/ with its floors runs twice in fresh processes,
once on the compiled kernel and once with QUALBENCH_KERNEL=python; every case record,
metric and floor must be the same, and the report must say which kernel ran.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_qualbench.report.build import without_timings
from pytest_qualbench.report.model import Report
from tests.kernels import needs_compiled

PROJECT = Path(__file__).resolve().parent.parent


def gate_report(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, kernel: str) -> Report:
    """The report of a subprocess `pytest --qualbench` over the shipped fixtures on `kernel`."""
    report = pytester.path / f"report-{kernel}.json"
    monkeypatch.setenv("QUALBENCH_KERNEL", kernel)
    result = pytester.runpytest_subprocess(
        "--qualbench", f"--qualbench-report={report}", "-p", "no:cacheprovider"
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    loaded: Report = json.loads(report.read_text(encoding="utf-8"))
    return loaded


@needs_compiled
def test_the_reference_kernel_gives_the_compiled_kernels_report(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(PROJECT / "bench_fixtures", pytester.path / "bench_fixtures")
    shutil.copy(PROJECT / "pyproject.toml", pytester.path / "pyproject.toml")
    compiled = gate_report(pytester, monkeypatch, "c")
    reference = gate_report(pytester, monkeypatch, "python")

    kernels = [
        report["metadata"]["engine"]["config"].pop("kernel") for report in (compiled, reference)
    ]
    assert kernels == ["c", "python"]
    assert len(compiled["cases"]) > 300
    assert without_timings(reference) == without_timings(compiled)
