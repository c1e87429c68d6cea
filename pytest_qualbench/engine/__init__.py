"""Search engines: the protocol, its records, and the built-in engine."""

from pytest_qualbench.engine.builtin import Engine
from pytest_qualbench.engine.types import (
    ALL_KINDS,
    DEFAULT_KINDS,
    DEFAULT_LIMIT,
    Chunk,
    Result,
    SearchEngine,
)

__all__ = [
    "ALL_KINDS",
    "DEFAULT_KINDS",
    "DEFAULT_LIMIT",
    "Chunk",
    "Engine",
    "Result",
    "SearchEngine",
]
