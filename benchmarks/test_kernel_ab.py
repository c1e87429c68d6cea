"""kernel_ab swaps the engine's compiled kernel for a loaded build, and each pass is a first sight."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks import kernel_ab
from benchmarks.corpora import CORPORA
from pytest_qualbench.engine import ALL_KINDS, Engine, analysis, bm25
from pytest_qualbench.engine.kernel import COMPILED_MODULE
from tests.kernels import KERNEL_USERS

# A/B of two compiled builds: nothing to time where the kernel is not built.
_postings = pytest.importorskip(COMPILED_MODULE, reason="the compiled kernel is not built")
INSTALLED = Path(_postings.__file__)


@pytest.fixture
def restore_kernel() -> Iterator[None]:
    saved = [user.walks for user in KERNEL_USERS]
    yield
    for user, walks in zip(KERNEL_USERS, saved, strict=True):
        user.walks = walks  # type: ignore[attr-defined]


def test_a_pass_runs_on_the_loaded_build_with_nothing_memoised(
    restore_kernel: None, tmp_path: Path
) -> None:
    corpus = CORPORA["prose"](1000)
    engine = Engine()
    engine.index(corpus.entries)
    expected = [engine.search(query.text, kinds=ALL_KINDS) for query in corpus.queries]
    # Another file: Python hands back the module already loaded from the same one.
    build = tmp_path / INSTALLED.name
    shutil.copy(INSTALLED, build)
    loaded = kernel_ab.loaded_kernel(build)
    assert loaded is not _postings
    # A full stem memo: only a cleared one can hold fewer words after the pass.
    for number in range(analysis.QUERY_MEMO_WORDS):
        analysis.stem(f"filler{number}s")

    times = kernel_ab.first_sight_ms(loaded, engine.index_state(), corpus)

    assert bm25.walks is loaded  # type: ignore[attr-defined]
    assert len(times) == len(corpus.queries) and min(times) > 0
    assert 0 < analysis.stem.cache_info().currsize < analysis.QUERY_MEMO_WORDS
    restored = Engine()
    restored.restore_index(engine.index_state())
    assert [restored.search(query.text, kinds=ALL_KINDS) for query in corpus.queries] == expected
