"""`qualbench add`: one fixture entry per document file, its text the haystack.

Everything is checked before anything is written: a document that cannot become an
entry (unknown type, not UTF-8, empty, already present, not indexable by the engine)
refuses the whole command with one line per problem, naming the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_qualbench.authoring.fixture_lines import (
    AuthoringError,
    appended,
    encode_entry,
    entry_id,
    line_ending,
    next_entry_number,
    read_lines,
    source_label,
)
from pytest_qualbench.engine import capabilities
from pytest_qualbench.evaluation.runner import EngineFactory
from pytest_qualbench.fixtures.parsing import parse_entry
from pytest_qualbench.fixtures.schema import CONTENT_TYPES, Entry, FixtureSet

EXTENSION_TYPES = {".md": "markdown", ".json": "json", ".txt": "plaintext", ".log": "plaintext"}
DEFAULT_SOURCE_KIND = "durable"


@dataclass(frozen=True)
class AddedEntry:
    """A document that became an entry."""

    document: Path
    entry_id: str
    content_type: str
    chunks: int | None


@dataclass(frozen=True)
class AddPlan:
    """The target file's new lines, and the entries they add."""

    lines: tuple[bytes, ...]
    added: tuple[AddedEntry, ...]


def document_files(paths: Sequence[Path], content_type: str | None) -> list[Path]:
    """Files as named; a directory gives its files of a known extension (any, with --type)."""
    files: list[Path] = []
    for path in paths:
        if not path.is_dir():
            files.append(path)
            continue
        files += sorted(
            found
            for found in path.rglob("*")
            if found.is_file()
            and not any(part.startswith(".") for part in found.relative_to(path).parts)
            and (content_type is not None or found.suffix.lower() in EXTENSION_TYPES)
        )
    return files


def plan_add(
    documents: Sequence[Path],
    target: Path,
    fixture_set: FixtureSet,
    engine_factory: EngineFactory,
    *,
    content_type: str | None = None,
    source_kind: str = DEFAULT_SOURCE_KIND,
) -> AddPlan:
    """The target file with one new entry per document, or AuthoringError naming every problem.

    `fixture_set` is every entry the new ones must not repeat (ids, texts); it may
    include the target file.
    """
    if not documents:
        raise AuthoringError("no document files to add")
    lines = read_lines(target)
    known: list[tuple[str, str]] = [(entry.id, entry.haystack) for entry in fixture_set.entries()]
    known += [
        (str(line.entry.get("id")), str(line.entry.get("haystack")))
        for line in lines
        if line.entry is not None
    ]
    problems: list[str] = []
    added: list[AddedEntry] = []
    new_lines: list[bytes] = []
    for document in documents:
        try:
            kind_of_content = content_type or _type_from_extension(document)
            text = _read_text(document)
            _refuse_duplicate(text, known)
            number = next_entry_number(kind_of_content, [identifier for identifier, _ in known])
            new_id = entry_id(kind_of_content, number)
            raw: dict[str, Any] = {
                "id": new_id,
                "content_type": kind_of_content,
                "haystack": text,
                "source_label": source_label(kind_of_content, number),
                "source_kind": source_kind,
                "cases": [],
            }
            chunks = _indexable(raw, target, engine_factory)
        except AuthoringError as exc:
            problems.append(f"{document}: {exc}")
            continue
        known.append((new_id, text))
        added.append(AddedEntry(document, new_id, kind_of_content, chunks))
        new_lines.append(encode_entry(raw, None, line_ending(lines)))
    if problems:
        raise AuthoringError("\n".join(problems))
    return AddPlan(tuple(appended(lines, new_lines)), tuple(added))


def _type_from_extension(document: Path) -> str:
    content_type = EXTENSION_TYPES.get(document.suffix.lower())
    if content_type is None:
        known = ", ".join(f"{suffix} {name}" for suffix, name in EXTENSION_TYPES.items())
        raise AuthoringError(
            f"no content type for the extension {document.suffix or '(none)'!r} ({known}); "
            f"pass --type, one of {', '.join(CONTENT_TYPES)}"
        )
    return content_type


def _read_text(document: Path) -> str:
    try:
        data = document.read_bytes()
    except OSError as exc:
        raise AuthoringError(f"cannot read: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AuthoringError(
            f"not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start})"
        ) from None
    # The byte order mark some editors write is not part of the text.
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise AuthoringError("empty: there is nothing to search")
    return text


def _refuse_duplicate(text: str, known: Sequence[tuple[str, str]]) -> None:
    for identifier, haystack in known:
        if haystack == text:
            raise AuthoringError(f"already present as entry {identifier} (same text)")


def _indexable(raw: dict[str, Any], target: Path, engine_factory: EngineFactory) -> int | None:
    """Index the entry alone; its chunk count, or AuthoringError when the engine cannot."""
    entry, errors = parse_entry(raw, target.as_posix(), 1)
    if entry is None or errors:
        raise AuthoringError("; ".join(f"{error.field}: {error.message}" for error in errors))
    try:
        engine = engine_factory(entry.content_type)
        engine.index([entry])
    except Exception as exc:
        raise AuthoringError(
            f"the engine cannot index it as {entry.content_type}: {type(exc).__name__}: {exc}"
        ) from None
    for warning in capabilities.warnings(engine):
        raise AuthoringError(
            f"the engine cannot index it as {entry.content_type}: "
            f"{warning.removeprefix(entry.id + ': ')}"
        )
    return _chunk_count(engine, entry)


def _chunk_count(engine: object, entry: Entry) -> int | None:
    chunks = capabilities.listed_chunks(engine)
    if chunks is None:
        return None
    count = len(chunks)
    if count == 0:
        raise AuthoringError(f"the engine makes no chunk of it as {entry.content_type}")
    return count
