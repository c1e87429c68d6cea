"""Engine options: `KEY=VALUE` text turned into keyword arguments of an engine factory.

`--qualbench-engine-option` and the ini's `qualbench_engine_options` give text;
the factory's own signature says which keys exist and what each value must be:
every value is converted to its parameter's annotated type, so a typo in a key
or a value is a usage error before anything is indexed, never a silently
ignored setting. Whatever factory is configured gets them, the built-in
engine's or yours.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, Union, get_args, get_origin

TRUE_WORDS = frozenset({"true", "yes", "on", "1"})
FALSE_WORDS = frozenset({"false", "no", "off", "0"})
NONE_WORDS = frozenset({"none", "null"})
SCALARS: tuple[type, ...] = (str, int, float)
ACCEPTED_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


class EngineOptionError(ValueError):
    """An option the factory has no parameter for, or a value its type refuses."""


def parse_pair(text: str) -> tuple[str, str]:
    """`KEY=VALUE` split at the first `=`, both sides stripped; the key must be non-empty."""
    key, separator, value = text.partition("=")
    if not separator or not key.strip():
        raise EngineOptionError(f"engine option {text!r}: expected KEY=VALUE")
    return key.strip(), value.strip()


def merged_pairs(
    ini_lines: Iterable[str], option_pairs: Iterable[tuple[str, str]]
) -> dict[str, str]:
    """The ini's pairs, then the command line's: a key given twice keeps its last value."""
    merged = dict(parse_pair(line) for line in ini_lines if line.strip())
    merged.update(option_pairs)
    return merged


def factory_keywords(
    factory: Callable[..., Any], options: Mapping[str, str], shown_as: str
) -> dict[str, Any]:
    """Each option converted to its parameter's annotated type (unannotated: text).

    EngineOptionError names the factory (`shown_as`) and, for an unknown key,
    every key it accepts.
    """
    if not options:
        return {}
    parameters, rest = accepted_parameters(factory)
    keywords: dict[str, Any] = {}
    for key, text in options.items():
        parameter = parameters.get(key, rest)
        if parameter is None:
            accepted = ", ".join(sorted(parameters)) or "no keyword arguments"
            raise EngineOptionError(f"engine option {key!r}: {shown_as} accepts {accepted}")
        try:
            keywords[key] = converted(text, parameter.annotation)
        except ValueError as exc:
            raise EngineOptionError(f"engine option {key}={text!r}: {exc}") from None
    return keywords


def accepted_parameters(
    factory: Callable[..., Any],
) -> tuple[dict[str, inspect.Parameter], inspect.Parameter | None]:
    """The parameters a keyword argument can set, annotations evaluated, and the
    factory's `**kwargs` (which takes any other key), if it has one."""
    try:
        signature = inspect.signature(factory, eval_str=True)
    except (TypeError, ValueError, NameError) as exc:
        raise EngineOptionError(f"cannot read the factory's parameters: {exc}") from None
    named = {
        name: parameter
        for name, parameter in signature.parameters.items()
        if parameter.kind in ACCEPTED_KINDS
    }
    rest = next(
        (p for p in signature.parameters.values() if p.kind is inspect.Parameter.VAR_KEYWORD),
        None,
    )
    return named, rest


def converted(text: str, annotation: Any) -> Any:
    """`text` as a value of `annotation`: str, int, float, bool, a Literal, or a union of them."""
    if annotation is inspect.Parameter.empty or annotation is Any or annotation is str:
        return text
    if annotation is bool:
        return boolean(text)
    if annotation in SCALARS:
        try:
            return annotation(text)
        except ValueError:
            raise ValueError(f"expected {annotation_name(annotation)}") from None
    origin = get_origin(annotation)
    if origin is Literal:
        return literal(text, get_args(annotation))
    if origin is Union or origin is types.UnionType:
        return union_member(text, get_args(annotation))
    raise ValueError(f"a {annotation_name(annotation)} parameter cannot be set from text")


def boolean(text: str) -> bool:
    if text.lower() in TRUE_WORDS:
        return True
    if text.lower() in FALSE_WORDS:
        return False
    raise ValueError(f"expected a bool ({'/'.join(sorted(TRUE_WORDS | FALSE_WORDS))})")


def literal(text: str, choices: tuple[Any, ...]) -> Any:
    for choice in choices:
        if text == str(choice):
            return choice
    raise ValueError(f"expected one of {', '.join(str(choice) for choice in choices)}")


def union_member(text: str, members: tuple[Any, ...]) -> Any:
    """The first member type that takes the text; None for `none` when the union allows it."""
    if type(None) in members and text.lower() in NONE_WORDS:
        return None
    for member in (member for member in members if member is not type(None)):
        try:
            return converted(text, member)
        except ValueError:
            continue
    names = " or ".join(annotation_name(member) for member in members)
    raise ValueError(f"expected {names}")


def annotation_name(annotation: Any) -> str:
    if annotation is type(None):
        return "none"
    return annotation.__name__ if isinstance(annotation, type) else str(annotation)
