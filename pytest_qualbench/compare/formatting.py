"""Small text helpers shared by the comparison and report renderers: numbers, labels, tables."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pytest_qualbench.report.model import Metadata, Report


def report_label(report: Report) -> str:
    """`branch@sha` of the run when known, else its timestamp, else its dataset hash prefix."""
    metadata: Metadata | dict[str, object] = report.get("metadata") or {}
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


def described(value: Any) -> str:
    """A value as text: strings as they are, a missing one (no rank, no error) as 'none'."""
    if value is None:
        return "none"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def format_rank(rank: int | None) -> str:
    """A first relevant rank, `none` when nothing relevant came back."""
    return "none" if rank is None else str(rank)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], fmt: str) -> str:
    """A table as aligned text columns or as a GitHub markdown pipe table."""
    if fmt == "markdown":
        # Every cell may hold report text (case ids, layer names, JSON): shown literally.
        lines = [
            "| " + " | ".join(map(markdown_text, headers)) + " |",
            "|" + "|".join("---" for _ in headers) + "|",
        ]
        lines += ["| " + " | ".join(map(markdown_text, row)) + " |" for row in rows]
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


# What makes markup of text in GitHub markdown: inline syntax, table pipes, HTML.
_MARKDOWN_SYNTAX = frozenset("\\`*_[]|~")
_HTML_ENTITIES = {"&": "&amp;", "<": "&lt;"}


def markdown_text(text: str) -> str:
    """`text` shown as itself in GitHub markdown: no markup, no HTML, no @mention, one line.

    For everything qualstat did not write: a case id such as `<img src=...>` or
    `</details>` would otherwise become part of a pull request comment.
    """
    shown: list[str] = []
    previous = " "
    for char in text:
        if char in _HTML_ENTITIES:
            shown.append(_HTML_ENTITIES[char])
        elif char in _MARKDOWN_SYNTAX:
            shown.append("\\" + char)
        elif char == "@" and not previous.isalnum():
            # `@name` notifies a GitHub user; `hit@1` (after a letter) never does.
            shown.append("&#64;")
        elif char in "\r\n":
            shown.append(" ")
        else:
            shown.append(char)
        previous = char
    return "".join(shown)


def literal(text: str, fmt: str) -> str:
    """Report text for output in `fmt`: escaped for markdown, as is for plain text."""
    return markdown_text(text) if fmt == "markdown" else text
