"""Small text helpers shared by the comparison and report renderers: numbers, labels, tables."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any


def report_label(report: Mapping[str, Any]) -> str:
    """`branch@sha` of the run when known, else its timestamp, else its dataset hash prefix."""
    metadata = report.get("metadata") or {}
    git = metadata.get("git")
    if isinstance(git, dict) and git.get("sha"):
        return f"{git.get('branch') or 'detached'}@{str(git['sha'])[:10]}"
    if metadata.get("timestamp"):
        return str(metadata["timestamp"])
    return str(report["dataset_hash"])[:19]


def format_p(p_value: float | None) -> str:
    """A p-value with four decimals, `-` when no case changed."""
    return "-" if p_value is None else f"{p_value:.4f}"


def format_value(value: Any) -> str:
    """A metric or cell value for a table: floats with four decimals, null as n/a."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def format_rank(rank: int | None) -> str:
    """A first relevant rank, `none` when nothing relevant came back."""
    return "none" if rank is None else str(rank)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], fmt: str) -> str:
    """A table as aligned text columns or as a GitHub markdown pipe table."""
    if fmt == "markdown":
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        # A literal pipe inside a cell would end it; layer names never hold one, JSON might.
        lines += [
            "| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows
        ]
        return "\n".join(lines)
    widths = [max(len(cell) for cell in column) for column in zip(headers, *rows, strict=True)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in [headers, *rows]
    )


def heading(title: str, fmt: str, level: int = 3) -> str:
    """A section title: a markdown heading, or the bare title followed by a rule."""
    if fmt == "markdown":
        return "#" * level + " " + title
    return f"{title}\n{'-' * len(title)}"
