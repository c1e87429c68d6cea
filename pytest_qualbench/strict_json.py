"""Reading JSON strictly: a repeated key or a NaN is an error, never silently resolved.

Python's json keeps the last of repeated keys and reads NaN and Infinity, which
JSON does not have. A fixture line with two "needles" would hide one list, a
report with two "overall" tables would compare the one nobody saw: both readers
(fixtures/loading.py, compare/loading.py) use the hook below.
"""

from __future__ import annotations

from typing import Any


def object_with_unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json `object_pairs_hook`: ValueError naming the first key an object repeats."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen.add(key)
    return dict(pairs)


def not_a_json_constant(constant: str) -> Any:
    """json `parse_constant`: NaN, Infinity and -Infinity are not JSON."""
    raise ValueError(f"{constant} is not JSON")
