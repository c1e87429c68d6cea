"""The library versions a report records: the plugin's dependencies and the engine's.

A comparison says when they differ (tantivy 0.22 -> 0.24), so a changed number
is not blamed on the code when a library moved under it.
"""

from __future__ import annotations

import re
from importlib import metadata

from pytest_qualbench.adapters.registry import BUILTIN_ENGINES

PLUGIN_DISTRIBUTION = "pytest-qualbench"

# `tantivy>=0.22; extra == "tantivy"`: the distribution's name, and the extra it belongs to.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def library_versions(engine_name: str | None) -> dict[str, str]:
    """Installed versions of the plugin's own dependencies and of the engine's library.

    The engine's library is its extra's for a ready engine, and for any other the
    distribution named like its top-level package, when one is installed (looked up
    by name: scanning every distribution's files costs seconds).
    """
    module = (engine_name or "").partition(":")[0]
    extra = next(
        (
            named.extra
            for named in BUILTIN_ENGINES.values()
            if named.target.partition(":")[0] == module
        ),
        None,
    )
    names = [*_requirements(extra)]
    top_level = module.partition(".")[0]
    if top_level and top_level != "pytest_qualbench":
        names.append(top_level)
    versions = {}
    for name in names:
        try:
            versions[_normalized(name)] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return dict(sorted(versions.items()))


def _requirements(extra: str | None) -> list[str]:
    """The plugin's unconditional requirements, and those of `extra`."""
    try:
        requirements = metadata.requires(PLUGIN_DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return []
    names = []
    for text in requirements:
        name = _NAME.match(text)
        marker = _EXTRA.search(text)
        if name is not None and (marker is None or marker.group(1) == extra):
            names.append(name.group())
    return names


def _normalized(name: str) -> str:
    """PEP 503: `Rank_BM25` and `rank-bm25` are one distribution."""
    return re.sub(r"[-_.]+", "-", name).lower()
