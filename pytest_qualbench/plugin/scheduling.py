"""xdist's schedulers, minus two ways a crashing worker loses the run.

- When a worker dies, xdist's `loadscope` scheduler and the two built on it
  (`loadfile`, `loadgroup`) put the whole unfinished work unit back in the
  queue, the case that crashed the worker included. A case that crashes every
  time it runs then kills worker after worker until xdist stops replacing them,
  and the session hangs. `load` mode reports the crashed case as failed and
  moves on; the scope schedulers here do the same.
- Every mode that hands out work (`load`, `worksteal` and the scope ones) can
  hand it to a worker that has died before the controller read its end of file:
  two workers die together on a loaded host. The send raises, and xdist ends the
  session on INTERNALERROR with the rest unrun (xdist issue #204). The work is
  already on that worker's books when the send fails, so dropping the send is
  enough: the worker's own node-down event, queued behind, hands its cases on.

Imported only from the `pytest_xdist_make_scheduler` hook, so only when xdist runs.
"""

from __future__ import annotations

import contextlib
from typing import Any

from xdist.scheduler import (
    LoadFileScheduling,
    LoadGroupScheduling,
    LoadScheduling,
    LoadScopeScheduling,
    WorkStealingScheduling,
)


class _TestsSentToAGoneWorkerWait:
    """`load` and `worksteal`: a send that finds the worker gone is dropped."""

    def _send_tests(self, node: Any, num: int) -> None:
        # The tests are booked on the node before the send; execnet's "cannot send
        # (already closed?)" means the process exited, and its node-down requeues them.
        with contextlib.suppress(OSError):
            super()._send_tests(node, num)  # type: ignore[misc]


class _UnitsSentToAGoneWorkerWait:
    """The scope modes: a work unit sent to a worker already gone is dropped."""

    def _assign_work_unit(self, node: Any) -> None:
        # Booked on the node before the send, as in _TestsSentToAGoneWorkerWait.
        with contextlib.suppress(OSError):
            super()._assign_work_unit(node)  # type: ignore[misc]


class _CrashedCaseStaysDone:
    """Marks the running case of a crashed worker done before the rest is rescheduled."""

    assigned_work: dict[Any, dict[str, dict[str, bool]]]

    def remove_node(self, node: Any) -> str | None:
        workload = self.assigned_work.get(node, {})
        crashed = next(
            (nodeid for unit in workload.values() for nodeid, done in unit.items() if not done),
            None,
        )
        if crashed is not None:
            for unit in workload.values():
                if crashed in unit:
                    unit[crashed] = True
            # A unit with nothing left to run must not go back in the queue: handed to
            # a new worker as an empty batch, it never finishes, and the session hangs
            # (`loadgroup`: without `xdist_group` marks every case is a unit of its own).
            for scope in [scope for scope, unit in workload.items() if all(unit.values())]:
                del workload[scope]
        # The parent requeues what is still pending; its crash guess would be the next case.
        super().remove_node(node)  # type: ignore[misc]
        return crashed


class CrashSafeLoad(_TestsSentToAGoneWorkerWait, LoadScheduling):  # type: ignore[misc]
    """`--dist load` (the default of `-n`) that survives two workers dying together."""


class CrashSafeWorkSteal(_TestsSentToAGoneWorkerWait, WorkStealingScheduling):  # type: ignore[misc]
    """`--dist worksteal` that survives two workers dying together."""

    def check_schedule(self) -> None:
        # Its last step asks the busiest worker to give work up, which may be gone:
        # unasked, its node-down requeues that work all the same.
        with contextlib.suppress(OSError):
            super().check_schedule()


class CrashSafeLoadFile(
    _CrashedCaseStaysDone,
    _UnitsSentToAGoneWorkerWait,
    LoadFileScheduling,  # type: ignore[misc]
):
    """`--dist loadfile` that never runs a crashed case again."""


class CrashSafeLoadScope(
    _CrashedCaseStaysDone,
    _UnitsSentToAGoneWorkerWait,
    LoadScopeScheduling,  # type: ignore[misc]
):
    """`--dist loadscope` that never runs a crashed case again."""


class CrashSafeLoadGroup(
    _CrashedCaseStaysDone,
    _UnitsSentToAGoneWorkerWait,
    LoadGroupScheduling,  # type: ignore[misc]
):
    """`--dist loadgroup` that never runs a crashed case again."""


# Every xdist mode that hands out work as workers ask for it. `each` sends each
# worker the whole run once, at its start, and xdist's own scheduler stays.
CRASH_SAFE_SCHEDULERS: dict[str, type[Any]] = {
    "load": CrashSafeLoad,
    "worksteal": CrashSafeWorkSteal,
    "loadscope": CrashSafeLoadScope,
    "loadfile": CrashSafeLoadFile,
    "loadgroup": CrashSafeLoadGroup,
}


def crash_safe_scheduler(config: Any, log: Any) -> Any:
    """The crash-safe scheduler for the `--dist` mode, None for xdist's own choice."""
    scheduler = CRASH_SAFE_SCHEDULERS.get(config.getvalue("dist"))
    return None if scheduler is None else scheduler(config, log)
