"""Fixture schema: JSONL loading, validation and the dataset hash.

One JSON object per line describes an entry (a haystack to index) and its
cases (queries to judge). Validation is per line and per case: a broken line
becomes a `FixtureError` naming file, line and field, and every other line
still loads, so one typo never hides the rest of a benchmark.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonlines import InvalidLineError


CONTENT_TYPES = ("markdown", "json", "plaintext", "transcript", "curated")
SOURCE_KINDS = ("durable", "ephemeral", "session")
BASE_LAYERS = ("porter", "trigram", "rrf(porter+trigram)")
FUZZY_PREFIX = "fuzzy+"
NEGATIVE_LAYER = "none"
EXPECTED_LAYERS = (*BASE_LAYERS, *(FUZZY_PREFIX + layer for layer in BASE_LAYERS), NEGATIVE_LAYER)

ENTRY_FIELDS = ("id", "content_type", "haystack", "source_label", "source_kind", "cases")
OPTIONAL_ENTRY_FIELDS = ("metadata",)
CASE_FIELDS = ("case_id", "query", "needles", "expected_layer", "expected_rank_ceiling")


@dataclass(frozen=True)
class Case:
    """One labeled query against the corpus of its entry's content type."""

    case_id: str
    query: str
    needles: tuple[str, ...]
    expected_layer: str
    expected_rank_ceiling: int
    entry_id: str
    content_type: str
    path: str
    line: int

    @property
    def is_negative(self) -> bool:
        return not self.needles


@dataclass(frozen=True)
class Entry:
    """One haystack to index, with the cases that query it (possibly none)."""

    id: str
    content_type: str
    haystack: str
    source_label: str
    source_kind: str
    cases: tuple[Case, ...]
    path: str
    line: int
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class FixtureError:
    """A problem in one fixture line, located precisely enough to fix it."""

    path: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.field}: {self.message}"


@dataclass(frozen=True)
class FixtureFile:
    """The valid entries of one JSONL file and the errors of its broken lines."""

    path: Path
    display_path: str
    entries: tuple[Entry, ...]
    errors: tuple[FixtureError, ...]


@dataclass(frozen=True)
class FixtureSet:
    """Every fixture file of a run: the corpus source and the unit of the hash."""

    files: tuple[FixtureFile, ...]
    dataset_hash: str

    def entries(self, content_type: str | None = None) -> tuple[Entry, ...]:
        return tuple(
            entry
            for fixture_file in self.files
            for entry in fixture_file.entries
            if content_type is None or entry.content_type == content_type
        )

    def cases(self) -> tuple[Case, ...]:
        return tuple(case for entry in self.entries() for case in entry.cases)

    def errors(self) -> tuple[FixtureError, ...]:
        return tuple(error for fixture_file in self.files for error in fixture_file.errors)

    def file(self, path: Path) -> FixtureFile | None:
        resolved = path.resolve()
        for fixture_file in self.files:
            if fixture_file.path == resolved:
                return fixture_file
        return None


def discover_fixture_files(paths: Iterable[Path]) -> list[Path]:
    """Resolve files and directories (searched recursively) to sorted JSONL files."""
    found: set[Path] = set()
    for path in paths:
        if path.is_dir():
            found.update(p.resolve() for p in path.rglob("*.jsonl") if p.is_file())
        elif path.is_file() and path.suffix == ".jsonl":
            found.add(path.resolve())
    return sorted(found)


def display_path(path: Path, root: Path) -> str:
    """The path as a user reads it in errors and hashes: relative to root, POSIX style."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def dataset_hash(paths: Sequence[Path], root: Path) -> str:
    """`sha256:` + SHA-256 over every file's raw bytes, in sorted relative-path order."""
    digest = hashlib.sha256()
    for path in sorted(paths, key=lambda p: display_path(p, root)):
        digest.update(path.read_bytes())
    return "sha256:" + digest.hexdigest()


