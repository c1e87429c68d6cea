"""xdist's file and scope scheduling, minus re-running the case that crashed a worker.

When a worker dies, xdist's `loadfile`/`loadscope` schedulers put the whole
unfinished work unit back in the queue, the case that crashed the worker
included. A case that crashes every time it runs then kills worker after
worker until xdist stops replacing them, and the session hangs. `load` mode
reports the crashed case as failed and moves on; these subclasses do the same.

Imported only from the `pytest_xdist_make_scheduler` hook, so only when xdist runs.
"""

from __future__ import annotations

from typing import Any

from xdist.scheduler import LoadFileScheduling, LoadScopeScheduling


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
        # The parent requeues what is still pending; its crash guess would be the next case.
        super().remove_node(node)  # type: ignore[misc]
        return crashed


class CrashSafeLoadFile(_CrashedCaseStaysDone, LoadFileScheduling):  # type: ignore[misc]
    """`--dist loadfile` that never runs a crashed case again."""


class CrashSafeLoadScope(_CrashedCaseStaysDone, LoadScopeScheduling):  # type: ignore[misc]
    """`--dist loadscope` that never runs a crashed case again."""


def crash_safe_scheduler(config: Any, log: Any) -> Any:
    """The scheduler for `--dist loadfile`/`loadscope`, None for xdist's own choice."""
    mode = config.getvalue("dist")
    if mode == "loadfile":
        return CrashSafeLoadFile(config, log)
    if mode == "loadscope":
        return CrashSafeLoadScope(config, log)
    return None
