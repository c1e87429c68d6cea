"""A persistent on-disk cache of built indexes: per content type, a manifest and its arrays.

An engine's `IndexState` (see `engine.types.CachedIndex`) is stored as one
`.npy` file per array in a directory named after the cache key, and a manifest
file: a magic line, a JSON header line (the key, the body's length and its
SHA-256), then a JSON body holding the state's document and, per array, its
file, byte length and SHA-256. A load maps each array file read-only instead
of reading it, and uses it only after its SHA-256 matches: the bytes hashed are
the bytes the index is served from, because both are one mapping. Nothing in a
cache can run code: arrays are never of objects, the rest is JSON, and the
engine restores itself from that data, checking shapes and ranges. Whoever can
write `.qualbench/` (a CI cache restored from a fork's build, say) can make a
run rebuild its index, never run their code.

Files are only ever replaced whole (a new directory renamed into place, then
the manifest by `os.replace`), never written in place, so a mapping a run
holds keeps its bytes while another run replaces the cache.

The key covers everything that decides what the index holds: the dataset hash
(any fixture byte), the content type, the engine's class, its `config`, the
source of the engine's package and the Python version. A manifest whose key
differs is stale; one that is unreadable, truncated, damaged, of another
format, a directory, or whose arrays are missing or altered is corrupt. Either
way the index is built afresh.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import mmap
import os
import re
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pytest_qualbench.engine import capabilities
from pytest_qualbench.engine.types import CachedIndex, IndexState

CACHE_DIR = ".qualbench/index-cache"
MAGIC = b"qualbench-index-cache 3\n"
SUFFIX = ".idx"
ARRAYS_SUFFIX = ".arrays"
# Array files are numbered: no name a manifest holds can reach outside its directory.
ARRAY_FILE = re.compile(r"[0-9]{1,6}\.npy")
# The JSON header line is a key and two numbers: far shorter than this.
MAX_HEADER_BYTES = 4096
# How much of an array file's start may be its .npy header (numpy writes 64-byte multiples).
MAX_NPY_HEADER_BYTES = 65536


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
    identity = {
        "dataset_hash": dataset_hash,
        "content_type": content_type,
        "engine": f"{engine_type.__module__}:{engine_type.__qualname__}",
        "config": capabilities.config(engine),
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


def encode_entry(key: str, body: bytes) -> bytes:
    """A manifest: magic line, JSON header line (key, body length and SHA-256), then the body."""
    header = {"key": key, "bytes": len(body), "sha256": hashlib.sha256(body).hexdigest()}
    return MAGIC + json.dumps(header, sort_keys=True).encode("ascii") + b"\n" + body


def arrays_directory(name: str, key: str, table: Any) -> str:
    """The directory holding the arrays a manifest of `name` lists in `table` for `key`.

    Named by the key and the arrays' checksums (hex: any key is a safe name), so new
    arrays under an old key (kept token counts are stored again and again under
    one) go to a new directory, and the old one stands until the manifest is replaced.
    """
    identity = key.encode("utf-8") + b"\0" + json.dumps(table, sort_keys=True).encode("utf-8")
    return f"{name}.{hashlib.sha256(identity).hexdigest()[:32]}{ARRAYS_SUFFIX}"


def read_manifest(stream: IO[bytes], key: str) -> tuple[Any, str]:
    """The decoded body of an open manifest when magic, key, length and checksum match; else None, why."""
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
    length = header.get("bytes")
    if not isinstance(length, int) or length < 0:
        return None, "corrupt"
    # One byte more than declared: a longer file is as corrupt as a shorter one.
    body = stream.read(length + 1)
    if len(body) != length or header.get("sha256") != hashlib.sha256(body).hexdigest():
        return None, "corrupt"
    try:
        return json.loads(body), "hit"
    except ValueError:
        return None, "corrupt"


def mapped_state(directory: Path, body: Any) -> IndexState:
    """The state a manifest body describes, each array mapped from its file once its SHA-256 matches.

    ValueError (or OSError) when the body is not a manifest's or an array file differs from it.
    """
    if not isinstance(body, dict) or set(body) != {"arrays", "document"}:
        raise ValueError("the manifest body is not an index's")
    document, table = body["document"], body["arrays"]
    if not isinstance(document, dict) or not isinstance(table, dict):
        raise ValueError("the manifest body is not an index's")
    arrays = {name: _mapped_array(directory, entry) for name, entry in table.items()}
    return IndexState(arrays=arrays, document=document)


def _mapped_array(directory: Path, entry: Any) -> Any:
    """One array, a read-only view of its file's mapping; never of objects."""
    if not isinstance(entry, dict) or not ARRAY_FILE.fullmatch(str(entry.get("file"))):
        raise ValueError("an array entry names no array file")
    with _open_regular(directory / entry["file"]) as stream:
        size = os.fstat(stream.fileno()).st_size
        if size != entry.get("bytes") or size == 0:
            raise ValueError(f"array file {entry['file']} is not the size its manifest says")
        mapped = mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ)
    # The hash reads the very pages the array is served from: nothing can differ in between.
    if hashlib.sha256(mapped).hexdigest() != entry.get("sha256"):
        raise ValueError(f"array file {entry['file']} does not match its checksum")
    return _npy_view(mapped)


