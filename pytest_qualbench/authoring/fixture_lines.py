"""A fixture file as raw lines: find an entry's line, append or replace lines atomically.

An authoring command changes one line or adds some; every other line stays byte for
byte what the author wrote (formatting, escapes, line endings), so a diff of the
fixture file shows only the change.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The naming convention of docs/writing-fixtures.md: entry ids `{prefix}_{NNN}`,
# source labels `bench-{content_type}-{NNN}`, case ids `{id}_q{N}` and `{id}_q_neg`.
ID_PREFIXES = {
    "markdown": "md",
    "json": "json",
    "plaintext": "txt",
    "transcript": "tr",
    "curated": "cur",
}
ENTRY_NUMBER_DIGITS = 3


class AuthoringError(Exception):
    """A refused authoring step; the message says what and why (exit status 2)."""


@dataclass(frozen=True)
class RawLine:
    """One line of a fixture file as bytes, with the entry it decodes to (if it does)."""

    data: bytes
    entry: dict[str, Any] | None


def read_lines(path: Path) -> list[RawLine]:
    """Every line of the file (none for a file that does not exist yet)."""
    if not path.exists():
        return []
    return [RawLine(data, _decoded(data)) for data in path.read_bytes().splitlines(keepends=True)]


def _decoded(data: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(data.decode("utf-8").lstrip("\ufeff"))
    except (UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def line_ending(lines: Sequence[RawLine]) -> bytes:
    """The file's line ending, so added lines match the ones already there."""
    return b"\r\n" if lines and lines[0].data.endswith(b"\r\n") else b"\n"


def encode_entry(entry: dict[str, Any], like: bytes | None, ending: bytes) -> bytes:
    """One JSON line; escapes non-ASCII only when the line it replaces was pure ASCII."""
    ascii_only = like is not None and like.isascii()
    return json.dumps(entry, ensure_ascii=ascii_only).encode("utf-8") + ending


@contextmanager
def locked(path: Path) -> Iterator[Path]:
    """The file's real path (through any symlink), its folder locked against other writers.

    Every authoring write re-reads the file inside this lock: two commands at once,
    or an editor's save while the engine was probing, never lose each other's lines.
    The folder is locked (`flock`), not the file, because a write replaces the file.
    """
    real = Path(os.path.realpath(path))
    real.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(real.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield real
    finally:
        os.close(descriptor)  # closing releases the lock


def write_lines(path: Path, lines: Sequence[bytes]) -> None:
    """Replace the file in one rename: a crash leaves the old file or the new one.

    A symlink is written through: its target gets the new lines and the link stays
    a link (a fixture shared by several projects keeps being shared).
    """
    path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(b"".join(lines))
            stream.flush()
            os.fsync(stream.fileno())
        if path.exists():
            os.chmod(temporary, path.stat().st_mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def appended(lines: Sequence[RawLine], new: Sequence[bytes]) -> list[bytes]:
    """The file's bytes as lines with `new` after them (a missing final newline is added)."""
    data = [line.data for line in lines]
    if data and not data[-1].endswith((b"\n", b"\r")):
        data[-1] += line_ending(lines)
    return [*data, *new]


def next_entry_number(content_type: str, entry_ids: Sequence[str]) -> int:
    """One more than the highest `{prefix}_{N}` id of the content type (1 when none)."""
    pattern = re.compile(re.escape(ID_PREFIXES[content_type]) + r"_(\d+)")
    numbers = [int(match.group(1)) for i in entry_ids if (match := pattern.fullmatch(i))]
    return max(numbers, default=0) + 1


def entry_id(content_type: str, number: int) -> str:
    return f"{ID_PREFIXES[content_type]}_{number:0{ENTRY_NUMBER_DIGITS}d}"


def source_label(content_type: str, number: int) -> str:
    return f"bench-{content_type}-{number:0{ENTRY_NUMBER_DIGITS}d}"


def next_case_id(entry_id: str, case_ids: Sequence[str], *, negative: bool) -> str:
    """`{id}_q{N}` after the entry's highest N; `{id}_q_neg`, then `_q_neg2`, for negatives."""
    if negative:
        base = f"{entry_id}_q_neg"
        taken = set(case_ids)
        if base not in taken:
            return base
        return next(f"{base}{n}" for n in range(2, len(taken) + 3) if f"{base}{n}" not in taken)
    pattern = re.compile(re.escape(entry_id) + r"_q(\d+)")
    numbers = [int(match.group(1)) for i in case_ids if (match := pattern.fullmatch(i))]
    return f"{entry_id}_q{max(numbers, default=0) + 1}"
