"""Chunkers, one per content type: each keeps the structure a needle may quote.

A chunker turns one entry's haystack into `Chunk`s whose text still holds the
heading line or the JSON key names, and whose title is the heading path or key
path. Positions count from 0 within the entry; `chunk_entries` renumbers them per
source when several entries share a source label.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pytest_qualbench.engine.types import Chunk
from pytest_qualbench.fixtures.schema import Entry

MAX_CHUNK_CHARS = 4096
TITLE_CHARS = 80
MAX_PARAGRAPHS = 200
WINDOW_LINES = 20
WINDOW_OVERLAP_LINES = 2
TURNS_PER_WINDOW = 4
TURN_OVERLAP = 1
JSON_IDENTITY_FIELDS = ("id", "name", "title", "key")

# The closing `#`s of a heading are cut in `heading_title`: in the regex, a lazy
# title followed by optional `[ \t]+#+` was quadratic on a long run of spaces.
_HEADING = re.compile(r" {0,3}(#{1,4})[ \t]+(.*)")
_ANY_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+\S")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BLANK_LINES = re.compile(r"\n[ \t]*\n")
_TURN = re.compile(r"^(Human|Assistant):")


@dataclass(frozen=True)
class Piece:
    """A chunk before it is tied to an entry: its text and title."""

    text: str
    title: str


@dataclass(frozen=True)
class Chunked:
    """An entry's chunks and the warnings its chunking raised (e.g. invalid JSON)."""

    chunks: tuple[Chunk, ...]
    warnings: tuple[str, ...]


def chunk_entry(entry: Entry) -> list[Chunk]:
    """Chunk one entry by its content type."""
    return list(chunk_entry_with_warnings(entry).chunks)


def chunk_entry_with_warnings(entry: Entry) -> Chunked:
    """Chunk one entry by its content type, keeping any warning the chunker recorded."""
    warnings: list[str] = []
    text = normalize_newlines(entry.haystack)
    chunker = CHUNKERS[entry.content_type]
    pieces = chunker(text, warnings.append)
    chunks = tuple(
        Chunk(
            text=piece.text,
            title=piece.title,
            source=entry.source_label,
            kind=entry.source_kind,
            position=position,
            entry_id=entry.id,
            metadata=entry.metadata,
        )
        for position, piece in enumerate(pieces)
    )
    return Chunked(chunks, tuple(f"{entry.id}: {warning}" for warning in warnings))


def chunk_entries(entries: Sequence[Entry]) -> tuple[tuple[Chunk, ...], tuple[str, ...]]:
    """Every entry's chunks, renumbered per source, and what chunking warned of.

    Entries sorted by (source, id) make the index, hence every ranking and tie,
    independent of the order entries arrive in.
    """
    chunks: list[Chunk] = []
    warnings: list[str] = []
    for entry in sorted(entries, key=lambda e: (e.source_label, e.id)):
        chunked = chunk_entry_with_warnings(entry)
        chunks.extend(chunked.chunks)
        warnings.extend(chunked.warnings)
    return renumber(chunks), tuple(warnings)


def renumber(chunks: Sequence[Chunk]) -> tuple[Chunk, ...]:
    """Positions counted per source, so (source, position) is unique even when sources repeat."""
    seen: dict[str, int] = {}
    renumbered = []
    for chunk in chunks:
        position = seen.get(chunk.source, 0)
        seen[chunk.source] = position + 1
        # Most entries have a source of their own: their positions need no new chunk.
        renumbered.append(
            chunk if chunk.position == position else replace(chunk, position=position)
        )
    return tuple(renumbered)


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR become LF, so every chunker sees one line ending."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def first_line_title(text: str) -> str:
    """The first non-blank line, cut to TITLE_CHARS characters."""
    for line in text.split("\n"):
        if line.strip():
            return line.strip()[:TITLE_CHARS]
    return ""


# Markdown -------------------------------------------------------------------------


def chunk_markdown(text: str, warn: Callable[[str], None]) -> list[Piece]:
    """Sections at H1-H4 headings (heading line kept), titled by the heading path."""
    pieces: list[Piece] = []
    path: list[tuple[int, str]] = []
    section: list[str] = []
    fence: str | None = None

    def flush() -> None:
        title = " > ".join(heading for _, heading in path)
        raw = "\n".join(section).strip("\n")
        # A section that fits stays verbatim, so needles spanning its lines still match.
        blocks = [raw] if len(raw) <= MAX_CHUNK_CHARS else pack(markdown_blocks(section))
        pieces.extend(Piece(block, title) for block in blocks if block.strip())
        section.clear()

    for line in text.split("\n"):
        heading = _HEADING.match(line) if fence is None else None
        if heading:
            flush()
            level = len(heading.group(1))
            path[:] = [(lvl, name) for lvl, name in path if lvl < level]
            path.append((level, heading_title(heading.group(2))))
        fence = next_fence_state(line, fence)
        section.append(line)
    flush()
    return pieces