def _npy_view(mapped: mmap.mmap) -> Any:
    """The array of a mapped .npy file, parsed by numpy's own header readers, as a view of the map.

    Not `np.load(mmap_mode="r")`: that opens the path again, and the file found
    there need not be the one whose bytes were just hashed.
    """
    import io

    import numpy as np

    header = io.BytesIO(mapped[:MAX_NPY_HEADER_BYTES])
    version = np.lib.format.read_magic(header)
    if version == (1, 0):
        shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(header)
    elif version == (2, 0):
        shape, fortran_order, dtype = np.lib.format.read_array_header_2_0(header)
    else:
        raise ValueError(f"unsupported .npy version {version}")
    if dtype.hasobject or fortran_order:
        raise ValueError("an array of objects or in Fortran order is not what the cache writes")
    count = 1
    for length in shape:
        count *= length
    offset = header.tell()
    if offset + count * dtype.itemsize != len(mapped):
        raise ValueError("an array's bytes do not match its shape")
    # numpy pads its header so the data is aligned; a view at any other offset would be
    # a misaligned array, which the compiled query path refuses mid-query.
    if offset % dtype.alignment:
        raise ValueError("an array's data is not aligned as numpy writes it")
    if count == 0:
        return np.empty(shape, dtype=dtype)
    return np.frombuffer(mapped, dtype=dtype, count=count, offset=offset).reshape(shape)


def _open_regular(path: Path) -> IO[bytes]:
    """`path` opened for reading, if it is a regular file: a planted FIFO must not block a load."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise IsADirectoryError(f"{path} is not a regular file")
    return os.fdopen(descriptor, "rb")


class _HashingWriter:
    """A file's write() that also feeds a SHA-256 and counts bytes: the checksum costs no re-read."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.digest = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> int:
        self.digest.update(data)
        self.size += len(data)
        return self.stream.write(data)


def _write_array(path: Path, array: Any) -> dict[str, Any]:
    """Write one .npy file; its manifest entry (file, bytes, sha256)."""
    import numpy as np

    with path.open("xb") as stream:
        writer = _HashingWriter(stream)
        np.lib.format.write_array(writer, np.ascontiguousarray(array), allow_pickle=False)
    return {"file": path.name, "bytes": writer.size, "sha256": writer.digest.hexdigest()}


