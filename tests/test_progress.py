"""The progress ticker: silent for a short call, ticking for a long one, stopped after."""

from __future__ import annotations

import time

from pytest_qualbench.plugin.progress import ticking


def test_a_short_call_gives_no_tick() -> None:
    ticks: list[float] = []
    with ticking(ticks.append, after=5.0, every=1.0):
        pass
    assert ticks == []


def test_a_long_call_ticks_with_the_elapsed_time_and_stops_when_done() -> None:
    ticks: list[float] = []
    with ticking(ticks.append, after=0.05, every=0.05):
        time.sleep(0.3)
    count = len(ticks)
    assert count >= 2
    assert ticks == sorted(ticks) and ticks[0] >= 0.05
    time.sleep(0.15)
    assert len(ticks) == count
