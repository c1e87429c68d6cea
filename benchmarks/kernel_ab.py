"""Two builds of the compiled kernel (`_postings`) inside one engine, first-sight passes alternated.

`python -m benchmarks.kernel_ab CORPUS CHUNKS PASSES BEFORE.so AFTER.so` builds the
engine once over the first CHUNKS chunks of CORPUS (`benchmarks.corpora`), then runs
PASSES rounds; in each, every build answers the 200 queries once, the builds' order
flipping from round to round. Before each pass the engine is restored from the same
index state (its typo corrections forgotten) and the query memos of
`engine.analysis` are cleared, so every pass is a first sight, as the ledger's is.
It prints, per build, the median over passes of the p50 over all, exact and typo
queries, with the passes' range.

One index, one process, the builds taking turns: a change in the machine's pace
lands on both, and the only difference between two passes is the kernel. The two
builds must be two files (Python hands back the module it already loaded from a
file), each built with the flags setup.py gives a unix compiler: `gcc -shared -fPIC -O2
-ffp-contract=off -DPy_LIMITED_API=0x030B0000 -I$(python -c 'import sysconfig;
print(sysconfig.get_paths()["include"])') pytest_qualbench/engine/_postings.c -o after.so`.
A build named `python` is the reference kernel in Python (`reference_kernel`), timed
against a compiled one the same way.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from benchmarks.corpora import CORPORA
from benchmarks.corpus import Corpus
from pytest_qualbench.engine import ALL_KINDS, Engine, analysis, reference_kernel
from pytest_qualbench.engine.types import IndexState
from tests.kernels import KERNEL_USERS

KERNEL_NAME = "pytest_qualbench.engine._postings"
# A build named so is the reference kernel, timed beside a compiled one.
REFERENCE = "python"


def loaded_kernel(path: Path) -> ModuleType:
    """The extension module at `path`, loaded under the kernel's own name; for the path
    `python`, the reference kernel in Python (`reference_kernel`)."""
    if str(path) == REFERENCE:
        return reference_kernel
    loader = importlib.machinery.ExtensionFileLoader(KERNEL_NAME, str(path))
    spec = importlib.util.spec_from_file_location(KERNEL_NAME, path, loader=loader)
    if spec is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def first_sight_ms(kernel: ModuleType, state: IndexState, corpus: Corpus) -> list[float]:
    """Each query's milliseconds on a freshly restored engine calling `kernel`."""
    for user in KERNEL_USERS:
        user.walks = kernel  # type: ignore[attr-defined]
    analysis.stem.cache_clear()
    analysis.word_tokens.cache_clear()
    engine = Engine()
    engine.restore_index(state)
    times = []
    for query in corpus.queries:
        started = time.perf_counter_ns()
        engine.search(query.text, kinds=ALL_KINDS)
        times.append((time.perf_counter_ns() - started) / 1e6)
    return times


def p50s(times: Sequence[float], corpus: Corpus) -> dict[str, float]:
    typo = [ms for ms, query in zip(times, corpus.queries, strict=True) if query.has_typo]
    exact = [ms for ms, query in zip(times, corpus.queries, strict=True) if not query.has_typo]
    return {
        "all": statistics.median(times),
        "exact": statistics.median(exact),
        "typo": statistics.median(typo),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", choices=sorted(CORPORA))
    parser.add_argument("chunks", type=int)
    parser.add_argument("passes", type=int)
    parser.add_argument("builds", type=Path, nargs=2)
    args = parser.parse_args()
    corpus = CORPORA[args.corpus](args.chunks)
    builder = Engine()
    builder.index(corpus.entries)
    state = builder.index_state()
    kernels = [(path, loaded_kernel(path)) for path in args.builds]
    figures: dict[Path, list[dict[str, float]]] = {path: [] for path in args.builds}
    for number in range(args.passes):
        for path, kernel in kernels if number % 2 == 0 else kernels[::-1]:
            figures[path].append(p50s(first_sight_ms(kernel, state, corpus), corpus))
    for path, passes in figures.items():
        cells = []
        for kind in ("all", "exact", "typo"):
            values = [figure[kind] for figure in passes]
            median = statistics.median(values)
            cells.append(f"{kind} p50 {median:.3f} ms ({min(values):.3f}-{max(values):.3f})")
        print(f"{path.name}: " + ", ".join(cells))


if __name__ == "__main__":
    main()
