"""The library versions a report records: the plugin's dependencies and a custom engine's.

A comparison says when they differ (numpy 2.3 -> 2.4), so a changed number is
not blamed on the code when a library moved under it. A ready engine names its
own library and version in its config (`library`; the postgres engine its
server's version too), so they are not looked up here a second time.
"""

from __future__ import annotations

import re
from importlib import metadata

PLUGIN_DISTRIBUTION = "pytest-qualbench"

# `tantivy>=0.22; extra == "tantivy"`: the distribution's name, and the marker of an extra.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_EXTRA = re.compile(r"\bextra\s*==")


def library_versions(engine_name: str | None) -> dict[str, str]:
    """Installed versions of the plugin's own dependencies and of a custom engine's library.

    A custom engine's library is the distribution named like its top-level package,
    when one is installed (looked up by name: scanning every distribution's files
    costs seconds).
    """
    names = _requirements()
    top_level = (engine_name or "").partition(":")[0].partition(".")[0]
    if top_level and top_level != "pytest_qualbench":
        names.append(top_level)
    versions = {}
    for name in names:
        try:
            versions[_normalized(name)] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return dict(sorted(versions.items()))


def _requirements() -> list[str]:
    """The plugin's unconditional requirements (an extra's engine names its library itself)."""
    try:
        requirements = metadata.requires(PLUGIN_DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return []
    names = []
    for text in requirements:
        name = _NAME.match(text)
        if name is not None and _EXTRA.search(text) is None:
            names.append(name.group())
    return names


def _normalized(name: str) -> str:
    """PEP 503: `Rank_BM25` and `rank-bm25` are one distribution."""
    return re.sub(r"[-_.]+", "-", name).lower()
