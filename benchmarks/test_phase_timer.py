"""The phase timer: a pytest session's marks in the order pytest reaches them, and the
phases between them, on a tiny session and on marks whose answer is written by hand."""

from __future__ import annotations

import json

import pytest

from benchmarks.phase_timer import PHASES_FILE, phases

MARKS_IN_ORDER = [
    "configure",
    "session start",
    "collection",
    "collected",
    "run-test loop",
    "first item",
    "items done",
    "session finish",
    "session finished",
    "unconfigured",
]


def test_phases_are_the_differences_of_consecutive_marks() -> None:
    marks = {"configure": 0.0, "collection": 0.5, "collected": 2.0}
    assert phases(marks) == {"configure -> collection": 0.5, "collection -> collected": 1.5}


def test_a_session_writes_every_mark_in_pytests_order(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile("def test_one():\n    pass\n\ndef test_two():\n    pass\n")
    out = pytester.path / "phases.json"
    monkeypatch.setenv(PHASES_FILE, str(out))
    pytester.runpytest("-p", "benchmarks.phase_timer").assert_outcomes(passed=2)
    marks = json.loads(out.read_text(encoding="utf-8"))["marks"]
    assert list(marks) == MARKS_IN_ORDER
    assert marks["configure"] == 0.0
    assert all(seconds >= 0 for seconds in phases(marks).values())
    assert sum(phases(marks).values()) == pytest.approx(marks["unconfigured"])


def test_without_the_variable_nothing_is_written(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_one():\n    pass\n")
    pytester.runpytest("-p", "benchmarks.phase_timer").assert_outcomes(passed=1)
    assert not list(pytester.path.glob("*.json"))
