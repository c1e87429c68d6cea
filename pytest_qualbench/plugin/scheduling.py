"""xdist's file and scope scheduling, minus re-running the case that crashed a worker.

When a worker dies, xdist's `loadscope` scheduler and the two built on it
(`loadfile`, `loadgroup`) put the whole
unfinished work unit back in the queue, the case that crashed the worker
included. A case that crashes every time it runs then kills worker after
worker until xdist stops replacing them, and the session hangs. `load` mode
reports the crashed case as failed and moves on; these subclasses do the same.

Imported only from the `pytest_xdist_make_scheduler` hook, so only when xdist runs.
"""

from __future__ import annotations

from typing import Any

from xdist.scheduler import LoadFileScheduling, LoadGroupScheduling, LoadScopeScheduling


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


class CrashSafeLoadFile(_CrashedCaseStaysDone, LoadFileScheduling):  # type: ignore[misc]
    """`--dist loadfile` that never runs a crashed case again."""


class CrashSafeLoadScope(_CrashedCaseStaysDone, LoadScopeScheduling):  # type: ignore[misc]
    """`--dist loadscope` that never runs a crashed case again."""


class CrashSafeLoadGroup(_CrashedCaseStaysDone, LoadGroupScheduling):  # type: ignore[misc]
    """`--dist loadgroup` that never runs a crashed case again."""


# Every xdist mode whose scheduler requeues a crashed worker's work unit. The others
# (`load`, `worksteal`, `each`) report the crashed case and move on by themselves.
CRASH_SAFE_SCHEDULERS: dict[str, type] = {
    "loadscope": CrashSafeLoadScope,
    "loadfile": CrashSafeLoadFile,
    "loadgroup": CrashSafeLoadGroup,
}


def crash_safe_scheduler(config: Any, log: Any) -> Any:
    """The crash-safe scheduler for the `--dist` mode, None for xdist's own choice."""
    scheduler = CRASH_SAFE_SCHEDULERS.get(config.getvalue("dist"))
    return None if scheduler is None else scheduler(config, log)