def load_fixture_set(paths: Sequence[Path], root: Path) -> FixtureSet:
    """Load every file, then reject ids and case_ids that repeat across the set."""
    files = sorted(
        (load_fixture_file(path, display_path(path, root)) for path in paths),
        key=lambda fixture_file: fixture_file.display_path,
    )
    return FixtureSet(
        files=_drop_duplicates(files),
        dataset_hash=dataset_hash([f.path for f in files], root),
    )


def load_fixture_file(path: Path, shown_as: str | None = None) -> FixtureFile:
    """Parse one JSONL file; each broken line or case is an error, never an exception."""
    # jsonlines pulls in attrs: imported when a fixture file is read, not at pytest start-up.
    import jsonlines

    shown = shown_as if shown_as is not None else path.as_posix()
    entries: list[Entry] = []
    errors: list[FixtureError] = []
    with path.open("rb") as stream:
        lines = _CountedLines(stream)
        reader = jsonlines.Reader(lines, loads=_loads)
        while True:
            try:
                raw = reader.read(allow_none=True)
            except EOFError:
                break
            except jsonlines.InvalidLineError as exc:
                if not _is_blank(exc.line):
                    errors.append(_invalid_line_error(shown, exc))
                continue
            entry, line_errors = parse_entry(raw, shown, lines.count)
            errors.extend(line_errors)
            if entry is not None:
                entries.append(entry)
    if not entries and not errors:
        errors.append(FixtureError(shown, 1, "file", "no entries: the file is empty"))
    return FixtureFile(path.resolve(), shown, tuple(entries), tuple(errors))


class _CountedLines:
    """Feeds jsonlines one line at a time and remembers which line it handed out last."""

    def __init__(self, stream: Iterable[bytes]) -> None:
        self._stream = stream
        self.count = 0

    def __iter__(self) -> Iterator[bytes]:
        for line in self._stream:
            self.count += 1
            yield line


def _loads(text: str | bytes) -> Any:
    # A UTF-8 byte order mark is what Windows editors write; it carries no data.
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    try:
        return json.loads(text.lstrip("\ufeff"), object_pairs_hook=_object_with_unique_keys)
    except RecursionError:
        # json recurses per nesting level; a hostile line must be an error, not a crash.
        raise ValueError("nested too deeply") from None


def _object_with_unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json keeps the last of repeated keys silently; two "needles" would hide one list.
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen.add(key)
    return dict(pairs)


def _is_blank(line: str | bytes) -> bool:
    return not line.strip()


def _invalid_line_error(shown: str, exc: InvalidLineError) -> FixtureError:
    reason = str(exc).rsplit(" (line ", 1)[0]
    if isinstance(exc.line, bytes):
        return FixtureError(shown, exc.lineno, "encoding", reason)
    return FixtureError(shown, exc.lineno, "json", reason)


def parse_entry(raw: Any, path: str, line: int) -> tuple[Entry | None, list[FixtureError]]:
    """Validate one decoded line into an Entry (None when the entry itself is unusable)."""

    def error(field_name: str, message: str) -> FixtureError:
        return FixtureError(path, line, field_name, message)

    if not isinstance(raw, dict):
        return None, [error("json", f"expected a JSON object, got {_json_type(raw)}")]
    unencodable = _lone_surrogate_at(raw)
    if unencodable is not None:
        return None, [
            error(
                unencodable, "contains a lone surrogate escape (\\ud800-\\udfff), not valid Unicode"
            )
        ]
    errors = _check_field_names(raw, ENTRY_FIELDS, OPTIONAL_ENTRY_FIELDS, "", error)
    errors += _check_string_fields(
        raw, ("id", "content_type", "source_label", "source_kind"), "", error
    )
    errors += _check_id_characters(raw, "id", "", error)
    if "haystack" in raw and not isinstance(raw["haystack"], str):
        errors.append(error("haystack", f"expected a string, got {_json_type(raw['haystack'])}"))
    errors += _check_choice(raw, "content_type", CONTENT_TYPES, "", error)
    errors += _check_choice(raw, "source_kind", SOURCE_KINDS, "", error)
    if "cases" in raw and not isinstance(raw["cases"], list):
        errors.append(error("cases", f"expected a list, got {_json_type(raw['cases'])}"))
    metadata = raw.get("metadata", {})
    if not isinstance(metadata, dict):
        errors.append(error("metadata", f"expected an object, got {_json_type(metadata)}"))
    if errors:
        return None, errors

    cases: list[Case] = []
    for index, raw_case in enumerate(raw["cases"]):
        case, case_errors = _parse_case(raw_case, f"cases[{index}]", raw, path, line)
        errors.extend(case_errors)
        if case is not None:
            cases.append(case)
    entry = Entry(
        id=raw["id"],
        content_type=raw["content_type"],
        haystack=raw["haystack"],
        source_label=raw["source_label"],
        source_kind=raw["source_kind"],
        cases=tuple(cases),
        path=path,
        line=line,
        metadata=MappingProxyType(dict(metadata)),
    )
    return entry, errors


