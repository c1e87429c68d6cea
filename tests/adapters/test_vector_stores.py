"""Chroma, LanceDB and FAISS against their real libraries: the same cosine ranking as `dense`.

Every store here searches exactly at these sizes (FAISS's IndexFlatIP, LanceDB
without an ANN index, Chroma's HNSW over a handful of vectors), so each must
return dense's numpy ranking of the same unit vectors: same chunks, same
order, same cosines.
"""

# ruff: noqa: E402  (the adapter imports follow the importorskip calls)

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import pytest

# The adapters import their libraries at the top: skip (not fail) when one is absent.
for _library in ("chromadb", "lancedb", "faiss"):
    pytest.importorskip(_library, reason=f"{_library} is not installed: pip install -e '.[test]'")

from pytest_qualbench.adapters.chroma import ChromaEngine, cosine_of
from pytest_qualbench.adapters.dense import DenseEngine
from pytest_qualbench.adapters.faiss import FaissEngine, lists_for
from pytest_qualbench.adapters.lancedb import LanceDbEngine
from pytest_qualbench.adapters.vectors import VectorEngine, stable_top
from pytest_qualbench.engine.types import ALL_KINDS
from pytest_qualbench.fixtures import Entry
from tests.adapters.conftest import MakeEntry

ROOT = Path(__file__).resolve().parents[2]
STORES: dict[str, Callable[..., VectorEngine]] = {
    "chroma": ChromaEngine,
    "lancedb": lambda **options: LanceDbEngine(mode="vector", **options),
    "faiss": FaissEngine,
}
LIBRARIES = {"chroma": "chromadb", "lancedb": "lancedb", "faiss": "faiss-cpu"}

TEXTS = (
    ("brakes", "# Brakes\n\nThe car needs new brake pads and an oil change."),
    ("bread", "# Bread\n\nBake the banana bread for forty minutes."),
    ("failover", "# Failover\n\nPromote the replica when the primary is down."),
    ("vacuum", "# Vacuum\n\nAutovacuum reclaims dead tuples in busy tables."),
    ("tires", "# Tires\n\nRotate the tires every ten thousand kilometres."),
)
QUERIES = ("automobile maintenance", "database replica", "baking", "zzzz qqqq")


def entries(make_entry: MakeEntry) -> list[Entry]:
    return [
        make_entry(name, text, kind="session" if name == "tires" else "durable")
        for name, text in TEXTS
    ]


