"""Where a report may be written: never over a special file, a fixture, or another output.

Atomic writing renames a new file over the target, so whatever the target was
(a device node, a FIFO, a symlink, a fixture file) would become a plain report.
Every writer asks here first and gets the real file to write; a symlink is
resolved so that its target is written and the link stays.
"""

from __future__ import annotations

import stat
from collections.abc import Mapping
from pathlib import Path


class UnsafeOutput(ValueError):
    """An output path that must not be written; the message says why."""


def checked_output(path: Path, role: str, protected: Mapping[Path, str]) -> Path:
    """The regular file to write for `path` (its symlink target), or UnsafeOutput.

    `protected` maps files that must survive (fixtures, the baseline, the other
    outputs) to what they are, for the message.
    """
    target = path.resolve()
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise UnsafeOutput(f"{role} {path}: cannot check it: {exc.strerror}") from None
    if mode is not None and not stat.S_ISREG(mode):
        raise UnsafeOutput(
            f"{role} {path} is not a regular file ({_kind(mode)}); refusing to replace it"
        )
    for other, what in protected.items():
        if other.resolve() == target:
            raise UnsafeOutput(f"{role} {path} is {what}; refusing to overwrite it")
    return target


def _kind(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "a special file")
