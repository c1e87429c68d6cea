"""What an engine's `search()` returned, checked against the protocol before anything reads it.

An engine that returned a string, a dict, bytes or None (or a list of them)
failed deep inside judging with "'str' object has no attribute 'text'" and
hundreds of lines of traceback per case. The check names the engine, what it
returned and what was expected, in one line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pytest_qualbench.engine.types import Result

# Iterable, but never a list of results: iterating them yields characters, bytes or keys.
NOT_A_LIST = (str, bytes, bytearray, memoryview, Mapping)

# The Result fields judging reads (telling chunks apart takes source and position).
RESULT_FIELDS: tuple[tuple[str, str, tuple[type, ...]], ...] = (
    ("text", "str", (str,)),
    ("layer", "str or None", (str, type(None))),
    ("title", "str", (str,)),
    ("source", "str", (str,)),
    ("position", "int", (int,)),
)


class EngineReturnError(TypeError):
    """An engine's `search()` returned something other than a list of `Result`."""


def engine_name(engine: object) -> str:
    """`module:Class`, as the report's `metadata.engine.name` spells it."""
    kind = type(engine)
    return f"{kind.__module__}:{kind.__qualname__}"


def checked_results(returned: object, engine: object) -> list[Result]:
    """`returned` as a list of `Result`, or EngineReturnError naming the engine and the type."""
    if returned is None or isinstance(returned, NOT_A_LIST) or not isinstance(returned, Iterable):
        raise EngineReturnError(
            f"engine {engine_name(engine)} returned {_type_name(returned)}, "
            "expected a list of Result"
        )
    results = list(returned)
    for rank, result in enumerate(results, start=1):
        if not isinstance(result, Result):
            raise EngineReturnError(
                f"engine {engine_name(engine)} returned a list holding {_type_name(result)} "
                f"(result {rank}), expected a list of Result"
            )
        for field, expected, allowed in RESULT_FIELDS:
            value = getattr(result, field)
            if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
                raise EngineReturnError(
                    f"engine {engine_name(engine)} returned a Result whose {field} is "
                    f"{_type_name(value)} (result {rank}), expected {expected}"
                )
    return results


def _type_name(value: Any) -> str:
    return "None" if value is None else type(value).__name__
