"""An exception from the user's engine, shown as pytest shows a test's: their frames only.

Without pruning, one wrong line in an engine's `search` printed some 600 lines of
pytest, pluggy and plugin frames. The engine's frames (a user's module, or the
built-in engine's) are kept, and every chained exception is pruned the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy
import pytest

import pytest_qualbench

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr, Traceback, TracebackEntry

PLUGIN_DIR = Path(pytest_qualbench.__file__).resolve().parent
# The built-in engine's frames are an engine's frames: a bug there is shown too.
ENGINE_DIR = PLUGIN_DIR / "engine"
# The plugin's one caller of an engine's methods sits beside the engine, and is the plugin's.
ENGINE_CALLER = ENGINE_DIR / "capabilities.py"
FRAMEWORK_DIRS = (
    PLUGIN_DIR,
    Path(pytest.__file__).resolve().parent.parent / "_pytest",
    Path(pluggy.__file__).resolve().parent,
)
# pytest's --tb styles that getrepr draws itself ("auto" is pytest's long-then-short).
TB_STYLES = {"auto": "long", "long": "long", "short": "short", "line": "line", "no": "no"}


def is_framework_frame(entry: TracebackEntry) -> bool:
    """A frame of pytest, pluggy or the plugin itself (not its built-in engine)."""
    return is_framework_file(str(entry.path))


def is_framework_file(filename: str) -> bool:
    """A file of pytest, pluggy or the plugin itself (not its built-in engine)."""
    path = Path(filename).resolve()
    if path.is_relative_to(ENGINE_DIR) and path != ENGINE_CALLER:
        return False
    return any(path.is_relative_to(directory) for directory in FRAMEWORK_DIRS)


def engine_frames(excinfo: pytest.ExceptionInfo[BaseException]) -> Traceback:
    """The traceback without framework frames; all of it if nothing else is left."""
    pruned = excinfo.traceback.filter(lambda entry: not is_framework_frame(entry))
    return pruned if len(pruned) else excinfo.traceback


def engine_error_repr(
    excinfo: pytest.ExceptionInfo[BaseException], config: pytest.Config
) -> TerminalRepr:
    """The engine's frames in the user's --tb style; every frame under --fulltrace."""
    style: Any = TB_STYLES.get(str(config.getoption("tbstyle", "auto")), "native")
    full = bool(config.getoption("fulltrace", False))
    return excinfo.getrepr(
        style=style,
        showlocals=bool(config.getoption("showlocals", False)),
        tbfilter=False if full else engine_frames,
        chain=True,
    )
