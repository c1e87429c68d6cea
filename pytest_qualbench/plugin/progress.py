"""A sign of life during one long call (an index build) that reports no progress itself.

An engine's `index()` is a single call, so the only honest progress is the time it
has taken: after `after` seconds, and then every `every` seconds, `tick` is called
with the seconds elapsed, from a helper thread, until the call returns.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def ticking(tick: Callable[[float], None], *, after: float, every: float) -> Iterator[None]:
    """Call `tick(elapsed)` while the body runs longer than `after` seconds."""
    done = threading.Event()
    started = time.perf_counter()

    def run() -> None:
        wait = after
        while not done.wait(wait):
            tick(time.perf_counter() - started)
            wait = every

    thread = threading.Thread(target=run, name="qualbench-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