@dataclass(frozen=True)
class IndexCache:
    """The cache directory; per name a manifest and its arrays, replaced when the key changes."""

    directory: Path

    def path(self, name: str) -> Path:
        """The manifest of `name`'s index."""
        return self.directory / f"{name}{SUFFIX}"

    def load(self, content_type: str, key: str, engine: Any) -> Loaded:
        """`engine` (new, not yet indexed) restored from the cache for `key`, or why not.

        On any status but "hit" the engine may hold part of a restore: index it
        afresh, or make a new one.
        """
        if not isinstance(engine, CachedIndex):
            return Loaded(None, "unsupported")
        # ctypes (beside the collector switch) loads only when there is a cache to read.
        from pytest_qualbench.engine.memory import collector_paused

        # The manifest's JSON and the restored index are long-lived containers by the
        # hundred thousand, no garbage: collections walking the session's every item
        # meanwhile were a third of the load at 10^5 cases.
        with collector_paused():
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
            with _open_regular(self.path(name)) as stream:
                body, status = read_manifest(stream, key)
            if body is None:
                return None, status
            table = body.get("arrays") if isinstance(body, dict) else None
            directory = self.directory / arrays_directory(name, key, table)
            return mapped_state(directory, body), "hit"
        except FileNotFoundError:
            if not self.path(name).exists():
                return None, "missing"
            return None, "corrupt"
        except (OSError, ValueError, TypeError, EOFError, MemoryError):
            # A directory, a dangling or looping link, no permission, an array file
            # missing or altered, a header claiming more memory than there is.
            return None, "corrupt"

    def store(self, content_type: str, key: str, engine: Any) -> bool:
        """Write the engine's index atomically; False when the engine keeps no cacheable index."""
        if not isinstance(engine, CachedIndex):
            return False
        return self.store_state(content_type, key, engine.index_state())

    def store_state(self, name: str, key: str, state: IndexState) -> bool:
        """Write the state under `name`, replacing what was there whole; False when it is not data.

        A crash, a full disk or a signal leaves the old index or the new one, never
        half of one: the new arrays go to a directory of their own, which the
        manifest names only once it is replaced. Whatever occupies the paths (a
        planted directory, a link) is replaced, not followed.
        """
        try:
            document = json.dumps(state.document, allow_nan=False)
        except (TypeError, ValueError):
            # Entry metadata JSON cannot hold (a set, NaN): this index is not cached.
            return False
        if any(
            getattr(array, "dtype", None) is None or array.dtype.hasobject
            for array in state.arrays.values()
        ):
            return False
        self.directory.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=self.directory, prefix=f".{name}.", suffix=".tmp"))
        try:
            table = {
                array_name: _write_array(staging / f"{number}.npy", array)
                for number, (array_name, array) in enumerate(state.arrays.items())
            }
            # Only arrays equal to these (the same checksums) can be there already.
            target = self.directory / arrays_directory(name, key, table)
            body = (
                '{"arrays": '
                + json.dumps(table, sort_keys=True)
                + ', "document": '
                + document
                + "}"
            )
            _clear(target)
            os.rename(staging, target)
            _write_atomically(self.path(name), encode_entry(key, body.encode("utf-8")))
        except FileExistsError:
            # Another run stored the same key between our clear and rename: its index stands.
            shutil.rmtree(staging, ignore_errors=True)
            return False
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        self._remove_other_arrays(name, keep=target.name)
        return True

    def _remove_other_arrays(self, name: str, keep: str) -> None:
        """Array directories of `name` no manifest names any more (a run mapping one keeps its pages)."""
        pattern = re.compile(re.escape(name) + r"\.[0-9a-f]{32}" + re.escape(ARRAYS_SUFFIX))
        for path in self.directory.iterdir():
            if path.name != keep and pattern.fullmatch(path.name):
                _clear(path)


def _clear(path: Path) -> None:
    """Remove whatever is at `path` (a directory tree, a file or a link, never its target)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _write_atomically(target: Path, data: bytes) -> None:
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


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
    if loaded.status == "unsupported":
        # Nothing to share through the cache: this engine builds its own index.
        engine.index(entries)
        return Indexed(engine, _ms_since(started), False, loaded.status)
    with build_lock(cache, content_type):
        # Whoever held the lock (another xdist worker) may have stored it meanwhile.
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


@contextlib.contextmanager
def build_lock(cache: IndexCache, name: str) -> Iterator[None]:
    """Held while one process builds `name`'s index: the others wait, then load what it stored.

    An `flock` on a file beside the index: the kernel drops it when its holder
    exits, so a builder that crashes or is killed never leaves the others
    waiting. The wait itself runs under --qualbench-timeout with the build. A
    cache directory that cannot be written takes no lock: each process builds.
    """
    try:
        cache.directory.mkdir(parents=True, exist_ok=True)
        # O_NOFOLLOW: a link planted under the lock's name is refused, never followed.
        descriptor = os.open(
            cache.directory / f".{name}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644
        )
    except OSError:
        yield
        return
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