def heading_title(text: str) -> str:
    """An ATX heading's text without its optional closing sequence (` ##`) and padding."""
    title = text.rstrip(" \t")
    without_closing = title.rstrip("#")
    if without_closing != title and without_closing[-1:] in (" ", "\t"):
        title = without_closing
    return title.strip()


def next_fence_state(line: str, fence: str | None) -> str | None:
    """The open fence marker after `line` (None when outside a fenced code block)."""
    marker = _FENCE.match(line)
    if marker is None:
        return fence
    if fence is None:
        return marker.group(1)
    closes = marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence)
    return None if closes else fence


def markdown_blocks(lines: list[str]) -> list[str]:
    """Blank-line separated blocks; a fenced code block stays inside one block."""
    blocks: list[str] = []
    current: list[str] = []
    fence: str | None = None
    for line in lines:
        if fence is None and not line.strip():
            if current:
                blocks.append("\n".join(current))
            current = []
            continue
        current.append(line)
        fence = next_fence_state(line, fence)
    if current:
        blocks.append("\n".join(current))
    return blocks


def pack(blocks: Iterable[str]) -> list[str]:
    """Join blocks with blank lines while within MAX_CHUNK_CHARS; never cut a block."""
    packed: list[str] = []
    current = ""
    for block in blocks:
        if current and len(current) + 2 + len(block) > MAX_CHUNK_CHARS:
            packed.append(current)
            current = ""
        current = f"{current}\n\n{block}" if current else block
    if current:
        packed.append(current)
    return packed


# JSON -----------------------------------------------------------------------------


def chunk_json(text: str, warn: Callable[[str], None]) -> list[Piece]:
    """Key-path chunks; invalid JSON is chunked as plaintext and a warning recorded."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        warn(
            f"invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
            "indexed as plaintext"
        )
        return chunk_plaintext(text, warn)
    except RecursionError:
        # Nesting deeper than Python's parser recursion: one haystack must not take
        # down its whole content type.
        warn("JSON nested too deeply to parse; indexed as plaintext")
        return chunk_plaintext(text, warn)
    if len(text) <= MAX_CHUNK_CHARS:
        # Small documents stay verbatim, so a needle copied from the haystack matches
        # whatever spacing the author used.
        return [Piece(text.strip(), json_title(value))] if text.strip() else []
    return json_pieces(value, "")


def json_pieces(value: Any, path: str) -> list[Piece]:
    """Members of a too-large container, batched up to MAX_CHUNK_CHARS; large ones recurse.

    An object member is rendered `"key": value`, and a recursed member's pieces
    start with `"key": ` too, so every piece names the key it came from.
    """
    if isinstance(value, dict):
        members = [(join_key(path, key), f"{render(key)}: ", item) for key, item in value.items()]
    elif isinstance(value, list):
        members = [(f"{path}[{index}]", "", item) for index, item in enumerate(value)]
    else:
        return [Piece(render(value), path)]
    pieces: list[Piece] = []
    batch: list[tuple[str, str, Any]] = []

    def flush() -> None:
        if batch:
            text = ", ".join(rendered for _, rendered, _ in batch)
            pieces.append(Piece(text, batch_title(path, batch, isinstance(value, list))))
            batch.clear()

    batch_chars = 0
    for member_path, prefix, item in members:
        rendered = prefix + render(item)
        if len(rendered) > MAX_CHUNK_CHARS and isinstance(item, (dict, list)) and item:
            flush()
            batch_chars = 0
            nested = json_pieces(item, member_path)
            pieces.extend(Piece(prefix + piece.text, piece.title) for piece in nested)
            continue
        if batch and batch_chars + len(rendered) > MAX_CHUNK_CHARS:
            flush()
            batch_chars = 0
        batch.append((member_path, rendered, item))
        batch_chars += len(rendered) + 2
    flush()
    return pieces


def render(value: Any) -> str:
    """One-line JSON with the usual `, ` and `: ` separators, non-ASCII kept as written."""
    return json.dumps(value, ensure_ascii=False)


def join_key(path: str, key: str) -> str:
    """The dotted key path of an object member."""
    return f"{path}.{key}" if path else key


def identity(item: Any) -> str | None:
    """The first identity field (id, name, title, key) of an object, as text."""
    if isinstance(item, dict):
        for field_name in JSON_IDENTITY_FIELDS:
            found = item.get(field_name)
            if isinstance(found, (str, int, float)) and not isinstance(found, bool):
                return str(found)
    return None


def batch_title(path: str, batch: list[tuple[str, str, Any]], from_array: bool) -> str:
    """Object members: their key paths. Array items: the array's path and item identities."""
    if not from_array:
        return ", ".join(member_path for member_path, _, _ in batch)
    names = [name for name in (identity(item) for _, _, item in batch) if name is not None]
    if not names:
        return path
    listed = ", ".join(names)
    return f"{path}: {listed}" if path else listed