@pytest.fixture(params=sorted(STORES))
def store(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


def ranking(engine: VectorEngine, query: str, **search: object) -> list[tuple[str, float]]:
    return [(r.source, round(r.score, 5)) for r in engine.search(query, **search)]  # type: ignore[arg-type]


def test_each_store_ranks_as_the_numpy_cosine_does(store: str, make_entry: MakeEntry) -> None:
    engine, dense = STORES[store](min_similarity=-1.0), DenseEngine(min_similarity=-1.0)
    engine.index(entries(make_entry))
    dense.index(entries(make_entry))
    try:
        for query in QUERIES:
            for limit in (1, 3, 10):
                expected = ranking(dense, query, limit=limit, kinds=ALL_KINDS)
                assert ranking(engine, query, limit=limit, kinds=ALL_KINDS) == expected, query
        assert {result.layer for result in engine.search("brakes", kinds=ALL_KINDS)} == {"vector"}
    finally:
        engine.close()


def test_the_source_kinds_asked_for_are_the_only_ones_returned(
    store: str, make_entry: MakeEntry
) -> None:
    engine = STORES[store](min_similarity=-1.0)
    engine.index(entries(make_entry))
    try:
        durable = {r.source for r in engine.search("car tires", limit=10, kinds=("durable",))}
        session = {r.source for r in engine.search("car tires", limit=10, kinds=("session",))}
        assert session == {"bench-tires"}
        assert durable == {f"bench-{name}" for name, _ in TEXTS} - {"bench-tires"}
        assert engine.search("car tires", kinds=("ephemeral",)) == []
    finally:
        engine.close()


def test_min_similarity_leaves_a_negative_query_empty(store: str, make_entry: MakeEntry) -> None:
    everything, strict = STORES[store](), STORES[store](min_similarity=0.5)
    everything.index(entries(make_entry))
    strict.index(entries(make_entry))
    try:
        assert everything.search("zzzz qqqq", kinds=ALL_KINDS) != []
        assert strict.search("zzzz qqqq", kinds=ALL_KINDS) == []
        kept = strict.search("brake pads oil change", kinds=ALL_KINDS)
        assert kept and all(result.score > 0.5 for result in kept)
    finally:
        everything.close()
        strict.close()


def test_ties_go_to_the_earlier_chunk_across_the_cut(store: str, make_entry: MakeEntry) -> None:
    # Six identical haystacks: six equal cosines, whichever order the store returns them in.
    twins = [make_entry(f"t{index}", "Promote the replica.") for index in (5, 3, 1, 0, 4, 2)]
    engine = STORES[store]()
    engine.index(twins)
    try:
        for limit in (1, 2, 4):
            sources = [r.source for r in engine.search("replica", limit=limit, kinds=ALL_KINDS)]
            assert sources == [f"bench-t{index}" for index in range(limit)]
    finally:
        engine.close()


def test_an_empty_corpus_returns_nothing(store: str) -> None:
    engine = STORES[store]()
    engine.index([])
    assert engine.search("anything", kinds=ALL_KINDS) == []
    engine.close()


def test_config_records_the_library_version_and_every_option(store: str) -> None:
    engine = STORES[store](min_similarity=0.25)
    config = engine.config
    assert config["library"] == f"{LIBRARIES[store]} {version(LIBRARIES[store])}"
    assert config["min_similarity"] == 0.25
    assert config["engine"] == store
    engine.close()


def test_stable_top_widens_until_the_cut_is_settled() -> None:
    scores = [0.9, 0.5, 0.5, 0.5, 0.5, 0.1]
    asked: list[int] = []

    def fetch(wanted: int) -> tuple[list[tuple[int, float]], bool]:
        asked.append(wanted)
        # A store that returns tied hits from the end first.
        order = sorted(range(len(scores)), key=lambda doc: (-scores[doc], -doc))[:wanted]
        return [(doc, scores[doc]) for doc in order], wanted >= len(scores)

    assert stable_top(fetch, 2) == [(0, 0.9), (1, 0.5)]
    assert asked == [3, 6]


# --- Chroma ----------------------------------------------------------------------


@pytest.mark.parametrize("distance", ["l2", "ip"])
def test_chroma_every_distance_reports_the_cosine(distance: str, make_entry: MakeEntry) -> None:
    cosine, other = (
        ChromaEngine(min_similarity=-1.0),
        ChromaEngine(
            distance=distance,  # type: ignore[arg-type]
            min_similarity=-1.0,
        ),
    )
    cosine.index(entries(make_entry))
    other.index(entries(make_entry))
    for query in QUERIES:
        found, expected = (ranking(e, query, kinds=ALL_KINDS) for e in (other, cosine))
        assert [source for source, _ in found] == [source for source, _ in expected]
        assert [score for _, score in found] == pytest.approx([s for _, s in expected], abs=1e-4)
    assert other.config["distance"] == distance
    cosine.close()
    other.close()


def test_chroma_cosine_of_each_distance() -> None:
    assert cosine_of(0.25, "cosine") == 0.75
    assert cosine_of(0.25, "ip") == 0.75
    # Squared L2 of unit vectors is 2 - 2 cos.
    assert cosine_of(2 - 2 * 0.75, "l2") == 0.75


def test_chroma_persistent_writes_its_directory_and_close_drops_the_collection(
    tmp_path: Path, make_entry: MakeEntry
) -> None:
    engine = ChromaEngine(path=str(tmp_path / "chroma"))
    engine.index(entries(make_entry))
    assert engine.search("brake pads", kinds=ALL_KINDS)[0].source == "bench-brakes"
    assert (tmp_path / "chroma" / "chroma.sqlite3").is_file()
    assert engine.config["client"] == "persistent"
    engine.close()
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(
        path=str(tmp_path / "chroma"), settings=Settings(anonymized_telemetry=False)
    )
    assert client.list_collections() == []


# --- LanceDB ---------------------------------------------------------------------


def test_lancedb_fts_finds_words_and_nothing_for_unknown_ones(make_entry: MakeEntry) -> None:
    engine = LanceDbEngine(mode="fts")
    engine.index(entries(make_entry))
    results = engine.search("replica primary", kinds=ALL_KINDS)
    assert [(r.source, r.layer) for r in results] == [("bench-failover", "fts")]
    # Stemmed: "baking" matches "Bake".
    assert [r.source for r in engine.search("baked", kinds=ALL_KINDS)] == ["bench-bread"]
    for hostile in ("zzzz", '"unbalanced quote (a:b', "the of and", "*"):
        assert engine.search(hostile, kinds=ALL_KINDS) == [], hostile
    engine.close()


def test_lancedb_hybrid_labels_each_result_by_the_sides_that_found_it(
    make_entry: MakeEntry,
) -> None:
    hybrid = LanceDbEngine(min_similarity=-1.0)
    fts, vector = LanceDbEngine(mode="fts"), LanceDbEngine(mode="vector", min_similarity=-1.0)
    for engine in (hybrid, fts, vector):
        engine.index(entries(make_entry))
    query = "replica car"
    by_text = {r.source for r in fts.search(query, limit=6, kinds=ALL_KINDS)}
    by_vector = {r.source for r in vector.search(query, limit=6, kinds=ALL_KINDS)}
    for result in hybrid.search(query, limit=5, kinds=ALL_KINDS):
        expected = (
            "hybrid"
            if result.source in by_text and result.source in by_vector
            else "fts"
            if result.source in by_text
            else "vector"
        )
        assert result.layer == expected, result.source
    for engine in (hybrid, fts, vector):
        engine.close()


def test_lancedb_hybrid_with_min_similarity_keeps_only_text_matches_of_a_weak_query(
    make_entry: MakeEntry,
) -> None:
    engine = LanceDbEngine(min_similarity=0.99)
    engine.index(entries(make_entry))
    assert [(r.source, r.layer) for r in engine.search("tuples", kinds=ALL_KINDS)] == [
        ("bench-vacuum", "fts")
    ]
    assert engine.search("zzzz qqqq", kinds=ALL_KINDS) == []
    engine.close()


def test_lancedb_close_removes_its_directory(make_entry: MakeEntry) -> None:
    engine = LanceDbEngine()
    engine.index(entries(make_entry))
    directory = engine._directory
    assert directory is not None and Path(directory).is_dir()
    engine.close()
    assert not Path(directory).exists()


# --- FAISS -----------------------------------------------------------------------


@pytest.mark.parametrize("factory", ["HNSW32", "IVF4,Flat", "IVF256,Flat"])
def test_faiss_index_factories_rank_as_flat_on_a_small_corpus(
    factory: str, make_entry: MakeEntry
) -> None:
    # nprobe reaching every list makes IVF exact; HNSW over 5 vectors visits them all.
    flat, other = (
        FaissEngine(min_similarity=-1.0),
        FaissEngine(index_factory=factory, nprobe=256, min_similarity=-1.0),
    )
    flat.index(entries(make_entry))
    other.index(entries(make_entry))
    for query in QUERIES:
        assert ranking(other, query, kinds=ALL_KINDS) == ranking(flat, query, kinds=ALL_KINDS)


def test_faiss_ivf_lists_shrink_to_what_the_corpus_can_train(make_entry: MakeEntry) -> None:
    engine = FaissEngine(index_factory="IVF256,Flat")
    engine.index(entries(make_entry))
    assert engine.config["built"] == "IVF1,Flat"
    assert engine.config["index_factory"] == "IVF256,Flat"
    assert engine.warnings == (
        "faiss: IVF256 over 5 chunks: built with 1 lists (39 training vectors per list)",
    )
    assert lists_for(256, 100_000) == 256
    assert lists_for(256, 3900) == 100
    assert lists_for(8, 10) == 1


def test_faiss_hnsw_and_ivf_build_the_same_index_every_time(make_entry: MakeEntry) -> None:
    corpus = [
        make_entry(f"e{index}", f"Note {index}: {TEXTS[index % len(TEXTS)][1]} ({index * 7 % 13})")
        for index in range(120)
    ]
    for factory in ("HNSW8", "IVF3,Flat"):
        rankings = []
        for _ in range(2):
            engine = FaissEngine(index_factory=factory, ef_search=4)
            engine.index(corpus)
            rankings.append([ranking(engine, query, kinds=ALL_KINDS) for query in QUERIES])
        assert rankings[0] == rankings[1], factory


# --- no network, and a missing extra -----------------------------------------------

# Any socket but an AF_UNIX pair (asyncio's in-process self-pipe, which LanceDB's
# event loop opens) raises inside the child process, a host name lookup included.
REFUSE_NETWORK = textwrap.dedent(
    """
    import socket, sys

    def refuse(event, args):
        if event == "socket.__new__" and args[1] == socket.AF_UNIX:
            return
        if event.startswith("socket."):
            raise RuntimeError(f"network touched: {event} {args!r}")

    sys.addaudithook(refuse)
    """
)
SEARCH = textwrap.dedent(
    """
    from pytest_qualbench.adapters.{module} import {engine}
    from pytest_qualbench.fixtures import Entry

    engine = {engine}()
    engine.index([Entry("a", "plaintext", "brake pads", "bench-a", "durable", (), "f.jsonl", 1)])
    print(engine.search("car repair")[0].source)
    engine.close()
    """
)
ENGINE_CLASSES = {
    "chroma": "ChromaEngine",
    "lancedb": "LanceDbEngine",
    "faiss": "FaissEngine",
}


def test_the_guard_refuses_an_internet_socket_and_allows_a_unix_pair() -> None:
    probe = REFUSE_NETWORK + (
        "socket.socketpair()\nprint('pair ok')\nsocket.socket(socket.AF_INET)\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    assert completed.stdout.strip() == "pair ok"
    assert "network touched: socket.__new__" in completed.stderr


def test_building_and_searching_touch_no_network(store: str) -> None:
    script = REFUSE_NETWORK + SEARCH.format(module=store, engine=ENGINE_CLASSES[store])
    completed = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"},
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "bench-a"