def _lone_surrogate_at(raw: dict[str, Any]) -> str | None:
    """The field holding a string UTF-8 cannot encode (JSON's `\\ud800` escapes allow one)."""
    # Such a string would pass every check here and then crash the report write.
    if not _may_hold_lone_surrogate(raw):
        return None
    # Only now find the field. An explicit stack, not recursion: json accepts
    # nesting deeper than Python's frames allow.
    pending: list[tuple[str, Any]] = [("", raw)]
    while pending:
        where, value = pending.pop()
        if isinstance(value, str) and not _is_encodable(value):
            return where or "json"
        if isinstance(value, dict):
            if not all(_is_encodable(key) for key in value):
                return where or "json"
            pending += [(f"{where}.{k}" if where else k, v) for k, v in reversed(value.items())]
        elif isinstance(value, list):
            pending += [(f"{where}[{i}]", v) for i, v in reversed(list(enumerate(value)))]
    return None


def _may_hold_lone_surrogate(raw: dict[str, Any]) -> bool:
    """The fast whole-line check, in C; a line too deep to re-encode gets the walk."""
    try:
        json.dumps(raw, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, RecursionError):
        return True
    return False


def _is_encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _parse_case(
    raw_case: Any, prefix: str, raw_entry: dict[str, Any], path: str, line: int
) -> tuple[Case | None, list[FixtureError]]:
    def error(field_name: str, message: str) -> FixtureError:
        return FixtureError(path, line, field_name, message)

    if not isinstance(raw_case, dict):
        return None, [error(prefix, f"expected a JSON object, got {_json_type(raw_case)}")]
    errors = _check_field_names(raw_case, CASE_FIELDS, (), prefix + ".", error)
    errors += _check_string_fields(
        raw_case, ("case_id", "query", "expected_layer"), prefix + ".", error
    )
    errors += _check_id_characters(raw_case, "case_id", prefix + ".", error)
    errors += _check_choice(raw_case, "expected_layer", EXPECTED_LAYERS, prefix + ".", error)
    needles = raw_case.get("needles", [])
    if not isinstance(needles, list) or not all(isinstance(n, str) and n for n in needles):
        errors.append(error(f"{prefix}.needles", "expected a list of non-empty strings"))
    ceiling = raw_case.get("expected_rank_ceiling", 0)
    if isinstance(ceiling, bool) or not isinstance(ceiling, int) or ceiling < 0:
        errors.append(
            error(f"{prefix}.expected_rank_ceiling", f"expected an integer >= 0, got {ceiling!r}")
        )
    if errors:
        return None, errors

    layer = raw_case["expected_layer"]
    if not needles and layer != NEGATIVE_LAYER:
        errors.append(
            error(
                f"{prefix}.expected_layer",
                f"a negative case (needles: []) expects 'none', got {layer!r}",
            )
        )
    if needles and layer == NEGATIVE_LAYER:
        errors.append(
            error(f"{prefix}.expected_layer", "'none' is only for negative cases (needles: [])")
        )
    if not needles and ceiling > 0:
        errors.append(
            error(
                f"{prefix}.expected_rank_ceiling",
                f"a negative case has no rank to check; use 0, got {ceiling}",
            )
        )
    if errors:
        return None, errors
    case = Case(
        case_id=raw_case["case_id"],
        query=raw_case["query"],
        needles=tuple(needles),
        expected_layer=layer,
        expected_rank_ceiling=ceiling,
        entry_id=raw_entry["id"],
        content_type=raw_entry["content_type"],
        path=path,
        line=line,
    )
    return case, []


