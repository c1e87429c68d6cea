"""The index cache: a hit only for the same key and intact bytes; anything else rebuilds."""

from __future__ import annotations

import hashlib
import json
import pickle
import sys
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import pytest

from pytest_qualbench.engine import Engine
from pytest_qualbench.engine.types import ALL_KINDS
from pytest_qualbench.fixtures.schema import Entry
from pytest_qualbench.index_cache import (
    MAGIC,
    IndexCache,
    Loaded,
    cache_key,
    code_fingerprint,
    encode_entry,
    verified_payload,
)

HASH = "sha256:" + "0" * 64


def entries() -> list[Entry]:
    return [
        Entry(
            "md_001",
            "markdown",
            "# Pool\n\n## Connection Pool Settings\nmaxIdleConns defaults to 10",
            "bench-md-001",
            "durable",
            (),
            "t",
            1,
        )
    ]


@pytest.fixture
def engine() -> Engine:
    built = Engine()
    built.index(entries())
    return built


def test_round_trip_answers_like_the_engine_it_stored(tmp_path: Path, engine: Engine) -> None:
    cache = IndexCache(tmp_path / "cache")
    key = cache_key(HASH, "markdown", engine)
    assert cache.load("markdown", key).status == "missing"
    cache.store("markdown", key, engine)
    loaded = cache.load("markdown", key)
    assert loaded.status == "hit"
    assert isinstance(loaded.engine, Engine)
    query = "connection pool settings"
    assert loaded.engine.search(query, kinds=ALL_KINDS) == engine.search(query, kinds=ALL_KINDS)
    assert loaded.engine.chunks() == engine.chunks()


def test_entry_metadata_survives_the_round_trip(tmp_path: Path) -> None:
    with_metadata = replace(entries()[0], metadata=MappingProxyType({"outcome": "success"}))
    engine = Engine()
    engine.index([with_metadata])
    cache = IndexCache(tmp_path)
    cache.store("markdown", "k", engine)
    loaded = cache.load("markdown", "k").engine
    assert dict(loaded.chunks()[0].metadata) == {"outcome": "success"}


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
    assert cache.load("markdown", "new-key") == Loaded(None, "stale")


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: data[:-1], id="truncated payload"),
        pytest.param(lambda data: data[: len(MAGIC) + 10], id="truncated header"),
        pytest.param(lambda data: data[:-5] + bytes([data[-5] ^ 1]) + data[-4:], id="flipped bit"),
        pytest.param(lambda data: b"garbage" + data, id="bad magic"),
        pytest.param(lambda data: MAGIC + b"[1, 2]\n" + b"payload", id="header not an object"),
        pytest.param(lambda data: MAGIC + b"{not json\n", id="header not JSON"),
        pytest.param(lambda data: b"", id="empty file"),
    ],
)
def test_damaged_files_are_corrupt_and_never_unpickled(
    tmp_path: Path, engine: Engine, damage: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = IndexCache(tmp_path)
    cache.store("markdown", "k", engine)
    path = cache.path("markdown")
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]

    def refuse(data: bytes) -> object:
        raise AssertionError("pickle.loads reached with unverified bytes")

    monkeypatch.setattr(pickle, "loads", refuse)
    loaded = cache.load("markdown", "k")
    assert loaded.engine is None and loaded.status == "corrupt"


class Vanishing:
    """Stands for an engine class that was renamed after its index was cached."""


def test_verified_bytes_that_no_longer_unpickle_are_corrupt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = IndexCache(tmp_path)
    cache.store("markdown", "k", Vanishing())
    payload, status = verified_payload(cache.path("markdown").read_bytes(), "k")
    assert payload is not None and status == "hit"
    monkeypatch.delattr(sys.modules[__name__], "Vanishing")
    assert cache.load("markdown", "k") == Loaded(None, "corrupt")


def test_file_layout_is_magic_header_payload(tmp_path: Path) -> None:
    data = encode_entry("the-key", b"PAYLOAD")
    magic, header, payload = data.split(b"\n", 2)
    assert magic + b"\n" == MAGIC
    assert json.loads(header) == {
        "key": "the-key",
        "bytes": 7,
        "sha256": hashlib.sha256(b"PAYLOAD").hexdigest(),
    }
    assert payload == b"PAYLOAD"


def test_store_replaces_atomically_and_leaves_no_temporary_files(
    tmp_path: Path, engine: Engine
) -> None:
    cache = IndexCache(tmp_path / "nested" / "cache")
    cache.store("markdown", "one", engine)
    cache.store("markdown", "two", engine)
    assert sorted(path.name for path in cache.directory.iterdir()) == ["markdown.idx"]
    assert cache.load("markdown", "two").status == "hit"
    assert cache.load("markdown", "one").status == "stale"
