"""A persistent on-disk cache of built indexes, one file per content type.

A file holds an engine's `IndexState` (see `engine.types.CachedIndex`): named
numpy arrays and one JSON document, packed as an uncompressed `.npz` archive
behind a header line naming the cache key and the SHA-256 of the archive.
Nothing in it can run code: arrays are read with `allow_pickle=False`, the
document with `json`, and the engine restores itself from that data, checking
shapes and ranges. Whoever can write `.qualbench/` (a CI cache restored from a
fork's build, say) can make a run rebuild its index, never run their code.

The key covers everything that decides what the index holds: the dataset hash
(any fixture byte), the content type, the engine's class, its `config`, the
source of the engine's package and the Python version. A file whose key
differs is stale; one that is unreadable, truncated, damaged, of another
format or a directory is corrupt. Either way the index is built afresh.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import shutil
import struct
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_qualbench.engine.types import CachedIndex, IndexState

CACHE_DIR = ".qualbench/index-cache"
MAGIC = b"qualbench-index-cache 2\n"
SUFFIX = ".idx"
# The archive member holding the JSON document; every other member is one array.
DOCUMENT_MEMBER = "document.json"
# A zip local file header: signature, fixed fields, then name and extra field.
LOCAL_HEADER_SIGNATURE = b"PK\x03\x04"
LOCAL_HEADER_BYTES = 30
# A .npy file's magic string and version bytes.
NPY_MAGIC_BYTES = 8
# The JSON header line is a key and two numbers: far shorter than this.
MAX_HEADER_BYTES = 4096


@dataclass(frozen=True)
class Loaded:
    """The outcome of a cache lookup: the restored engine on a hit, else why there is none."""

    engine: Any
    status: str  # "hit", "missing", "stale", "corrupt" or "unsupported"


def code_fingerprint(engine_type: type) -> str:
    """SHA-256 over the .py files beside the engine class's module, in name order.

    An edit to the engine's code changes the index it builds, so it must
    invalidate the cache even when the version number stays the same.
    """
    module = sys.modules.get(engine_type.__module__)
    module_file = getattr(module, "__file__", None)
    digest = hashlib.sha256()
    if module_file is not None:
        for path in sorted(Path(module_file).parent.glob("*.py")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_key(dataset_hash: str, content_type: str, engine: Any) -> str:
    """SHA-256 over the dataset hash, content type, engine class, config, code and Python."""
    engine_type = type(engine)
    config = getattr(engine, "config", {})
    identity = {
        "dataset_hash": dataset_hash,
        "content_type": content_type,
        "engine": f"{engine_type.__module__}:{engine_type.__qualname__}",
        "config": config if isinstance(config, Mapping) else {},
        "code": code_fingerprint(engine_type),
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
    }
    canonical = json.dumps(identity, sort_keys=True, default=repr).encode("utf-8")
    return hashlib.sha256(canonical).hexdigest()


def texts_key(purpose: str, texts: Sequence[str]) -> str:
    """SHA-256 over a purpose and every text with its length: the key of what they determine."""
    digest = hashlib.sha256(purpose.encode("utf-8") + b"\0")
    for text in texts:
        data = text.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "little") + data)
    return digest.hexdigest()


def encode_state(state: IndexState) -> bytes:
    """The state as an uncompressed .npz archive: one .npy per array, plus the JSON document.

    TypeError when the document holds what JSON cannot, or an array is of objects.
    """
    import numpy as np

    document = json.dumps(state.document, allow_nan=False).encode("utf-8")
    arrays = {}
    for name, array in state.arrays.items():
        if name == DOCUMENT_MEMBER or array.dtype.hasobject:
            raise TypeError(f"index array {name!r} cannot be stored as data only")
        arrays[name] = array
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(DOCUMENT_MEMBER, document)
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.ascontiguousarray(array), allow_pickle=False)
    return buffer.getvalue()


def encode_entry(key: str, payload: bytes) -> bytes:
    """Magic line, JSON header line (key, payload length and SHA-256), then the payload."""
    header = {"key": key, "bytes": len(payload), "sha256": hashlib.sha256(payload).hexdigest()}
    return MAGIC + json.dumps(header, sort_keys=True).encode("ascii") + b"\n" + payload


def read_entry(stream: io.BufferedReader, key: str) -> tuple[IndexState | None, str]:
    """The state in an open cache file when magic, key, length and checksum match; else None, why.

    One pass in file order, hashing as it reads: each array is read straight into
    its own memory, never into a buffer of the whole file first (at 10^5 chunks
    that buffer and the copies out of it, 480 MB and 300 MB of fresh pages, took
    most of a load). Nothing read is used unless the SHA-256 of the payload matches.
    """
    if stream.read(len(MAGIC)) != MAGIC:
        return None, "corrupt"
    line = stream.readline(MAX_HEADER_BYTES)
    try:
        header = json.loads(line) if line.endswith(b"\n") else None
    except ValueError:
        return None, "corrupt"
    if not isinstance(header, dict):
        return None, "corrupt"
    if header.get("key") != key:
        return None, "stale"
    start = stream.tell()
    if header.get("bytes") != os.fstat(stream.fileno()).st_size - start:
        return None, "corrupt"
    digest = hashlib.sha256()
    try:
        state = _read_archive(stream, start, digest)
    except (ValueError, KeyError, TypeError, EOFError, MemoryError, zipfile.BadZipFile):
        # A malformed archive (an array header may even claim more memory than there is).
        return None, "corrupt"
    if header.get("sha256") != digest.hexdigest():
        return None, "corrupt"
    return state, "hit"


def _read_archive(stream: io.BufferedReader, start: int, digest: Any) -> IndexState:
    """The archive behind the header, every byte of it fed to `digest` in file order.

    zipfile reads only the directory at the end (it finds an archive behind other
    bytes by its end record); members are then read in place, uncompressed as written.
    """
    with zipfile.ZipFile(stream) as archive:
        members = sorted(archive.infolist(), key=lambda info: info.header_offset)
    stream.seek(start)
    arrays: dict[str, Any] = {}
    document: Any = None
    for info in members:
        if info.compress_type != zipfile.ZIP_STORED or info.compress_size != info.file_size:
            raise ValueError(f"archive member {info.filename!r} is not stored as written")
        if info.header_offset < stream.tell():
            raise ValueError(f"archive member {info.filename!r} overlaps another")
        # A gap, the local header (PKWARE APPNOTE 4.3.7), its name and extra field.
        digest.update(_read_exactly(stream, info.header_offset - stream.tell()))
        local = _read_exactly(stream, LOCAL_HEADER_BYTES)
        if local[:4] != LOCAL_HEADER_SIGNATURE:
            raise ValueError(f"archive member {info.filename!r} has no local header")
        name_bytes, extra_bytes = struct.unpack_from("<HH", local, 26)
        digest.update(local + _read_exactly(stream, name_bytes + extra_bytes))
        if info.filename == DOCUMENT_MEMBER:
            text = _read_exactly(stream, info.file_size)
            digest.update(text)
            document = json.loads(text)
        elif info.filename.endswith(".npy"):
            arrays[info.filename[: -len(".npy")]] = _read_npy(stream, info.file_size, digest)
        else:
            raise ValueError(f"unexpected archive member {info.filename!r}")
    digest.update(stream.read())  # the directory and the end record
    if not isinstance(document, dict):
        raise ValueError("the archive holds no JSON document object")
    return IndexState(arrays=arrays, document=document)


def _read_npy(stream: io.BufferedReader, size: int, digest: Any) -> Any:
    """The array of a `size`-byte .npy member, read into its own memory; never of objects."""
    import numpy as np

    magic = _read_exactly(stream, NPY_MAGIC_BYTES)
    version = np.lib.format.read_magic(io.BytesIO(magic))
    if version not in ((1, 0), (2, 0), (3, 0)):
        raise ValueError(f"unsupported .npy version {version}")
    length = _read_exactly(stream, 2 if version == (1, 0) else 4)
    header = magic + length + _read_exactly(stream, int.from_bytes(length, "little"))
    digest.update(header)
    fields = io.BytesIO(header)
    np.lib.format.read_magic(fields)
    if version == (1, 0):
        shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(fields)
    else:
        shape, fortran_order, dtype = np.lib.format.read_array_header_2_0(fields)
    if dtype.hasobject or fortran_order:
        raise ValueError("an array of objects or in Fortran order is not what the cache writes")
    count = math.prod(shape)
    if len(header) + count * dtype.itemsize != size:
        raise ValueError("an array's bytes do not match its shape")
    array = np.empty(count, dtype=dtype)
    target = array.view(np.uint8).data
    if stream.readinto(target) != len(target):
        raise EOFError("the archive ends inside an array")
    digest.update(target)
    return array.reshape(shape)


def _read_exactly(stream: io.BufferedReader, size: int) -> bytes:
    if size < 0:
        raise ValueError("archive members out of order")
    data = stream.read(size)
    if len(data) != size:
        raise EOFError("the file ends early")
    return data


@dataclass(frozen=True)
class IndexCache:
    """The cache directory; one file per content type, overwritten when its key changes."""

    directory: Path

    def path(self, name: str) -> Path:
        return self.directory / f"{name}{SUFFIX}"

    def load(self, content_type: str, key: str, engine: Any) -> Loaded:
        """`engine` (new, not yet indexed) restored from the file for `key`, or why not.

        On any status but "hit" the engine may hold part of a restore: index it
        afresh, or make a new one.
        """
        if not isinstance(engine, CachedIndex):
            return Loaded(None, "unsupported")
        state, status = self.load_state(content_type, key)
        if state is None:
            return Loaded(None, status)
        try:
            engine.restore_index(state)
        except (ValueError, KeyError, TypeError):
            # Intact bytes of the right key that are still no index of this engine.
            return Loaded(None, "corrupt")
        return Loaded(engine, "hit")

    def load_state(self, name: str, key: str) -> tuple[IndexState | None, str]:
        """The state stored under `name` for `key`, or None and why not (see `Loaded`)."""
        try:
            with self.path(name).open("rb") as stream:
                return read_entry(stream, key)
        except FileNotFoundError:
            return None, "missing"
        except OSError:
            # A directory, a dangling or looping link, no permission: not a cache file.
            return None, "corrupt"

    def store(self, content_type: str, key: str, engine: Any) -> bool:
        """Write the engine's index atomically; False when the engine keeps no cacheable index."""
        if not isinstance(engine, CachedIndex):
            return False
        return self.store_state(content_type, key, engine.index_state())

    def store_state(self, name: str, key: str, state: IndexState) -> bool:
        """Write the state atomically under `name`; False when it cannot be stored as data.

        A crash leaves the old file or the new one, never half of one. Whatever
        occupies the path (a planted directory, a link) is replaced, not followed.
        """
        try:
            payload = encode_state(state)
        except (TypeError, ValueError):
            # Entry metadata JSON cannot hold (a set, NaN): this index is not cached.
            return False
        data = encode_entry(key, payload)
        self.directory.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
            target = self.path(name)
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return True


