"""Search engines: the protocol, its records, and the built-in engine."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_qualbench.engine.types import (
    ALL_KINDS,
    DEFAULT_KINDS,
    DEFAULT_LIMIT,
    Chunk,
    Result,
    Results,
    SearchEngine,
)

if TYPE_CHECKING:
    from pytest_qualbench.engine.builtin import Engine

__all__ = [
    "ALL_KINDS",
    "DEFAULT_KINDS",
    "DEFAULT_LIMIT",
    "Chunk",
    "Engine",
    "Result",
    "Results",
    "SearchEngine",
]


def __getattr__(name: str) -> Any:
    # The plugin imports this package in every pytest run; the engine (and its
    # chunkers) load only when a benchmark asks for `Engine`.
    if name == "Engine":
        from pytest_qualbench.engine.builtin import Engine

        return Engine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
