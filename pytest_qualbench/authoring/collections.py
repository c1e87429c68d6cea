"""Reading labeled IR collections (BEIR folders, TREC files) into plain records."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The markers of TREC's paired tags. Blocks are cut between them in one pass:
# a lazy `<DOC>(.*?)</DOC>` regex rescans to the end of the text from every
# unclosed opening tag (quadratic), and `\s*(.*?)\s*` inside it is cubic.
_TREC_TAGS = {
    tag: re.compile(rf"<(/?){tag}>", re.IGNORECASE) for tag in ("DOC", "DOCNO", "TEXT", "top")
}


# Classic TREC topics leave <num> and <title> unclosed: a field runs to the next tag.
_TREC_NUM = re.compile(r"<num>\s*(?:Number:)?\s*([^<]*)", re.IGNORECASE)


_TREC_TITLE = re.compile(r"<title>\s*(?:Topic:)?\s*([^<]*)", re.IGNORECASE)


class CollectionError(Exception):
    """A collection file that does not read as its format says, located by file and line."""


@dataclass(frozen=True)
class Document:
    """One judged unit of a collection."""

    doc_id: str
    title: str
    text: str

    @property
    def haystack(self) -> str:
        # One newline, not a blank line: a paragraph-splitting chunker keeps the title
        # in the chunk of the text it names.
        return f"{self.title}\n{self.text}" if self.title else self.text


@dataclass(frozen=True)
class Query:
    """One topic of a collection: its id and the text that is searched."""

    query_id: str
    text: str


@dataclass(frozen=True)
class Judgment:
    """One qrels line: how relevant a document is to a query (graded, higher is better)."""

    query_id: str
    doc_id: str
    relevance: int


@dataclass(frozen=True)
class Collection:
    """Documents, queries and judgments, each in the order of its files."""

    documents: tuple[Document, ...]
    queries: tuple[Query, ...]
    judgments: tuple[Judgment, ...]


def read_beir(directory: Path, split: str = "test") -> Collection:
    """A BEIR dataset folder: corpus.jsonl, queries.jsonl and qrels/<split>.tsv."""
    documents = tuple(
        Document(_field(row, "_id", where), str(row.get("title") or ""), _field(row, "text", where))
        for row, where in _json_lines(directory / "corpus.jsonl")
    )
    queries = tuple(
        Query(_field(row, "_id", where), _field(row, "text", where))
        for row, where in _json_lines(directory / "queries.jsonl")
    )
    judgments = []
    qrels = directory / "qrels" / f"{split}.tsv"
    for fields, where in _split_lines(qrels, "\t"):
        if fields[0] == "query-id":
            continue
        if len(fields) != 3:
            raise CollectionError(f"{where}: expected query-id, corpus-id, score; got {fields!r}")
        judgments.append(Judgment(fields[0], fields[1], _relevance(fields[2], where)))
    return Collection(documents, queries, tuple(judgments))


def read_trec(document_paths: Sequence[Path], topics_path: Path, qrels_path: Path) -> Collection:
    """TREC files: <DOC>/<DOCNO>/<TEXT> documents, <top>/<num>/<title> topics, qrels."""
    documents = []
    for path in _files_under(document_paths):
        for document in tag_blocks(_read_text(path), "DOC"):
            docnos = tag_blocks(document, "DOCNO")
            docno = docnos[0].strip() if docnos else ""
            if not docno:
                raise CollectionError(f"{path}: a <DOC> without <DOCNO>")
            text = "\n\n".join(part.strip() for part in tag_blocks(document, "TEXT"))
            documents.append(Document(docno, "", text))
    queries = []
    for topic in tag_blocks(_read_text(topics_path), "top"):
        number = _TREC_NUM.search(topic)
        title = _TREC_TITLE.search(topic)
        if number is None or title is None:
            raise CollectionError(f"{topics_path}: a <top> without <num> or <title>")
        queries.append(Query(number.group(1).strip(), " ".join(title.group(1).split())))
    judgments = []
    for fields, where in _split_lines(qrels_path, None):
        if len(fields) != 4:
            raise CollectionError(
                f"{where}: expected `qid iteration docno relevance`; got {fields!r}"
            )
        judgments.append(Judgment(fields[0], fields[2], _relevance(fields[3], where)))
    return Collection(tuple(documents), tuple(queries), tuple(judgments))


def tag_blocks(text: str, tag: str) -> list[str]:
    """The text between each `<tag>` and the next `</tag>` (any case), in one linear pass.

    Like a lazy regex, an opening tag inside a block is text, and an opening tag
    never closed yields nothing.
    """
    blocks: list[str] = []
    start: int | None = None
    for marker in _TREC_TAGS[tag].finditer(text):
        if marker.group(1):
            if start is not None:
                blocks.append(text[start : marker.start()])
                start = None
        elif start is None:
            start = marker.end()
    return blocks


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CollectionError(f"{path}: {exc}") from exc


def _files_under(paths: Sequence[Path]) -> list[Path]:
    files = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.is_file())
        else:
            files.append(path)
    return files


def _json_lines(path: Path) -> Iterator[tuple[dict[str, Any], str]]:
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CollectionError(f"{where}: {exc}") from exc
        if not isinstance(row, dict):
            raise CollectionError(f"{where}: expected a JSON object")
        yield row, where


def _split_lines(path: Path, separator: str | None) -> Iterator[tuple[list[str], str]]:
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        if line.strip():
            yield [field.strip() for field in line.split(separator)], f"{path}:{number}"


def _field(row: dict[str, Any], name: str, where: str) -> str:
    value = row.get(name)
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise CollectionError(f"{where}: field {name!r} is missing or not a string")
    return str(value)


def _relevance(text: str, where: str) -> int:
    try:
        return int(text)
    except ValueError as exc:
        raise CollectionError(f"{where}: relevance {text!r} is not an integer") from exc
