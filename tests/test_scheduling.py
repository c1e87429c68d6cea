"""The crash-safe schedulers: work sent to a worker already gone is handed on, not lost.

Driven the way xdist's own scheduler tests drive them: the real scheduler, with
stand-in worker nodes. A stand-in whose process has gone refuses every send as
execnet's closed channel does. The end-to-end race (two workers dying together
under `pytest -n 2`) is in test_xdist.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

pytest.importorskip("xdist")

# Imports xdist: after the skip.
from pytest_qualbench.plugin.scheduling import (
    CRASH_SAFE_SCHEDULERS,
    crash_safe_scheduler,
)

# Three files of twelve cases: the scope modes see three work units.
COLLECTION = [
    f"{name}.jsonl::case_{n:02d}" for name in ("json", "markdown", "plaintext") for n in range(12)
]


@dataclass(frozen=True)
class Gateway:
    id: str


@dataclass(eq=False)
class StandInNode:
    """What a scheduler reads of xdist's WorkerController, and what it was sent."""

    gateway: Gateway
    # The worker process exited; the controller has not read its end of file yet.
    gone: bool = False
    shutting_down: bool = False
    sent: list[int] = field(default_factory=list)
    refused: int = 0

    def send_runtest_some(self, indices: list[int]) -> None:
        self._reachable()
        self.sent.extend(indices)

    def send_steal(self, indices: list[int]) -> None:
        self._reachable()

    def shutdown(self) -> None:
        self.shutting_down = True

    def _reachable(self) -> None:
        if self.gone:
            self.refused += 1
            raise OSError("cannot send (already closed?)")


# Whom the controller hands work after that worker has gone: the worker whose last
# reports it is reading (a refill), or, under worksteal, the one asked to give work up.
GONE_WORKER = {
    "load": "reporting",
    "loadfile": "reporting",
    "loadgroup": "reporting",
    "loadscope": "reporting",
    "worksteal": "stolen from",
}


def test_every_crash_safe_mode_is_tested() -> None:
    assert set(GONE_WORKER) == set(CRASH_SAFE_SCHEDULERS)


@pytest.mark.parametrize(("dist", "gone_worker"), sorted(GONE_WORKER.items()))
def test_work_sent_to_a_worker_already_gone_goes_to_the_others(
    pytester: pytest.Pytester, dist: str, gone_worker: str
) -> None:
    config = pytester.parseconfig("--tx=2*popen", f"--dist={dist}")
    scheduler: Any = crash_safe_scheduler(config, None)
    assert type(scheduler) is CRASH_SAFE_SCHEDULERS[dist]
    first, second = StandInNode(Gateway("gw0")), StandInNode(Gateway("gw1"))
    for node in (first, second):
        scheduler.add_node(node)
    for node in (first, second):
        scheduler.add_node_collection(node, COLLECTION)
    scheduler.schedule()
    gone = second if gone_worker == "reporting" else first
    gone.gone = True
    # The second worker's reports are read; it holds its last case, as a worker
    # does until it has more work or a shutdown.
    ran = second.sent[:-1]
    for index in ran:
        scheduler.mark_test_complete(second, index)
    assert gone.refused
    # The gone worker's node-down: the case it died on, and the rest handed on.
    died_on = next(index for index in gone.sent if index not in ran)
    assert scheduler.remove_node(gone) == COLLECTION[died_on]
    live = [node for node in (first, second) if node is not gone]
    replacement = StandInNode(Gateway("gw2"))
    scheduler.add_node(replacement)
    scheduler.add_node_collection(replacement, COLLECTION)
    scheduler.schedule()
    live.append(replacement)
    while unreported := [(n, i) for n in live for i in n.sent if i not in ran]:
        for node, index in unreported:
            ran.append(index)
            scheduler.mark_test_complete(node, index)
    # Every other case ran, once.
    assert sorted([*ran, died_on]) == list(range(len(COLLECTION)))