@dataclass(frozen=True)
class Indexed:
    """An engine holding one content type's index, how it got it, and how long that took."""

    engine: Any
    milliseconds: float
    cached: bool
    # What the cache held before: "hit", "missing", "stale", "corrupt", "unsupported".
    cache_status: str
    # Whether this run wrote the cache (False on a hit, for an engine without the
    # protocol, or when the directory cannot be written).
    stored: bool = False


def load_or_index(
    cache: IndexCache,
    content_type: str,
    dataset_hash: str,
    make_engine: Callable[[], Any],
    entries: Sequence[Any],
) -> Indexed:
    """The content type's engine from the cache when its key matches, else indexed and stored.

    The milliseconds cover the key, the load and, on a miss, the build: what
    the run spent to have the index. A cache that cannot be written (a
    read-only checkout) costs the next run a build, not this one its result.
    """
    started = time.perf_counter()
    engine = make_engine()
    key = cache_key(dataset_hash, content_type, engine)
    loaded = cache.load(content_type, key, engine)
    if loaded.engine is not None:
        return Indexed(loaded.engine, _ms_since(started), True, loaded.status)
    if loaded.status != "missing":
        # A failed restore may have left part of an index behind: start from a new engine.
        engine = make_engine()
    engine.index(entries)
    try:
        stored = cache.store(content_type, key, engine)
    except OSError:
        stored = False
    return Indexed(engine, _ms_since(started), False, loaded.status, stored)


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
