"""A persistent on-disk cache of indexed engines, one file per content type.

An engine is stored pickled, behind a header that names its key and the
SHA-256 of the pickled bytes. The key covers everything that decides what the
index holds: the dataset hash (any fixture byte), the content type, the
engine's class, its `config`, the source of the engine's package and the
Python version. A file whose key differs is stale; one whose checksum or
length does not match is corrupt. Either way it is rebuilt, never unpickled:
the checksum is checked before a single byte reaches `pickle`.

Pickle, because an engine's index is whatever objects that engine keeps (the
built-in one holds numpy postings, dictionaries and a fuzzy vocabulary); the
checksum guards against truncation and corruption, not against someone who
can write to the project's `.qualbench/` directory.
"""

from __future__ import annotations

import copyreg
import hashlib
import io
import json
import os
import pickle
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

CACHE_DIR = ".qualbench/index-cache"
MAGIC = b"qualbench-index-cache 1\n"
SUFFIX = ".idx"


@dataclass(frozen=True)
class Loaded:
    """The outcome of a cache lookup: the engine on a hit, else why there is none."""

    engine: Any
    status: str  # "hit", "missing", "stale" or "corrupt"


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


def _read_only(mapping: dict[str, Any]) -> MappingProxyType[str, Any]:
    return MappingProxyType(mapping)


def _reduce_read_only(proxy: MappingProxyType[str, Any]) -> tuple[Any, tuple[dict[str, Any]]]:
    return _read_only, (dict(proxy),)


def dump_engine(engine: Any) -> bytes:
    """Pickle an engine; read-only mappings (entry metadata) travel as their dict."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    # A private table: the process-wide copyreg registry stays untouched.
    pickler.dispatch_table = {**copyreg.dispatch_table, MappingProxyType: _reduce_read_only}
    pickler.dump(engine)
    return buffer.getvalue()


def encode_entry(key: str, payload: bytes) -> bytes:
    """Magic line, JSON header line (key, payload length and SHA-256), then the payload."""
    header = {"key": key, "bytes": len(payload), "sha256": hashlib.sha256(payload).hexdigest()}
    return MAGIC + json.dumps(header, sort_keys=True).encode("ascii") + b"\n" + payload


def verified_payload(data: bytes, key: str) -> tuple[bytes | None, str]:
    """The payload when magic, key, length and checksum all match; else None and why."""
    if not data.startswith(MAGIC):
        return None, "corrupt"
    header_line, newline, payload = data[len(MAGIC) :].partition(b"\n")
    if not newline:
        return None, "corrupt"
    try:
        header = json.loads(header_line)
    except ValueError:
        return None, "corrupt"
    if not isinstance(header, dict):
        return None, "corrupt"
    if header.get("key") != key:
        return None, "stale"
    if header.get("bytes") != len(payload):
        return None, "corrupt"
    if header.get("sha256") != hashlib.sha256(payload).hexdigest():
        return None, "corrupt"
    return payload, "hit"


@dataclass(frozen=True)
class IndexCache:
    """The cache directory; one file per content type, overwritten when its key changes."""

    directory: Path

    def path(self, content_type: str) -> Path:
        return self.directory / f"{content_type}{SUFFIX}"

    def load(self, content_type: str, key: str) -> Loaded:
        """The cached engine for `key`, or why there is none (the file is never trusted)."""
        try:
            data = self.path(content_type).read_bytes()
        except FileNotFoundError:
            return Loaded(None, "missing")
        payload, status = verified_payload(data, key)
        if payload is None:
            return Loaded(None, status)
        try:
            engine = pickle.loads(payload)
        except Exception:
            # The bytes are the ones written, yet the classes they name have moved on.
            return Loaded(None, "corrupt")
        return Loaded(engine, status)

    def store(self, content_type: str, key: str, engine: Any) -> None:
        """Write atomically: a crash leaves the old file or the new one, never half of one."""
        data = encode_entry(key, dump_engine(engine))
        self.directory.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
            os.replace(temporary, self.path(content_type))
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