def json_title(value: Any) -> str:
    """Title of a small document: its identity, its top-level keys, or its items' identities."""
    name = identity(value)
    if name is not None:
        return name
    if isinstance(value, dict):
        return ", ".join(str(key) for key in value)[:TITLE_CHARS]
    if isinstance(value, list):
        return batch_title("", [("", "", item) for item in value], from_array=True)[:TITLE_CHARS]
    return ""


# Plaintext ------------------------------------------------------------------------


def chunk_plaintext(text: str, warn: Callable[[str], None]) -> list[Piece]:
    """Paragraphs at blank lines; fixed line windows when paragraphs are unusable."""
    paragraphs = [p.strip("\n") for p in _BLANK_LINES.split(text) if p.strip()]
    usable = 2 <= len(paragraphs) <= MAX_PARAGRAPHS and all(
        len(p) <= MAX_CHUNK_CHARS for p in paragraphs
    )
    if usable:
        return [Piece(p, first_line_title(p)) for p in paragraphs]
    return line_windows(text)


def line_windows(text: str) -> list[Piece]:
    """Windows of WINDOW_LINES lines overlapping by WINDOW_OVERLAP_LINES."""
    lines = text.split("\n")
    step = WINDOW_LINES - WINDOW_OVERLAP_LINES
    pieces = []
    for start in range(0, max(len(lines) - WINDOW_OVERLAP_LINES, 1), step):
        # A text of one window is its own window: the entry's string, not a second copy
        # of it (at 10^5 chunks the copies were 140 MB the index kept).
        whole = start == 0 and len(lines) <= WINDOW_LINES
        window = (text if whole else "\n".join(lines[start : start + WINDOW_LINES])).strip("\n")
        if window.strip():
            pieces.append(Piece(window, first_line_title(window)))
    return pieces


# Transcript -----------------------------------------------------------------------


def chunk_transcript(text: str, warn: Callable[[str], None]) -> list[Piece]:
    """Windows of 4 Human:/Assistant: turns overlapping by 1, titled by the turn range."""
    turns = split_turns(text)
    if not turns:
        return []
    if not any(_TURN.match(turn) for turn in turns):
        warn("no Human:/Assistant: turns found; indexed as plaintext")
        return chunk_plaintext(text, warn)
    step = TURNS_PER_WINDOW - TURN_OVERLAP
    pieces = []
    for start in range(0, max(len(turns) - TURN_OVERLAP, 1), step):
        window = turns[start : start + TURNS_PER_WINDOW]
        last = start + len(window)
        title = f"turn {start + 1}" if len(window) == 1 else f"turns {start + 1}-{last}"
        pieces.append(Piece("\n".join(window), title))
    return pieces


def split_turns(text: str) -> list[str]:
    """Turns start at a `Human:` or `Assistant:` line; text before the first is its own turn."""
    turns: list[list[str]] = []
    for line in text.split("\n"):
        if _TURN.match(line) or not turns:
            turns.append([line])
        else:
            turns[-1].append(line)
    return [joined for joined in ("\n".join(t).strip("\n") for t in turns) if joined.strip()]


# Curated --------------------------------------------------------------------------


def chunk_curated(text: str, warn: Callable[[str], None]) -> list[Piece]:
    """Auto-detect: a JSON object or array, else markdown (headings, fences), else plaintext."""
    if text.lstrip().startswith(("{", "[")) and is_json(text):
        return chunk_json(text, warn)
    lines = text.split("\n")
    if any(_ANY_HEADING.match(line) or _FENCE.match(line) for line in lines):
        return chunk_markdown(text, warn)
    return chunk_plaintext(text, warn)


def is_json(text: str) -> bool:
    """True when the text parses as JSON."""
    try:
        json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return False
    return True


CHUNKERS: dict[str, Callable[[str, Callable[[str], None]], list[Piece]]] = {
    "markdown": chunk_markdown,
    "json": chunk_json,
    "plaintext": chunk_plaintext,
    "transcript": chunk_transcript,
    "curated": chunk_curated,
}
