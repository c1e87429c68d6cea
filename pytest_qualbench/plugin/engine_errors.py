"""An exception from the user's engine, shown as pytest shows a test's: their frames only.

Without pruning, one wrong line in an engine's `search` printed some 600 lines of
pytest, pluggy and plugin frames. The engine's frames (a user's module, or the
built-in engine's) are kept, every chained exception is pruned the same way, and the
case and query the engine was given come first.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy
import pytest

import pytest_qualbench
from pytest_qualbench.fixtures import Case

if TYPE_CHECKING:
    from _pytest._code.code import Traceback, TracebackEntry

PLUGIN_DIR = Path(pytest_qualbench.__file__).resolve().parent
# The built-in engine's frames are an engine's frames: a bug there is shown too.
ENGINE_DIR = PLUGIN_DIR / "engine"
FRAMEWORK_DIRS = (
    PLUGIN_DIR,
    Path(pytest.__file__).resolve().parent.parent / "_pytest",
    Path(pluggy.__file__).resolve().parent,
)
# pytest's --tb styles that getrepr draws itself ("auto" is pytest's long-then-short).
TB_STYLES = {"auto": "long", "long": "long", "short": "short", "line": "line", "no": "no"}


def is_framework_frame(entry: TracebackEntry) -> bool:
    """A frame of pytest, pluggy or the plugin itself (not its built-in engine)."""
    path = Path(str(entry.path)).resolve()
    if path.is_relative_to(ENGINE_DIR):
        return False
    return any(path.is_relative_to(directory) for directory in FRAMEWORK_DIRS)


def engine_frames(excinfo: pytest.ExceptionInfo[BaseException]) -> Traceback:
    """The traceback without framework frames; all of it if nothing else is left."""
    pruned = excinfo.traceback.filter(lambda entry: not is_framework_frame(entry))
    return pruned if len(pruned) else excinfo.traceback


def render_engine_error(
    excinfo: pytest.ExceptionInfo[BaseException], case: Case, config: pytest.Config
) -> str:
    """Case and query, then the engine's frames in the user's --tb style (--fulltrace: all)."""
    header = [
        f"the engine raised {type(excinfo.value).__name__} on case {case.case_id} "
        f"[{case.content_type}] {case.path}:{case.line}",
        f"query: {case.query!r}",
    ]
    style: Any = TB_STYLES.get(str(config.getoption("tbstyle", "auto")), "native")
    full: bool = bool(config.getoption("fulltrace", False))
    shown = excinfo.getrepr(
        style=style,
        showlocals=bool(config.getoption("showlocals", False)),
        tbfilter=not full and engine_frames,
        chain=True,
    )
    return "\n".join([*header, "", str(shown)])
