"""Engines by short name: the built-in ones, and those other packages register.

`--qualbench-engine`, the ini option and `--qualbench-rankers` take a short name
or `package.module:factory`. A factory is any callable returning a SearchEngine;
its keyword-only parameters are the engine's options. A third-party package
registers a name with an entry point in the group `pytest_qualbench.engines`:

    [project.entry-points."pytest_qualbench.engines"]
    myengine = "my_package.engine:MyEngine"

Built-in names win over an entry point of the same name. An adapter's module
is imported only when its name is asked for; a missing library is reported as
the extra to install.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from types import MappingProxyType

from pytest_qualbench.engine.types import SearchEngine

ENTRY_POINT_GROUP = "pytest_qualbench.engines"

EngineMaker = Callable[..., SearchEngine]


class EngineSpecError(ValueError):
    """An engine name that is not registered, or a `module:factory` that cannot be loaded."""


@dataclass(frozen=True)
class NamedEngine:
    """A short name, the factory it stands for, and what it needs installed."""

    name: str
    target: str
    summary: str
    # The pip extra that installs the engine's library; None when it needs none.
    extra: str | None = None
    # Factory keyword -> ini option it is read from when not given otherwise.
    ini_options: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # Whether the factory takes `embedding_cache` (the plugin points it beside the index cache).
    embeds: bool = False


BUILTIN_ENGINES = {
    named.name: named
    for named in (
        NamedEngine(
            "builtin",
            "pytest_qualbench.engine:Engine",
            "Porter BM25 + trigram BM25 fused by RRF, fuzzy typo correction",
        ),
        NamedEngine(
            "bm25s",
            "pytest_qualbench.adapters.bm25s:Bm25sEngine",
            "bm25s BM25 over the built-in chunks",
            extra="bm25s",
        ),
        NamedEngine(
            "tantivy",
            "pytest_qualbench.adapters.tantivy:TantivyEngine",
            "tantivy index (title boosted, en_stem), optional fuzzy terms",
            extra="tantivy",
        ),
        NamedEngine(
            "postgres",
            "pytest_qualbench.adapters.postgres:PostgresEngine",
            "PostgreSQL tsvector + GIN, ts_rank_cd, optional pg_trgm layer fused by RRF",
            extra="postgres",
            ini_options=MappingProxyType({"dsn": "qualbench_postgres_dsn"}),
        ),
        NamedEngine(
            "dense",
            "pytest_qualbench.adapters.dense:DenseEngine",
            "embeddings (embed=, default wordllama's bundled weights), numpy cosine",
            extra="dense",
            embeds=True,
        ),
        NamedEngine(
            "hybrid",
            "pytest_qualbench.adapters.hybrid:HybridEngine",
            "RRF of the built-in engine and dense",
            extra="dense",
            embeds=True,
        ),
        NamedEngine(
            "chroma",
            "pytest_qualbench.adapters.chroma:ChromaEngine",
            "a Chroma collection (embedded client, HNSW, cosine by default)",
            extra="chroma",
            embeds=True,
        ),
        NamedEngine(
            "lancedb",
            "pytest_qualbench.adapters.lancedb:LanceDbEngine",
            "a LanceDB table: vector, native full-text or hybrid (RRF) search",
            extra="lancedb",
            embeds=True,
        ),
        NamedEngine(
            "faiss",
            "pytest_qualbench.adapters.faiss:FaissEngine",
            "a FAISS index (IndexFlatIP by default, any index_factory string)",
            extra="faiss",
            embeds=True,
        ),
    )
}


def registered_engines() -> dict[str, NamedEngine]:
    """Every short name: entry points first, then the built-in names over them."""
    named = {
        point.name: NamedEngine(point.name, point.value, f"entry point of {point.dist.name}"
                                if point.dist else "entry point")
        for point in entry_points(group=ENTRY_POINT_GROUP)
    }  # fmt: skip
    return {**named, **BUILTIN_ENGINES}


def resolve_engine(spec: str) -> EngineMaker:
    """The factory a short name or `package.module:factory` stands for."""
    if ":" in spec:
        return load_engine_factory(spec)
    engines = registered_engines()
    if spec not in engines:
        raise EngineSpecError(
            f"unknown engine {spec!r}; registered: {', '.join(sorted(engines))}"
            " (or give package.module:factory)"
        )
    named = engines[spec]
    try:
        return load_engine_factory(named.target)
    except EngineSpecError as exc:
        if named.extra is None or not isinstance(exc.__cause__, ImportError):
            raise
        raise EngineSpecError(
            f"engine {spec!r} needs the {named.extra} extra: "
            f"pip install 'pytest-qualbench[{named.extra}]' ({exc.__cause__})"
        ) from exc.__cause__


def load_engine_factory(spec: str) -> EngineMaker:
    """Resolve `package.module:factory` to the callable it names."""
    module_name, separator, attribute = spec.partition(":")
    if not separator or not module_name or not attribute:
        raise EngineSpecError(f"engine {spec!r}: expected 'package.module:factory'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise EngineSpecError(f"engine {spec!r}: cannot import {module_name!r}: {exc}") from exc
    target: object = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise EngineSpecError(
                f"engine {spec!r}: {module_name!r} has no attribute {attribute!r}"
            )
        target = getattr(target, part)
    if not callable(target):
        raise EngineSpecError(f"engine {spec!r}: {attribute!r} is not callable")
    factory: EngineMaker = target
    return factory


def ini_options(spec: str) -> Mapping[str, str]:
    """Factory keyword -> ini option name, for a built-in short name (else none)."""
    named = BUILTIN_ENGINES.get(spec)
    return named.ini_options if named is not None else MappingProxyType({})


def embeds(spec: str) -> bool:
    """Whether a built-in short name is a vector engine with an embedding cache."""
    named = BUILTIN_ENGINES.get(spec)
    return named is not None and named.embeds