def _check_field_names(
    raw: dict[str, Any],
    required: Sequence[str],
    optional: Sequence[str],
    prefix: str,
    error: Any,
) -> list[FixtureError]:
    errors = [
        error(prefix + name, "missing required field") for name in required if name not in raw
    ]
    known = (*required, *optional)
    for name in raw:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            # An empty or multi-line key would make an empty or broken field name: quote it.
            shown = name if name.isidentifier() else json.dumps(name)
            errors.append(error(prefix + shown, f"unknown field{hint}"))
    return errors


def _check_string_fields(
    raw: dict[str, Any], names: Sequence[str], prefix: str, error: Any
) -> list[FixtureError]:
    errors = []
    for name in names:
        if name in raw and not (isinstance(raw[name], str) and raw[name].strip()):
            errors.append(error(prefix + name, f"expected a non-empty string, got {raw[name]!r}"))
    return errors


def _check_id_characters(
    raw: dict[str, Any], name: str, prefix: str, error: Any
) -> list[FixtureError]:
    # Ids become pytest node ids and report keys, shown in markdown tables and lists:
    # a newline there breaks the line-based output and lets fixture text add markup.
    value = raw.get(name)
    if isinstance(value, str) and any(unicodedata.category(char) == "Cc" for char in value):
        return [
            error(prefix + name, f"expected no control characters (newline, tab), got {value!r}")
        ]
    return []


def _check_choice(
    raw: dict[str, Any], name: str, choices: Sequence[str], prefix: str, error: Any
) -> list[FixtureError]:
    value = raw.get(name)
    if isinstance(value, str) and value.strip() and value not in choices:
        return [
            error(prefix + name, f"unknown value {value!r}; expected one of {', '.join(choices)}")
        ]
    return []


def _json_type(value: Any) -> str:
    names = {
        dict: "object",
        list: "array",
        str: "string",
        bool: "boolean",
        int: "number",
        float: "number",
    }
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _drop_duplicates(files: Sequence[FixtureFile]) -> tuple[FixtureFile, ...]:
    """Keep the first entry/case of each id in path order; later ones become errors."""
    entry_seen: dict[str, Entry] = {}
    case_seen: dict[str, Case] = {}
    result = []
    for fixture_file in files:
        entries: list[Entry] = []
        errors = list(fixture_file.errors)
        for entry in fixture_file.entries:
            first = entry_seen.get(entry.id)
            if first is not None:
                errors.append(
                    FixtureError(
                        entry.path,
                        entry.line,
                        "id",
                        f"duplicate id {entry.id!r} (first at {first.path}:{first.line})",
                    )
                )
                continue
            entry_seen[entry.id] = entry
            kept_cases = []
            for case in entry.cases:
                first_case = case_seen.get(case.case_id)
                if first_case is not None:
                    errors.append(
                        FixtureError(
                            case.path,
                            case.line,
                            "case_id",
                            f"duplicate case_id {case.case_id!r} "
                            f"(first at {first_case.path}:{first_case.line})",
                        )
                    )
                    continue
                case_seen[case.case_id] = case
                kept_cases.append(case)
            entries.append(_with_cases(entry, tuple(kept_cases)))
        errors.sort(key=lambda e: e.line)
        result.append(
            FixtureFile(fixture_file.path, fixture_file.display_path, tuple(entries), tuple(errors))
        )
    return tuple(result)


def _with_cases(entry: Entry, cases: tuple[Case, ...]) -> Entry:
    if cases == entry.cases:
        return entry
    return Entry(
        entry.id,
        entry.content_type,
        entry.haystack,
        entry.source_label,
        entry.source_kind,
        cases,
        entry.path,
        entry.line,
        entry.metadata,
    )
