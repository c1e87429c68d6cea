"""SIGTERM handled like Ctrl-C: the partial report is written and every engine closed.

`timeout`, `docker stop`, CI runners and process supervisors stop a run with
SIGTERM, whose default action ends the process at once: no partial report, and
engines that hold something outside the process (a PostgreSQL schema, a
temporary directory) never closed. While the benchmark runs, SIGTERM raises
KeyboardInterrupt in the main thread, so pytest unwinds exactly as for SIGINT;
the run then exits with 128 + 15 (143), the status a shell gives a process
SIGTERM ended. A handler someone else installed (the user's conftest, a harness
running pytest in-process) is left alone.

Under xdist the controller passes the signal on to its workers (Ctrl-C reaches
them through the terminal's process group; SIGTERM from `timeout` or `docker
stop` reaches the controller alone), so each worker can unwind too and close its
engines; one that xdist tears down before it has unwound is still killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from types import FrameType
from typing import Any

import pytest

# The conventional status of a process ended by a signal: 128 + its number.
TERMINATED_EXIT_STATUS = 128 + signal.SIGTERM

terminated_key = pytest.StashKey[bool]()
# The xdist workers' process ids, on the controller, while they are up.
worker_pids_key = pytest.StashKey[set[int]]()


def handle_sigterm(config: pytest.Config) -> None:
    """Turn SIGTERM into KeyboardInterrupt until the config is cleaned up."""
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous is not signal.SIG_DFL:
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        if config.stash.get(terminated_key, False):
            return  # already unwinding: let the cleanup finish
        config.stash[terminated_key] = True
        for pid in config.stash.get(worker_pids_key, set()):
            with contextlib.suppress(OSError):  # a worker gone already
                os.kill(pid, signal.SIGTERM)
        raise KeyboardInterrupt(f"received signal {signal.Signals(signum).name}")

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    signal.signal(signal.SIGTERM, interrupt)
    config.add_cleanup(restore)


def terminated_status(config: pytest.Config, status: int) -> int:
    """143 when SIGTERM ended the run, else the status pytest chose."""
    return TERMINATED_EXIT_STATUS if config.stash.get(terminated_key, False) else status


def worker_pid(node: Any) -> int | None:
    """The process id of a local xdist worker (execnet's popen gateway), None elsewhere."""
    popen = getattr(getattr(node.gateway, "_io", None), "popen", None)
    pid = getattr(popen, "pid", None)
    return pid if isinstance(pid, int) else None
