"""Asking an engine for its optional capabilities (`engine.types`): the one place that does.

Every other module calls these functions instead of probing an engine's attributes,
so what the plugin asks of an engine is written down once, and mypy checks it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pytest_qualbench.engine.returned import checked_results
from pytest_qualbench.engine.types import (
    Chunk,
    Closes,
    Configured,
    CorrectsQueries,
    DeclaresContentTypes,
    DeclaresLayers,
    IndexesChunks,
    ListsChunks,
    Result,
    Results,
    SearchEngine,
    Warns,
)


def search(engine: SearchEngine, query: str, *, limit: int, kinds: Iterable[str]) -> Results:
    """The engine's results for `query`, with the query it searched after a correction."""
    found = engine.search(query, limit=limit, kinds=kinds)
    results = checked_results(found, engine)
    return Results(results, corrected_query=corrected_query(engine, query, found))


def corrected_query(engine: object, query: str, found: Iterable[Result]) -> str | None:
    """The correction `found` carries, else the one the engine reports, else None."""
    if isinstance(found, Results):
        return found.corrected_query
    if isinstance(engine, CorrectsQueries):
        return engine.corrected_query(query)
    return None


def listed_chunks(engine: object) -> tuple[Chunk, ...] | None:
    """Every chunk the engine indexed, or None when it cannot list them."""
    return tuple(engine.chunks()) if isinstance(engine, ListsChunks) else None


def lists_chunks(engine: object) -> bool:
    return isinstance(engine, ListsChunks)


def config(engine: object) -> Mapping[str, object]:
    """The engine's own description of its settings; empty when it has none (or no mapping)."""
    if isinstance(engine, Configured) and isinstance(engine.config, Mapping):
        return engine.config
    return {}


def warnings(engine: object) -> tuple[str, ...]:
    """What the engine's indexing could not do as asked, as text."""
    return tuple(str(warning) for warning in engine.warnings) if isinstance(engine, Warns) else ()


def declared_layers(factory: object) -> tuple[str, ...] | None:
    """The layer names an engine's factory declares; None when it declares none (or no strings)."""
    return _strings(factory.layers) if isinstance(factory, DeclaresLayers) else None


def declared_content_types(factory: object) -> tuple[str, ...]:
    """The extra content types an engine's factory declares (none unless strings)."""
    types = _strings(factory.content_types) if isinstance(factory, DeclaresContentTypes) else None
    return types or ()


def _strings(value: object) -> tuple[str, ...] | None:
    if isinstance(value, tuple | list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return None


def indexes_chunks(engine: object) -> bool:
    return isinstance(engine, IndexesChunks)


def close(resource: object) -> None:
    """Let an engine or ranker release what it holds outside the process, if it holds any."""
    if isinstance(resource, Closes):
        resource.close()
