"""The index cache: data only, a hit only for the same key and intact bytes; anything else rebuilds.

The planted files are real attacks: pickles that create a marker file when
unpickled. The tests prove the plant is live (unpickling it does create the
marker), then that the cache rebuilds instead of running it.
"""

from __future__ import annotations

import errno
import gc
import hashlib
import io
import json
import os
import pickle
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

from pytest_qualbench.engine import Engine
from pytest_qualbench.engine.types import ALL_KINDS, IndexState
from pytest_qualbench.fixtures.schema import Entry
from pytest_qualbench.index_cache import (
    MAGIC,
    IndexCache,
    Loaded,
    arrays_directory,
    cache_key,
    code_fingerprint,
    encode_entry,
)

HASH = "sha256:" + "0" * 64
QUERIES = ("connection pool settings", "maxIdleConns", "conection pol", "retry backoff", "zzz")


def entries() -> list[Entry]:
    texts = {
        "md_001": "# Pool\n\n## Connection Pool Settings\nmaxIdleConns defaults to 10",
        "md_002": "# Retries\n\n## Backoff\nRetry with exponential backoff; café naïve ﬁle",
    }
    return [
        Entry(entry_id, "markdown", text, f"bench-{entry_id}", "durable", (), "t", line)
        for line, (entry_id, text) in enumerate(texts.items(), start=1)
    ]


@pytest.fixture
def engine() -> Engine:
    built = Engine()
    built.index(entries())
    return built


class Plant:
    """Unpickling this creates `marker`: what an attacker's cache file would do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[Path]]:
        return Path.touch, (self.marker,)


def live_pickle(marker: Path) -> bytes:
    """A pickle that runs code, checked to be live on a second marker beside the first."""
    probe = marker.with_name(marker.name + ".probe")
    pickle.loads(pickle.dumps(Plant(probe)))
    assert probe.exists(), "the planted pickle must really run code when unpickled"
    return pickle.dumps(Plant(marker))


def test_round_trip_answers_like_the_engine_it_stored(tmp_path: Path, engine: Engine) -> None:
    cache = IndexCache(tmp_path / "cache")
    key = cache_key(HASH, "markdown", engine)
    assert cache.load("markdown", key, Engine()).status == "missing"
    assert cache.store("markdown", key, engine)
    loaded = cache.load("markdown", key, Engine())
    assert loaded.status == "hit"
    assert isinstance(loaded.engine, Engine)
    assert loaded.engine.chunks() == engine.chunks()
    for query in QUERIES:
        assert loaded.engine.search(query, kinds=ALL_KINDS) == engine.search(query, kinds=ALL_KINDS)
        assert loaded.engine.corrected_query(query) == engine.corrected_query(query)


def test_a_restore_runs_with_the_collector_paused_and_leaves_it_on(
    tmp_path: Path, engine: Engine
) -> None:
    # The restore's containers are no garbage; collections would walk the session's items.
    class Watched(Engine):
        def restore_index(self, state: Any) -> None:
            self.collector_was_on = gc.isenabled()
            super().restore_index(state)

    cache = IndexCache(tmp_path / "cache")
    key = cache_key(HASH, "markdown", engine)
    assert cache.store("markdown", key, engine)
    watched = Watched()
    assert cache.load("markdown", key, watched).status == "hit"
    assert watched.collector_was_on is False
    assert gc.isenabled()


def test_entry_metadata_survives_the_round_trip(tmp_path: Path) -> None:
    with_metadata = replace(entries()[0], metadata=MappingProxyType({"outcome": "success"}))
    engine = Engine()
    engine.index([with_metadata])
    cache = IndexCache(tmp_path)
    cache.store("markdown", "k", engine)
    loaded = cache.load("markdown", "k", Engine()).engine
    assert dict(loaded.chunks()[0].metadata) == {"outcome": "success"}


def test_metadata_json_cannot_hold_is_not_cached(tmp_path: Path) -> None:
    engine = Engine()
    engine.index([replace(entries()[0], metadata=MappingProxyType({"tags": {"a"}}))])
    cache = IndexCache(tmp_path)
    assert cache.store("markdown", "k", engine) is False
    assert cache.load("markdown", "k", Engine()).status == "missing"


def test_an_engine_without_the_protocol_is_never_cached(tmp_path: Path) -> None:
    cache = IndexCache(tmp_path)
    assert cache.store("markdown", "k", object()) is False
    assert cache.load("markdown", "k", object()) == Loaded(None, "unsupported")


def test_key_changes_with_dataset_content_type_and_config() -> None:
    base = cache_key(HASH, "markdown", Engine())
    assert cache_key(HASH, "markdown", Engine()) == base
    assert cache_key("sha256:" + "1" * 64, "markdown", Engine()) != base
    assert cache_key(HASH, "json", Engine()) != base
    assert cache_key(HASH, "markdown", Engine(k1=1.5)) != base


def test_code_fingerprint_covers_the_engine_package_source() -> None:
    import pytest_qualbench.engine.builtin as builtin

    package = Path(builtin.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(package.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    assert code_fingerprint(Engine) == digest.hexdigest()


def test_a_different_key_is_stale_and_not_loaded(tmp_path: Path, engine: Engine) -> None:
    cache = IndexCache(tmp_path)
    cache.store("markdown", "old-key", engine)
    assert cache.load("markdown", "new-key", Engine()) == Loaded(None, "stale")


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: data[:-1], id="truncated body"),
        pytest.param(lambda data: data + b" ", id="a byte past the body"),
        pytest.param(lambda data: data[: len(MAGIC) + 10], id="truncated header"),
        pytest.param(lambda data: data[:-5] + bytes([data[-5] ^ 1]) + data[-4:], id="flipped bit"),
        pytest.param(lambda data: b"garbage" + data, id="bad magic"),
        pytest.param(lambda data: MAGIC + b"[1, 2]\n" + b"payload", id="header not an object"),
        pytest.param(lambda data: MAGIC + b"{not json\n", id="header not JSON"),
        pytest.param(lambda data: b"", id="empty file"),
        pytest.param(lambda data: encode_entry("k", b"{not json"), id="body not JSON"),
        pytest.param(lambda data: encode_entry("k", b"[]"), id="body not a manifest"),
    ],
)
def test_damaged_manifests_are_corrupt_and_rebuilt(
    tmp_path: Path, engine: Engine, damage: Callable[[bytes], bytes]
) -> None:
    cache = IndexCache(tmp_path)
    cache.store("markdown", "k", engine)
    path = cache.path("markdown")
    path.write_bytes(damage(path.read_bytes()))
    assert cache.load("markdown", "k", Engine()) == Loaded(None, "corrupt")
    assert cache.store("markdown", "k", engine)
    assert cache.load("markdown", "k", Engine()).status == "hit"


def stored_directory(cache: IndexCache, key: str) -> Path:
    """The arrays directory markdown's manifest names for `key`."""
    body = json.loads(cache.path("markdown").read_bytes().split(b"\n", 2)[2])
    return cache.directory / arrays_directory("markdown", key, body["arrays"])


