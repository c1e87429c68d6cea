"""Option parsers shared by the pytest plugin and the console commands.

Each is an argparse `type=` callable that raises `argparse.ArgumentTypeError`, so
pytest's option parser, the ini readers and the CLIs report a bad value the
same way. Nothing here imports pytest, and the parsers of optional features
import their module only when the option is given: the plugin imports this
module in every pytest run.
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_qualbench.report.floors import Floor


def positive_int(text: str) -> int:
    """argparse `type=`: a whole number >= 1."""
    return _whole_number(text, minimum=1)


def non_negative_int(text: str) -> int:
    """argparse `type=`: a whole number >= 0."""
    return _whole_number(text, minimum=0)


GAIN_NAMES = ("linear", "exponential")


def gain_name(text: str) -> str:
    """argparse `type=`: nDCG's gain for graded cases, `linear` (trec_eval's) or `exponential`."""
    name = text.strip() or GAIN_NAMES[0]
    if name not in GAIN_NAMES:
        raise argparse.ArgumentTypeError(f"{text!r}: choose {' or '.join(GAIN_NAMES)}")
    return name


def entry_grade(text: str) -> tuple[str, int]:
    """argparse `type=`: `ENTRY=GRADE`, an entry id and its graded relevance (an integer >= 0)."""
    entry_id, separator, grade = text.partition("=")
    if not separator or not entry_id.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: expected ENTRY=GRADE, e.g. md_003=2")
    try:
        return entry_id.strip(), _whole_number(grade, minimum=0)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: the grade {exc}") from None


def _whole_number(text: str, *, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"{value} is not >= {minimum}")
    return value


def positive_seconds(text: str) -> float:
    """argparse `type=`: a finite number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds > 0")
    return value


# The option parsers below import their module only when the option is given.


def floor_option(text: str) -> Floor:
    """argparse `type=` for --qualbench-floor."""
    from pytest_qualbench.report.floors import parse_floor

    # The content type is checked once the engine, which may declare more, is known.
    return parse_floor(text, content_types=None)


def checks_option(text: str) -> frozenset[str]:
    """argparse `type=` for --qualbench-checks."""
    from pytest_qualbench.evaluation.judge import parse_checks

    return parse_checks(text)


def engine_option(text: str) -> tuple[str, str]:
    """argparse `type=` for --qualbench-engine-option: KEY=VALUE."""
    from pytest_qualbench.evaluation.engine_options import EngineOptionError, parse_pair

    try:
        return parse_pair(text)
    except EngineOptionError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def rankers_option(text: str) -> tuple[str, ...]:
    """argparse `type=` for --qualbench-rankers."""
    from pytest_qualbench.sections.rankers import parse_ranker_names

    return parse_ranker_names(text)
