"""Which engine the benchmark runs: its factory, options and declared vocabulary.

From the command line and the ini file: `--qualbench-engine` / `qualbench_engine`,
the engine's own ini options, `--qualbench-engine-option` / `qualbench_engine_options`,
and the conftest hook `pytest_qualbench_make_engine`.
"""

from __future__ import annotations

import argparse
import functools
import traceback
from pathlib import Path
from typing import Any

import pytest

from pytest_qualbench.adapters.embedding import EMBEDDINGS_DIR
from pytest_qualbench.adapters.registry import (
    EngineMaker,
    EngineSpecError,
    embeds,
    ini_options,
    resolve_engine,
)
from pytest_qualbench.engine import capabilities
from pytest_qualbench.evaluation.engine_options import (
    EngineOptionError,
    factory_keywords,
    merged_pairs,
)
from pytest_qualbench.evaluation.runner import DEFAULT_ENGINE, EngineFactory, EngineStartupError
from pytest_qualbench.fixtures.schema import BUILTIN_VOCABULARY, CONTENT_TYPES, Vocabulary
from pytest_qualbench.plugin.engine_errors import is_framework_file


def engine_spec(config: pytest.Config) -> str:
    spec: str = (
        config.option.qualbench_engine or config.getini("qualbench_engine") or DEFAULT_ENGINE
    )
    return spec


def engine_maker(config: pytest.Config, spec: str) -> EngineMaker:
    """The factory a short name or module:factory names, with its ini options bound."""
    try:
        factory = resolve_engine(spec)
    except EngineSpecError as exc:
        raise pytest.UsageError(f"qualbench: {exc}") from None
    keywords = {
        keyword: value
        for keyword, ini_name in ini_options(spec).items()
        if (value := str(config.getini(ini_name)))
    }
    if embeds(spec):
        # Beside the index cache; `--qualbench-engine-option embedding_cache=` turns it off.
        keywords["embedding_cache"] = str(config.rootpath / EMBEDDINGS_DIR)
    return functools.partial(factory, **keywords) if keywords else factory


def configured_options(config: pytest.Config) -> dict[str, str]:
    """ini `qualbench_engine_options`, then every --qualbench-engine-option (last one wins)."""
    try:
        return merged_pairs(
            config.getini("qualbench_engine_options"), config.option.qualbench_engine_options
        )
    except EngineOptionError as exc:
        raise pytest.UsageError(f"qualbench: ini qualbench_engine_options: {exc}") from None


def configured_maker(
    config: pytest.Config, options: dict[str, str]
) -> tuple[EngineMaker, dict[str, Any]]:
    """The configured engine's factory with the engine options bound, and the typed options.

    Only the benchmarked engine gets them: an engine named as a ranker keeps its defaults.
    """
    spec = engine_spec(config)
    maker = engine_maker(config, spec)
    try:
        keywords = factory_keywords(maker, options, spec)
    except EngineOptionError as exc:
        raise pytest.UsageError(f"qualbench: {exc}") from None
    return (functools.partial(maker, **keywords) if keywords else maker), keywords


def engine_vocabulary(config: pytest.Config, maker: EngineMaker) -> Vocabulary:
    """The layer names and content types the configured engine declares (on its factory)."""
    if config.hook.pytest_qualbench_make_engine.get_hookimpls():
        return BUILTIN_VOCABULARY
    factory = maker.func if isinstance(maker, functools.partial) else maker
    layers = capabilities.declared_layers(factory)
    extra_types = capabilities.declared_content_types(factory)
    return Vocabulary(
        engine=engine_spec(config),
        layers=BUILTIN_VOCABULARY.layers if layers is None else layers,
        content_types=tuple(dict.fromkeys((*CONTENT_TYPES, *extra_types))),
    )


def engine_factory(config: pytest.Config, maker: EngineMaker | None = None) -> EngineFactory:
    """One engine per content type: the conftest hook's, else the configured factory's.

    The options go to the configured factory, for the content types the hook leaves to it.
    """
    default = (
        maker if maker is not None else configured_maker(config, configured_options(config))[0]
    )

    def make_engine(content_type: str) -> Any:
        engine = config.hook.pytest_qualbench_make_engine(config=config, content_type=content_type)
        return engine if engine is not None else default()

    return make_engine


def ini_value(config: pytest.Config, name: str, parse: Any) -> Any:
    try:
        return parse(str(config.getini(name)))
    except argparse.ArgumentTypeError as exc:
        raise pytest.UsageError(f"qualbench: ini {name}: {exc}") from None


def startup_message(config: pytest.Config, error: EngineStartupError, outcome: str) -> str:
    """One message for an engine that could not start: engine, content type, cause, fix.

    `outcome` says what the failure left untouched (`no case ran and no report was written`).
    """
    cause = error.cause
    hooked = bool(config.hook.pytest_qualbench_make_engine.get_hookimpls())
    engine = (
        "from the conftest hook pytest_qualbench_make_engine" if hooked else engine_spec(config)
    )
    lines = [
        f"qualbench: engine {engine} could not start for {error.content_type}: "
        f"{type(cause).__name__}: {cause}"
    ]
    # The engine's own last frame; none for a plugin-side cause (a timed-out build,
    # whose engine call was abandoned, or a factory handing back a shared engine).
    frames = [
        frame
        for frame in traceback.extract_tb(cause.__traceback__)
        if not is_framework_file(frame.filename)
    ]
    if frames:
        frame = frames[-1]
        lines.append(
            f"  raised at {_shown_path(frame.filename, config)}:{frame.lineno}, in {frame.name}"
        )
    lines.append(f"  fix: {_startup_fix(config, hooked)}")
    lines.append(f"  {outcome}")
    return "\n".join(lines)


def _startup_fix(config: pytest.Config, hooked: bool) -> str:
    if hooked:
        return "what the cause says, in the conftest hook or the engine it returns"
    spec = engine_spec(config)
    settings = [f"ini {name}" for name in ini_options(spec).values()]
    settings += ["--qualbench-engine-option / ini qualbench_engine_options"]
    return (
        f"what the cause says, or the engine's settings ({', '.join(settings)}; "
        "another engine: --qualbench-engine / ini qualbench_engine)"
    )


def _shown_path(filename: str, config: pytest.Config) -> str:
    path = Path(filename)
    try:
        return str(path.relative_to(config.rootpath))
    except ValueError:
        return filename
