"""Writing reports: strict, stable JSON text and atomic replacement of the file."""

from __future__ import annotations

import json
import math
import os
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# Report lists written a row per line (report_text).
ONE_LINE_ROWS = ("cases", "failures")
PARTIAL_SUFFIX = ".partial"
SUBSET_SUFFIX = ".subset"


class ReportValueWarning(UserWarning):
    """A value in the report that JSON cannot hold was written in another form."""


def partial_path(path: Path) -> Path:
    """Where a run that did not finish writes its report: `report.json` -> `report.partial.json`."""
    return path.with_name(f"{path.stem}{PARTIAL_SUFFIX}{path.suffix}")


def subset_path(path: Path) -> Path:
    """Where a run of only some cases writes its report: `report.json` -> `report.subset.json`."""
    return path.with_name(f"{path.stem}{SUBSET_SUFFIX}{path.suffix}")


def write_report(path: Path, report: Mapping[str, object]) -> None:
    """Write atomically: a reader (or a crash) never sees half a report.

    Any JSON object: the writer reads no field, so a `Report` or a test's few keys.
    """
    write_text_atomic(path, report_text(report))


def report_text(report: Mapping[str, object]) -> str:
    """Sorted keys, two-space indentation, and each case and failure on a line of its own.

    One line per case makes a diff of two reports one changed line per changed
    case, and lets the bulk go through json's C encoder (any indent selects the
    pure-Python one, about 0.1 ms per case).
    """
    members = []
    for key in sorted(report):
        value = report[key]
        if key in ONE_LINE_ROWS and isinstance(value, list) and value:
            rows = ",\n".join(f"    {_json(row)}" for row in value)
            text = f"[\n{rows}\n  ]"
        else:
            text = _strict_dumps(value, sort_keys=True, indent=2, ensure_ascii=False)
            text = text.replace("\n", "\n  ")
        members.append(f"  {_json(key)}: {text}")
    return "{\n" + ",\n".join(members) + "\n}\n"


def _json(value: Any) -> str:
    return _strict_dumps(value, sort_keys=True, ensure_ascii=False)


def _strict_dumps(value: Any, **options: Any) -> str:
    """JSON proper: NaN and infinities become null, other types their str(), each with a warning.

    json writes a bare `NaN` by default, which no strict reader accepts. The C
    encoder does the common case; only a value holding a non-finite number is
    walked in Python.
    """
    try:
        return json.dumps(value, allow_nan=False, default=_as_string, **options)
    except ValueError:
        warnings.warn(
            ReportValueWarning(
                "qualbench report: a NaN or infinite number is not JSON; written as null"
            ),
            stacklevel=2,
        )
        return json.dumps(_finite(value), allow_nan=False, default=_as_string, **options)


def _as_string(value: Any) -> str:
    warnings.warn(
        ReportValueWarning(
            f"qualbench report: a value of type {type(value).__name__} is not JSON; "
            f"written as its str(): {str(value)[:80]!r}"
        ),
        stacklevel=2,
    )
    return str(value)


def _finite(value: Any) -> Any:
    """`value` with every non-finite float replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def write_text_atomic(path: Path, text: str) -> None:
    """Write to a temporary file in the target's directory, then rename over the target.

    A symlink is resolved first: its target gets the new text and the link stays.
    """
    path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # A lone surrogate (an engine's os.fsdecode'd title, say) cannot be UTF-8;
        # written as a \uXXXX escape it stays valid JSON and the report is not lost.
        with os.fdopen(handle, "w", encoding="utf-8", errors="backslashreplace") as stream:
            stream.write(text)
        # mkstemp makes the file private (0600); a report is for others to read too.
        os.chmod(temporary, _umask_file_mode())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask_file_mode() -> int:
    """The mode a plain open() would give a new file under the process umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