def array_files(cache: IndexCache, key: str) -> list[Path]:
    return sorted(stored_directory(cache, key).iterdir())


def flip_last_byte(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))


def swap_first_two(path: Path) -> None:
    first, second = sorted(path.parent.iterdir())[:2]
    data = first.read_bytes()
    first.write_bytes(second.read_bytes())
    second.write_bytes(data)


def fifo_in_place(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def directory_in_place(path: Path) -> None:
    path.unlink()
    path.mkdir()


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda path: path.write_bytes(path.read_bytes()[:-1]), id="truncated array"),
        pytest.param(flip_last_byte, id="flipped array byte"),
        pytest.param(swap_first_two, id="two array files swapped"),
        pytest.param(lambda path: path.unlink(), id="array file missing"),
        pytest.param(fifo_in_place, id="a FIFO in its place"),
        pytest.param(directory_in_place, id="a directory in its place"),
    ],
)
def test_damaged_arrays_are_corrupt_and_rebuilt(
    tmp_path: Path, engine: Engine, damage: Callable[[Path], object]
) -> None:
    cache = IndexCache(tmp_path)
    cache.store("markdown", "k", engine)
    damage(array_files(cache, "k")[0])
    assert cache.load("markdown", "k", Engine()) == Loaded(None, "corrupt")
    assert cache.store("markdown", "k", engine)
    assert cache.load("markdown", "k", Engine()).status == "hit"


