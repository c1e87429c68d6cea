"""What the two runs were made with, where it differs: engine, options, libraries, Python.

Libraries are the plugin's own (`metadata.libraries`); an engine's, and a ranker's,
are `library` in its config (`metadata.engine.config`, `rankers.config`).

A comparison leads with this, so `mrr -0.04` is read as "tantivy against the
built-in engine" or "k1 1.2 -> 0.5", not as a change of the code under review.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_qualbench.compare.formatting import described
from pytest_qualbench.compare.records import SetupChange
from pytest_qualbench.report.model import Report

# Metadata keys a report of this plugin records and an older one may lack.
RECORDED_SINCE = ("libraries", "limit", "checks")
ABSENT = "-"


def setup_changes(base: Report, head: Report) -> tuple[SetupChange, ...]:
    """Every recorded setting whose value differs, in the order a reader weighs them."""
    base_meta, head_meta = _metadata(base), _metadata(head)
    base_engine, head_engine = _mapping(base_meta.get("engine")), _mapping(head_meta.get("engine"))
    pairs: list[tuple[str, Any, Any]] = [
        ("engine", base_engine.get("name"), head_engine.get("name"))
    ]
    for part, label in (("options", "engine option"), ("config", "engine config")):
        pairs += _key_pairs(label, base_engine.get(part), head_engine.get(part))
    if "libraries" in base_meta and "libraries" in head_meta:
        pairs += _key_pairs("library", base_meta["libraries"], head_meta["libraries"])
    base_rankers = _mapping(_mapping(base.get("rankers")).get("config"))
    head_rankers = _mapping(_mapping(head.get("rankers")).get("config"))
    # A ranker only one run had is no change of setting: its numbers say it is new.
    for name in sorted(base_rankers.keys() & head_rankers.keys()):
        pairs += _key_pairs(f"ranker {name} config", base_rankers[name], head_rankers[name])
    pairs += [
        ("plugin version", base_meta.get("plugin_version"), head_meta.get("plugin_version")),
        ("dataset", base.get("dataset_hash"), head.get("dataset_hash")),
        ("python", base_meta.get("python"), head_meta.get("python")),
        ("relevant set", base_meta.get("relevant_set"), head_meta.get("relevant_set")),
    ]
    for key in ("limit", "checks"):
        if key in base_meta and key in head_meta:
            pairs.append((key, base_meta[key], head_meta[key]))
    return tuple(
        SetupChange(name, described(base_value), described(head_value))
        for name, base_value, head_value in pairs
        if base_value != head_value
    )


def unrecorded(base: Report, head: Report) -> tuple[str, ...]:
    """One line per report that predates a recorded setting, with the re-run hint."""
    missing = {
        role: tuple(key for key in RECORDED_SINCE if key not in _metadata(report))
        for role, report in (("base", base), ("head", head))
    }
    if missing["base"] and missing["base"] == missing["head"]:
        return (
            f"neither report records {', '.join(missing['base'])} (an older plugin made "
            "them): re-run them with this version to compare those too",
        )
    return tuple(
        f"the {role} report does not record {', '.join(keys)} (an older plugin made it): "
        "re-run it with this version to compare them"
        for role, keys in missing.items()
        if keys
    )


def _metadata(report: Report) -> Mapping[str, Any]:
    # compare.checking checks only metadata's engine, git and timestamp types: the
    # rest of a loaded report's metadata may be absent or of any shape.
    return _mapping(report.get("metadata"))


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _key_pairs(label: str, base: Any, head: Any) -> list[tuple[str, Any, Any]]:
    """(`label key`, base value, head value) for every key of either nested mapping."""
    base_flat, head_flat = _flattened(_mapping(base)), _flattened(_mapping(head))
    return [
        (f"{label} {key}", base_flat.get(key, ABSENT), head_flat.get(key, ABSENT))
        for key in sorted(base_flat.keys() | head_flat.keys())
    ]


def _flattened(values: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested config as dotted keys: `porter.bm25_k1`."""
    flat: dict[str, Any] = {}
    for key, value in values.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(_flattened(value, name + "."))
        else:
            flat[name] = value
    return flat
