"""The dense adapter with wordllama's bundled weights, offline."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib.metadata import version

import numpy as np

from pytest_qualbench.adapters.dense import DenseEngine
from pytest_qualbench.adapters.embedding import default_embedder, normalized
from pytest_qualbench.engine.types import ALL_KINDS
from tests.adapters.conftest import MakeEntry


def test_embeddings_have_unit_length() -> None:
    vectors = default_embedder().vectors(["replica lag on the primary", "x"])
    assert vectors.shape == (2, 256)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_normalized_scales_rows_and_keeps_zero_rows() -> None:
    rows = normalized(np.array([[3.0, 4.0], [0.0, 0.0]], dtype=np.float32))
    assert np.allclose(rows, [[0.6, 0.8], [0.0, 0.0]])


def test_ranks_by_meaning_without_shared_words(make_entry: MakeEntry) -> None:
    engine = DenseEngine()
    engine.index(
        [
            make_entry("a", "Bake the banana bread for forty minutes."),
            make_entry("b", "The car needs new brake pads and an oil change."),
        ]
    )
    results = engine.search("automobile maintenance", kinds=ALL_KINDS)
    # The bread chunk's cosine is below 0: it is not retrieved at all.
    assert [result.source for result in results] == ["bench-b"]
    assert results[0].layer == "dense"
    assert results[0].score == float(engine.similarities("automobile maintenance")[1])


def test_min_similarity_drops_weak_matches(make_entry: MakeEntry) -> None:
    entries = [
        make_entry("a", "Bake the banana bread."),
        make_entry("b", "Replace the brake pads."),
    ]
    engine = DenseEngine(min_similarity=0.99)
    engine.index(entries)
    assert engine.search("automobile maintenance") == []


def test_config_records_the_embedding_and_its_version() -> None:
    embedding = DenseEngine().config["embedding"]
    assert isinstance(embedding, dict)
    assert embedding["identity"] == f"wordllama {version('wordllama')} l2_supercat 256d"


# Any socket use (resolving a host name included) raises inside the child process.
REFUSE_NETWORK = textwrap.dedent(
    """
    import sys

    def refuse(event, args):
        if event.startswith("socket."):
            raise RuntimeError(f"network touched: {event} {args!r}")

    sys.addaudithook(refuse)
    """
)
NO_NETWORK = REFUSE_NETWORK + textwrap.dedent(
    """
    from pytest_qualbench.adapters.dense import DenseEngine
    from pytest_qualbench.fixtures import Entry

    engine = DenseEngine()
    engine.index([Entry("a", "plaintext", "brake pads", "bench-a", "durable", (), "f.jsonl", 1)])
    print(engine.search("car repair")[0].source)
    """
)


def test_the_guard_catches_a_host_name_lookup() -> None:
    probe = REFUSE_NETWORK + "import socket\nsocket.getaddrinfo('localhost', 80)\n"
    completed = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    assert "network touched: socket.getaddrinfo" in completed.stderr


def test_loading_and_searching_touch_no_network() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", NO_NETWORK], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "bench-a"