def plant_manifest(cache: IndexCache, key: str, document: object, files: dict[str, bytes]) -> None:
    """A manifest whose every checksum matches what it names: only the content can refuse it."""
    table = {
        name: {
            "file": f"{number}.npy",
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
        for number, (name, data) in enumerate(files.items())
    }
    directory = cache.directory / arrays_directory("markdown", key, table)
    directory.mkdir(parents=True)
    for number, data in enumerate(files.values()):
        (directory / f"{number}.npy").write_bytes(data)
    body = json.dumps({"arrays": table, "document": document}).encode()
    cache.path("markdown").write_bytes(encode_entry(key, body))


def npy_bytes(array: np.ndarray, allow_pickle: bool = False) -> bytes:
    stream = io.BytesIO()
    np.lib.format.write_array(stream, array, allow_pickle=allow_pickle)
    return stream.getvalue()


def test_a_planted_pickle_is_never_unpickled(tmp_path: Path, engine: Engine) -> None:
    marker = tmp_path / "pwned"
    payload = live_pickle(marker)
    cache = IndexCache(tmp_path / "cache")
    cache.directory.mkdir()
    # The first format (a pickle behind a header the file declares itself) and the
    # current magic with a self-consistent header: both checksums match the payload.
    old_magic = b"qualbench-index-cache 1\n"
    for data in (old_magic + encode_entry("k", payload)[len(MAGIC) :], encode_entry("k", payload)):
        cache.path("markdown").write_bytes(data)
        assert cache.load("markdown", "k", Engine()) == Loaded(None, "corrupt")
        assert not marker.exists()
    assert cache.store("markdown", "k", engine)
    assert cache.load("markdown", "k", Engine()).status == "hit"
    assert not marker.exists()


def test_a_planted_object_array_is_never_unpickled(tmp_path: Path, engine: Engine) -> None:
    marker = tmp_path / "pwned"
    live_pickle(marker)
    state = engine.index_state()
    files = {name: npy_bytes(array) for name, array in state.arrays.items()}
    # An object array is a pickle inside the .npy format.
    files["trigram.keys"] = npy_bytes(np.array([Plant(marker)], dtype=object), allow_pickle=True)
    cache = IndexCache(tmp_path / "cache")
    plant_manifest(cache, "k", dict(state.document), files)
    assert cache.load("markdown", "k", Engine()) == Loaded(None, "corrupt")
    assert not marker.exists()


def misaligned_npy(array: np.ndarray) -> bytes:
    """A valid .npy file of `array` whose header is one byte longer than numpy writes it."""
    data = npy_bytes(array)
    header_length = int.from_bytes(data[8:10], "little")
    header = data[10 : 10 + header_length].rstrip(b"\n") + b" \n"
    return data[:8] + len(header).to_bytes(2, "little") + header + data[10 + header_length :]


@pytest.mark.parametrize(
    ("name", "plant"),
    [
        pytest.param("porter.doc_len", lambda array: npy_bytes(-array), id="negative lengths"),
        pytest.param(
            "trigram.doc_len",
            lambda array: npy_bytes(np.full_like(array, np.nan)),
            id="lengths not a number",
        ),
        pytest.param("porter.id_bounds", misaligned_npy, id="misaligned data"),
    ],
)
def test_planted_arrays_the_query_path_cannot_take_are_corrupt_and_rebuilt(
    tmp_path: Path, engine: Engine, name: str, plant: Callable[[np.ndarray], bytes]
) -> None:
    # Every checksum matches: only the arrays' content can refuse them, at load, so no
    # query meets them (negative lengths void the bound the porter fill skips docs by).
    state = engine.index_state()
    files = {key: npy_bytes(array) for key, array in state.arrays.items()}
    files[name] = plant(np.asarray(state.arrays[name]))
    cache = IndexCache(tmp_path / "cache")
    plant_manifest(cache, "k", dict(state.document), files)
    assert cache.load("markdown", "k", Engine()) == Loaded(None, "corrupt")
    assert cache.store("markdown", "k", engine)
    assert cache.load("markdown", "k", Engine()).status == "hit"


@pytest.mark.parametrize("file", ["../escape.npy", "/etc/passwd", "0.npy/..", None])
def test_a_manifest_naming_a_file_outside_its_directory_is_corrupt(
    tmp_path: Path, engine: Engine, file: str | None
) -> None:
    cache = IndexCache(tmp_path / "cache")
    cache.store("markdown", "k", engine)
    text = cache.path("markdown").read_bytes().split(b"\n", 2)[2]
    body = json.loads(text)
    next(iter(body["arrays"].values()))["file"] = file
    cache.path("markdown").write_bytes(encode_entry("k", json.dumps(body).encode()))
    assert cache.load("markdown", "k", Engine()) == Loaded(None, "corrupt")


def test_a_directory_in_place_of_the_file_is_corrupt_and_replaced(
    tmp_path: Path, engine: Engine
) -> None:
    cache = IndexCache(tmp_path)
    (cache.path("markdown") / "inner").mkdir(parents=True)
    assert cache.load("markdown", "k", Engine()) == Loaded(None, "corrupt")
    assert cache.store("markdown", "k", engine)
    assert cache.path("markdown").is_file()
    assert cache.load("markdown", "k", Engine()).status == "hit"


@pytest.mark.parametrize(
    ("name", "array"),
    [
        pytest.param("trigram.id_bounds", np.array([0, 1], dtype=np.int64), id="bounds short"),
        pytest.param(
            "porter.local_ids", np.array([60000], dtype=np.uint16), id="doc id out of range"
        ),
        pytest.param("porter.local_ids", np.array([0], dtype=np.int32), id="doc ids of int32"),
        pytest.param("trigram.keys", np.zeros((2, 2), dtype=np.int64), id="keys two-dimensional"),
        pytest.param("porter.doc_len", np.array(["x"]), id="lengths of strings"),
        pytest.param("chunks.text_ends", np.array([5, 3], dtype=np.int64), id="text ends back"),
        pytest.param("chunks.text", np.frombuffer(b"\xff\xfe", np.uint8), id="texts not UTF-8"),
        pytest.param(
            "trigram.words.chunk_local_ids",
            np.array([60000], dtype=np.uint16),
            id="word chunk out of range",
        ),
        pytest.param(
            "trigram.words.chunk_dense_at", np.array([0], dtype=np.int64), id="word sets short"
        ),
        pytest.param(
            "trigram.words.word_local_ids", np.array([1, 0], dtype=np.int64), id="word ids of int64"
        ),
        pytest.param("trigram.words.keys", np.array([5, 2], dtype=np.int64), id="word keys back"),
        pytest.param("trigram.words_ends", np.array([1], dtype=np.int64), id="words cut short"),
        pytest.param("trigram.dense_bits", np.zeros(1, dtype=np.int64), id="dense bits of int64"),
        pytest.param("porter.dense_at", np.array([0], dtype=np.int64), id="dense sets short"),
    ],
)
def test_intact_files_of_a_wrong_index_are_corrupt(
    tmp_path: Path, engine: Engine, name: str, array: np.ndarray
) -> None:
    state = engine.index_state()
    damaged = replace(state, arrays={**state.arrays, name: array})
    cache = IndexCache(tmp_path)
    assert cache.store_state("markdown", "k", damaged)
    assert cache.load("markdown", "k", Engine()) == Loaded(None, "corrupt")


def test_a_dense_set_whose_ranks_miscount_is_corrupt(tmp_path: Path, engine: Engine) -> None:
    # A rank one too high would put a row past its key's run: refused as the cache loads.
    state = engine.index_state()
    ranks = state.arrays["trigram.dense_ranks"].copy()
    assert len(ranks) > 1, "the fixture set's trigram layer has no dense set"
    ranks[-1] += 1
    damaged = replace(state, arrays={**state.arrays, "trigram.dense_ranks": ranks})
    cache = IndexCache(tmp_path)
    assert cache.store_state("markdown", "k", damaged)
    assert cache.load("markdown", "k", Engine()) == Loaded(None, "corrupt")


def test_layout_is_a_manifest_and_one_npy_file_per_array(tmp_path: Path, engine: Engine) -> None:
    cache = IndexCache(tmp_path)
    cache.store("markdown", "the-key", engine)
    magic, header, body = cache.path("markdown").read_bytes().split(b"\n", 2)
    assert magic + b"\n" == MAGIC
    assert json.loads(header) == {
        "key": "the-key",
        "bytes": len(body),
        "sha256": hashlib.sha256(body).hexdigest(),
    }
    manifest = json.loads(body)
    assert manifest["document"] == json.loads(json.dumps(dict(engine.index_state().document)))
    directory = stored_directory(cache, "the-key")
    for name, entry in manifest["arrays"].items():
        data = (directory / entry["file"]).read_bytes()
        assert entry == {
            "file": entry["file"],
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
        stored = np.load(directory / entry["file"], allow_pickle=False)
        assert np.array_equal(stored, engine.index_state().arrays[name])
    loaded, _ = cache.load_state("markdown", "the-key")
    assert loaded is not None
    assert set(loaded.arrays) == set(engine.index_state().arrays)


def test_loaded_arrays_are_read_only_views_of_the_files(tmp_path: Path, engine: Engine) -> None:
    cache = IndexCache(tmp_path)
    cache.store("markdown", "k", engine)
    loaded, _ = cache.load_state("markdown", "k")
    assert loaded is not None
    for array in loaded.arrays.values():
        assert not array.flags.writeable
        assert array.size == 0 or array.base is not None


def test_store_replaces_atomically_and_leaves_no_temporary_files(
    tmp_path: Path, engine: Engine
) -> None:
    cache = IndexCache(tmp_path / "nested" / "cache")
    cache.store("markdown", "one", engine)
    cache.store("markdown", "two", engine)
    assert sorted(path.name for path in cache.directory.iterdir()) == sorted(
        ["markdown.idx", stored_directory(cache, "two").name]
    )
    assert cache.load("markdown", "two", Engine()).status == "hit"
    assert cache.load("markdown", "one", Engine()).status == "stale"


def test_a_mapped_index_keeps_answering_after_another_run_replaces_the_cache(
    tmp_path: Path, engine: Engine
) -> None:
    cache = IndexCache(tmp_path)
    cache.store("markdown", "one", engine)
    loaded = cache.load("markdown", "one", Engine()).engine
    other = Engine(k1=1.5)
    other.index(entries())
    cache.store("markdown", "two", other)
    for query in QUERIES:
        assert loaded.search(query, kinds=ALL_KINDS) == engine.search(query, kinds=ALL_KINDS)


RESTORED_RUN = """
import sys
from pathlib import Path
from pytest_qualbench.engine import Engine
from pytest_qualbench.engine.types import ALL_KINDS, IndexState
from pytest_qualbench.index_cache import IndexCache
loaded = IndexCache(Path(sys.argv[1])).load("markdown", "k", Engine())
assert loaded.status == "hit", loaded.status
print(loaded.engine.search("connection pool settings", kinds=ALL_KINDS)[0].source)
print("nltk" in sys.modules)
loaded.engine.search("pooled connections", kinds=ALL_KINDS)
print("nltk" in sys.modules)
"""


def test_a_restored_index_loads_nltk_only_for_words_it_has_never_seen(
    tmp_path: Path, engine: Engine
) -> None:
    IndexCache(tmp_path).store("markdown", "k", engine)
    completed = subprocess.run(
        [sys.executable, "-c", RESTORED_RUN, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert completed.stdout.split() == ["bench-md_001", "False", "True"]


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(
            lambda columns: {**columns, "position": ["0"] * len(columns["title"])},
            id="position strings",
        ),
        pytest.param(
            lambda columns: {**columns, "title": columns["title"][:-1]}, id="a column short"
        ),
        pytest.param(
            lambda columns: {k: v for k, v in columns.items() if k != "kind"}, id="a column missing"
        ),
        pytest.param(lambda columns: [columns["title"]], id="not columns"),
    ],
)
def test_chunk_columns_that_cannot_be_the_chunks_are_corrupt(
    tmp_path: Path, engine: Engine, damage: Callable[[Any], Any]
) -> None:
    state = engine.index_state()
    damaged = replace(
        state, document={**state.document, "chunks": damage(state.document["chunks"])}
    )
    cache = IndexCache(tmp_path)
    assert cache.store_state("markdown", "k", damaged)
    assert cache.load("markdown", "k", Engine()) == Loaded(None, "corrupt")


# A fresh process whose file-size limit the new state's arrays fit under and its
# manifest does not: the store fails (EFBIG, as a full disk fails with ENOSPC) once the
# arrays are in place, before the manifest names them.
WRITE_LIMIT = 65536
FAILING_STORE = f"""
import resource, signal, sys
from pathlib import Path
import numpy as np
from pytest_qualbench.engine.types import IndexState
from pytest_qualbench.index_cache import IndexCache

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, ({WRITE_LIMIT}, {WRITE_LIMIT}))
state = IndexState({{"counts": np.array([2, 3], np.int64)}}, {{"padding": "x" * {2 * WRITE_LIMIT}}})
try:
    IndexCache(Path(sys.argv[1])).store_state("kept", "same-key", state)
except OSError as exc:
    print(exc.errno)
else:
    sys.exit("the store did not fail")
"""


def test_a_store_failing_on_its_manifest_keeps_the_state_stored_under_the_same_key(
    tmp_path: Path,
) -> None:
    # Kept counts are stored again and again under one key with new arrays each time.
    cache = IndexCache(tmp_path)
    assert cache.store_state("kept", "same-key", IndexState({"counts": np.array([1])}, {}))
    failed = subprocess.run(
        [sys.executable, "-c", FAILING_STORE, str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert failed.returncode == 0, failed.stdout + failed.stderr
    assert int(failed.stdout) == errno.EFBIG
    loaded, status = cache.load_state("kept", "same-key")
    assert status == "hit" and loaded is not None
    assert loaded.arrays["counts"].tolist() == [1]
    assert not [path for path in tmp_path.iterdir() if path.name.endswith(".tmp")]
