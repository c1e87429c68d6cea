"""A time limit on an engine call (--qualbench-timeout): the case fails, the run goes on.

(An index build that overruns is an engine that could not start: the run stops
before its cases, evaluation.runner.EngineStartupError.)

Python cannot stop a thread, so the call runs in a daemon thread that is left
behind when it overruns: the case fails with a message at once, and the
abandoned call ends with the process. A call stuck in C code that holds the GIL
(a catastrophic regex, say) cannot be interrupted this way; nothing in-process can.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class DeadlineExceeded(TimeoutError):
    """An engine call that did not return within the configured seconds."""


def call_within(function: Callable[[], T], seconds: float | None, what: str) -> T:
    """`function()`, or DeadlineExceeded once it has run `seconds` (None: no limit)."""
    if seconds is None:
        return function()
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(function())
        except BaseException as exc:  # handed to the waiting thread, raised there
            failure.append(exc)

    worker = threading.Thread(target=run, name="qualbench-deadline", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise DeadlineExceeded(
            f"{what} timed out after {seconds:g} s (--qualbench-timeout / ini qualbench_timeout); "
            "the call is abandoned"
        )
    if failure:
        raise failure[0]
    return outcome[0]
