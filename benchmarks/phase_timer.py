"""`pytest -p benchmarks.phase_timer`: where a pytest run's time goes, phase by phase.

Marks the time when pytest configures the plugins, starts the session, collects,
enters the run-test loop, starts the first item, leaves the loop, finishes the
session and unconfigures, and writes the marks (seconds since configure, in the
order they came) as JSON to the file named by the QUALBENCH_PHASES environment
variable; `phases` turns them into each phase's seconds. The interpreter's
start-up before configure and its exit after unconfigure lie outside: whoever
times the whole process has them as the remainder. The repository's root must be
importable (`PYTHONPATH`) when pytest runs elsewhere.

The wrappers are `tryfirst`, so they enclose every other plugin's work in the same
hook: the qualbench plugin's index builds before the first item, its report at
session finish (docs/performance.md, "The plugin's cost, and pytest's").
"""

from __future__ import annotations

import itertools
import json
import os
import time
from collections.abc import Generator
from pathlib import Path

import pytest

PHASES_FILE = "QUALBENCH_PHASES"
CONFIGURE = "configure"
_marks: dict[str, float] = {}


def phases(marks: dict[str, float]) -> dict[str, float]:
    """Each phase's seconds, from one mark to the next, named `first -> next`."""
    return {
        f"{start} -> {end}": marks[end] - marks[start] for start, end in itertools.pairwise(marks)
    }


def _mark(name: str) -> None:
    # The first time only: "first item" is marked by every item's protocol.
    _marks.setdefault(name, time.perf_counter())


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    # A new run in the same process (pytester) starts from no marks.
    _marks.clear()
    _mark(CONFIGURE)


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    _mark("session start")


def _between(start: str, end: str) -> Generator[None, object, object]:
    """A wrapper's body: `start` marked before the hook's other implementations, `end` after."""
    _mark(start)
    try:
        return (yield)
    finally:
        _mark(end)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    return (yield from _between("collection", "collected"))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, object, object]:
    return (yield from _between("run-test loop", "items done"))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> None:
    _mark("first item")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> Generator[None, object, object]:
    return (yield from _between("session finish", "session finished"))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    _mark("unconfigured")
    path = os.environ.get(PHASES_FILE)
    if path:
        started = _marks[CONFIGURE]
        marks = {name: moment - started for name, moment in _marks.items()}
        Path(path).write_text(json.dumps({"marks": marks}, indent=1), encoding="utf-8")
