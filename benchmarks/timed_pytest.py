"""`python timed_pytest.py OUT ARGS...`: time pytest.main(ARGS) in this process, with the machine's pace.

Writes a JSON object to OUT: `wall_ms`, pytest.main's wall time, and `loop_ms`,
the time of a fixed pure-Python loop run just before and just after it. The
shared machine this is measured on changes pace by up to 1.8x between one
few-second stretch and the next (that same loop takes 13 ms or 25 ms): the
loop lets runs made at different paces be compared (pytest_runs.TimedRun).

The built-in engine's libraries (nltk, numpy, rapidfuzz) and the token counter
are imported before the clock starts: that takes 2-4 s here and moves by
+-0.5 s from run to run, which inside the timed window would drown the few
hundred milliseconds measured. Every run, qualbench or trivial, goes through
this script, so all of them hold the same modules in memory.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from pytest_qualbench.engine.analysis import porter_stemmer
from pytest_qualbench.engine.builtin import load_libraries
from pytest_qualbench.sections.tokens import token_counter

LOOP_ITERATIONS = 300_000
LOOP_REPEATS = 3


def pace_loop_ms() -> float:
    """Fastest of a few runs of a fixed loop: the machine's current pace."""
    timings = []
    for _ in range(LOOP_REPEATS):
        started = time.perf_counter()
        total = 0
        for number in range(LOOP_ITERATIONS):
            total += number % 7
        timings.append((time.perf_counter() - started) * 1000.0)
    return min(timings)


def main(out: str, args: list[str]) -> None:
    load_libraries()
    porter_stemmer()
    token_counter()
    before = pace_loop_ms()
    started = time.perf_counter()
    pytest.main(args)
    wall_ms = (time.perf_counter() - started) * 1000.0
    after = pace_loop_ms()
    Path(out).write_text(json.dumps({"wall_ms": wall_ms, "loop_ms": (before + after) / 2}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
