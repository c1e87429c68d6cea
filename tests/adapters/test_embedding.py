"""`embed=module:function` on every vector engine, and the corpus embedding cache."""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_qualbench.adapters.embedding import (
    Embedder,
    EmbedderError,
    EmbeddingCache,
    embedder_identity,
    resolve_embedder,
)
from tests.adapters.conftest import needs
from tests.conftest import WriteFixture, case, entry

# A user's embedder: hashed words, deterministic, and it logs every call's text count.
USER_EMBEDDER = """
import hashlib, os
import numpy as np

def embed(texts):
    with open(os.environ["EMBED_CALLS"], "a", encoding="utf-8") as log:
        log.write(f"{len(texts)}\\n")
    vectors = np.zeros((len(texts), 1009), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in text.lower().split():
            digest = hashlib.sha256(word.strip("#.,").encode()).digest()
            vectors[row, int.from_bytes(digest[:4], "little") % 1009] += 1.0
    return vectors

def versioned(texts):
    return embed(texts)

versioned.qualbench_identity = "hashed-words v2"

def wrong_shape(texts):
    return np.zeros(len(texts), dtype=np.float32)

def not_finite(texts):
    return np.full((len(texts), 4), np.nan, dtype=np.float32)
"""

DOCS = [
    entry(
        "md_001",
        "# Replica lag\n\nReplica lag grows while vacuum runs on the primary.",
        [case("md_001_q1", "replica lag", ["Replica lag grows"], layer="any")],
    ),
    entry(
        "md_002",
        "# Eviction storms\n\nThe cache evicts hot keys when memory is full.",
        [
            case("md_002_q1", "eviction storms", ["evicts hot keys"], layer="any"),
            case("md_002_q2", "zzzz", []),
        ],
    ),
]


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's embedder as an importable module; returns the call log's path."""
    (tmp_path / "userembed.py").write_text(USER_EMBEDDER, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    calls = tmp_path / "calls.txt"
    monkeypatch.setenv("EMBED_CALLS", str(calls))
    return calls


def logged_texts(calls: Path) -> list[int]:
    if not calls.exists():
        return []
    return [int(line) for line in calls.read_text(encoding="utf-8").split()]


def test_a_user_function_is_loaded_with_its_modules_hash_as_identity(user_module: Path) -> None:
    embedder = resolve_embedder("userembed:embed")
    source = user_module.parent / "userembed.py"
    import hashlib

    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    assert embedder.identity == f"userembed:embed sha256:{digest}"
    vectors = embedder.vectors(["replica lag", "cache"])
    assert vectors.shape == (2, 1009) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)


def test_a_declared_identity_wins_over_the_module_hash(user_module: Path) -> None:
    embedder = resolve_embedder("userembed:versioned")
    assert embedder.identity == "userembed:versioned hashed-words v2"
    assert embedder_identity("userembed:versioned", embedder.function) == embedder.identity


def test_the_default_is_wordllamas_bundled_weights() -> None:
    embedder = resolve_embedder("")
    assert embedder.identity == f"wordllama {version('wordllama')} l2_supercat 256d"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("userembed", "expected module:function"),
        ("nosuchmodule:embed", "cannot load it"),
        ("userembed:missing", "cannot load it"),
        ("userembed:np", "not callable"),
    ],
)
def test_an_embed_that_cannot_be_loaded_says_why(
    user_module: Path, spec: str, message: str
) -> None:
    with pytest.raises(EmbedderError, match=message):
        resolve_embedder(spec)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("userembed:wrong_shape", r"returned shape \(2,\) for 2 texts"),
        ("userembed:not_finite", "NaN"),
    ],
)
def test_vectors_of_the_wrong_shape_or_value_are_refused(
    user_module: Path, spec: str, message: str
) -> None:
    with pytest.raises(EmbedderError, match=message):
        resolve_embedder(spec).vectors(["a", "b"])


def counting_embedder(calls: list[int]) -> Embedder:
    def embed(texts: list[str]) -> Any:
        calls.append(len(texts))
        return np.array([[len(text), 1.0] for text in texts], dtype=np.float32)

    return Embedder("test:embed", "test:embed v1", embed)


def test_the_cache_embeds_a_corpus_once(tmp_path: Path) -> None:
    calls: list[int] = []
    cache, embedder = EmbeddingCache(tmp_path), counting_embedder(calls)
    first = cache.vectors(embedder, ["a", "bb", "ccc"])
    second = cache.vectors(embedder, ["a", "bb", "ccc"])
    assert calls == [3]
    assert np.array_equal(first, second)
    # Other texts, or another identity, are another entry.
    cache.vectors(embedder, ["a", "bb"])
    cache.vectors(Embedder("test:embed", "test:embed v2", embedder.function), ["a", "bb", "ccc"])
    assert calls == [3, 2, 3]
    assert len(list(tmp_path.glob("*.idx"))) == 3


def test_a_damaged_cache_file_is_never_used(tmp_path: Path) -> None:
    calls: list[int] = []
    cache, embedder = EmbeddingCache(tmp_path), counting_embedder(calls)
    cache.vectors(embedder, ["a", "bb"])
    (stored,) = tmp_path.glob("*/*.npy")
    data = bytearray(stored.read_bytes())
    data[-1] ^= 0xFF
    stored.write_bytes(bytes(data))
    assert np.array_equal(cache.vectors(embedder, ["a", "bb"]), embedder.vectors(["a", "bb"]))
    assert calls == [2, 2, 2]


def write_user_project(pytester: pytest.Pytester, write_fixture: WriteFixture) -> Path:
    write_fixture("docs.jsonl", DOCS)
    pytester.makepyfile(userembed=USER_EMBEDDER)
    pytester.syspathinsert()
    return pytester.path / "calls.txt"


@pytest.mark.parametrize(
    "name",
    [
        "dense",
        "hybrid",
        pytest.param("chroma", marks=needs("chromadb")),
        pytest.param("lancedb", marks=needs("lancedb")),
        pytest.param("faiss", marks=needs("faiss")),
    ],
)
def test_every_vector_engine_embeds_with_the_users_function_once_across_runs(
    pytester: pytest.Pytester,
    write_fixture: WriteFixture,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
) -> None:
    calls = write_user_project(pytester, write_fixture)
    monkeypatch.setenv("EMBED_CALLS", str(calls))
    arguments = (
        "--qualbench",
        f"--qualbench-engine={name}",
        "--qualbench-engine-option=embed=userembed:embed",
        "--qualbench-engine-option=min_similarity=0.5",
    )
    pytester.runpytest(*arguments).assert_outcomes(passed=3)
    # One call for the corpus (2 chunks), one for the warm-up search, one per query.
    assert sorted(logged_texts(calls)) == [1, 1, 1, 1, 2]
    calls.unlink()
    pytester.runpytest(*arguments).assert_outcomes(passed=3)
    assert logged_texts(calls) == [1, 1, 1, 1]
    report = json.loads((pytester.path / ".qualbench" / "report.json").read_text("utf-8"))
    config = report["metadata"]["engine"]["config"]
    embedding = config["dense"]["embedding"] if name == "hybrid" else config["embedding"]
    assert embedding["embed"] == "userembed:embed"
    assert list((pytester.path / ".qualbench" / "embeddings").glob("*.idx"))


def test_an_empty_embedding_cache_option_turns_the_cache_off(
    pytester: pytest.Pytester, write_fixture: WriteFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = write_user_project(pytester, write_fixture)
    monkeypatch.setenv("EMBED_CALLS", str(calls))
    arguments = (
        "--qualbench",
        "--qualbench-engine=dense",
        "--qualbench-engine-option=embed=userembed:embed",
        "--qualbench-engine-option=embedding_cache=",
    )
    pytester.runpytest(*arguments)
    pytester.runpytest(*arguments)
    assert logged_texts(calls).count(2) == 2
    assert not (pytester.path / ".qualbench" / "embeddings").exists()
