"""End to end: the shipped benchmark gives one report on either kernel, timings aside, and
the four shared IR collections are ranked alike by both.

`pytest --qualbench` over bench_fixtures/ with its floors runs twice in fresh processes,
once on the compiled kernel and once with QUALBENCH_KERNEL=python; every case record,
metric and floor must be the same, and the report must say which kernel ran.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchmarks.quality import COLLECTIONS, SHARED_DATA, load_collection, missing_collections
from pytest_qualbench.engine import Engine
from pytest_qualbench.report.build import without_timings
from pytest_qualbench.report.model import Report
from tests.kernels import BUILT_KERNELS, needs_compiled, running_on

PROJECT = Path(__file__).resolve().parent.parent
# Results compared per query: deeper than any metric reads, so the walks' ranking of many
# candidates is compared too, not only its first page.
DEPTH = 100


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


@needs_compiled
@pytest.mark.skipif(
    bool(missing_collections()), reason=f"the shared IR data is not under {SHARED_DATA}"
)
@pytest.mark.parametrize("name", COLLECTIONS)
def test_both_kernels_rank_the_shared_collections_alike(tmp_path: Path, name: str) -> None:
    # CISI, MEDLINE, CACM and NPL: natural-language questions over text nobody here
    # wrote, each indexed and searched on each kernel; every result's source, position,
    # score (to the bit) and layer must agree.
    collection = load_collection(name, tmp_path)
    queries = [case.query for case in collection.cases]
    rankings = []
    for kernel in BUILT_KERNELS:
        with running_on(kernel):
            engine = Engine()
            engine.index_chunks(collection.chunks)
            rankings.append(
                [
                    [
                        (r.source, r.position, r.score.hex(), r.layer)
                        for r in engine.search(query, limit=DEPTH)
                    ]
                    for query in queries
                ]
            )
    compiled, reference = rankings
    assert sum(len(ranking) for ranking in compiled) > DEPTH // 2 * len(queries)
    assert reference == compiled
