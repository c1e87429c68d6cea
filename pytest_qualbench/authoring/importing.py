"""Importers: standard labeled IR collections (BEIR, TREC) turned into JSONL fixtures.

A collection judges whole documents, with grades. By default each case keeps them
as they are: `relevant` maps the entry of every judged document to its grade
(a negative grade, TREC's "spam", becomes 0), and the gate scores the case at
document level as trec_eval does.

The needle form (`needles=True`, `qualbench import --needles`) bridges documents
to text instead: one needle per document graded `min_relevance` or more, a
verbatim substring that no other document of the collection contains, so "a
result contains the needle" means exactly "the result comes from that document".
A document for which no such substring exists (an exact duplicate, say) cannot be
judged this way, and its judgments are dropped and counted, never silently kept.
"""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonlines

from pytest_qualbench.authoring.collections import Collection, CollectionError, Document, Query
from pytest_qualbench.authoring.fixture_lines import write_lines
from pytest_qualbench.authoring.lint import needle_weakness, words
from pytest_qualbench.fixtures.schema import BASE_LAYERS

SOURCE_KIND = "durable"


# A collection says which documents are relevant, not which layer finds them; fused is
# what a natural-language query usually gets, and the layer check is best left off.
EXPECTED_LAYER = BASE_LAYERS[2]


MAX_NEEDLE_WORDS = 8


DUPLICATE_JUDGMENT = "duplicate judgment"


UNKNOWN_QUERY = "unknown query id"


BELOW_THRESHOLD = "below the relevance threshold"


UNKNOWN_DOCUMENT = "unknown document id"


NO_NEEDLE = "no unique needle possible"


NO_RELEVANT_DOCUMENT = "no relevant document"


JUDGMENT_DROP_REASONS = (
    DUPLICATE_JUDGMENT,
    UNKNOWN_QUERY,
    BELOW_THRESHOLD,
    UNKNOWN_DOCUMENT,
    NO_NEEDLE,
)


QUERY_DROP_REASONS = (NO_RELEVANT_DOCUMENT, UNKNOWN_DOCUMENT, NO_NEEDLE)


_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class ImportOutcome:
    """The fixture entries of a collection, and what could not become a case and why."""

    entries: tuple[dict[str, Any], ...]
    queries_total: int
    judgments_total: int
    dropped_queries: tuple[tuple[str, int], ...]
    dropped_judgments: tuple[tuple[str, int], ...]

    @property
    def cases(self) -> int:
        return sum(len(entry["cases"]) for entry in self.entries)


def build_fixtures(
    collection: Collection,
    *,
    name: str,
    content_type: str = "plaintext",
    min_relevance: int = 1,
    rank_ceiling: int = 0,
    needles: bool = False,
) -> ImportOutcome:
    """One entry per document; one case per query, on the entry of its first relevant document.

    A case carries `relevant` with every grade the collection gives (the default),
    or, with `needles`, one needle per document graded `min_relevance` or more.
    """
    if not needles:
        return _graded_fixtures(collection, name, content_type, rank_ceiling)
    position_of = _document_positions(collection.documents)
    relevant, unknown_relevant, dropped_judgments = _relevant_documents(
        collection, position_of, min_relevance
    )
    needle_of = _needles(collection.documents, position_of, relevant)
    return _needle_fixtures(
        collection,
        name,
        content_type,
        rank_ceiling,
        relevant,
        unknown_relevant,
        dropped_judgments,
        needle_of,
    )


def _needle_fixtures(
    collection: Collection,
    name: str,
    content_type: str,
    rank_ceiling: int,
    relevant: Mapping[str, list[str]],
    unknown_relevant: set[str],
    dropped_judgments: Counter[str],
    needles: Mapping[str, str | None],
) -> ImportOutcome:
    """The needle form: each relevant document's unique needle stands for it."""
    dropped_judgments[NO_NEEDLE] += sum(
        needles[doc_id] is None for doc_ids in relevant.values() for doc_id in doc_ids
    )
    cases_by_document: dict[str, list[Query]] = {}
    dropped_queries: Counter[str] = Counter()
    for query in collection.queries:
        judged = relevant.get(query.query_id, [])
        kept = [doc_id for doc_id in judged if needles[doc_id] is not None]
        if kept:
            cases_by_document.setdefault(kept[0], []).append(query)
        elif judged:
            dropped_queries[NO_NEEDLE] += 1
        elif query.query_id in unknown_relevant:
            dropped_queries[UNKNOWN_DOCUMENT] += 1
        else:
            dropped_queries[NO_RELEVANT_DOCUMENT] += 1

    def case(entry_id: str, number: int, query: Query) -> dict[str, Any]:
        found = (needles[doc_id] for doc_id in relevant[query.query_id])
        return {
            "case_id": f"{entry_id}_q{number}",
            "query": query.text,
            "needles": [needle for needle in found if needle is not None],
            "expected_layer": EXPECTED_LAYER,
            "expected_rank_ceiling": rank_ceiling,
        }

    return _outcome(
        collection, name, content_type, cases_by_document, case, dropped_queries, dropped_judgments
    )


def _graded_fixtures(
    collection: Collection, name: str, content_type: str, rank_ceiling: int
) -> ImportOutcome:
    """The graded form: `relevant` holds every judged document's entry and grade."""
    position_of = _document_positions(collection.documents)
    query_ids = {query.query_id for query in collection.queries}
    grades: dict[str, dict[str, int]] = {}
    unknown_relevant: set[str] = set()
    dropped_judgments: Counter[str] = Counter()
    for judgment in collection.judgments:
        judged = grades.setdefault(judgment.query_id, {})
        if judgment.doc_id in judged:
            dropped_judgments[DUPLICATE_JUDGMENT] += 1
        elif judgment.query_id not in query_ids:
            dropped_judgments[UNKNOWN_QUERY] += 1
        elif judgment.doc_id not in position_of:
            dropped_judgments[UNKNOWN_DOCUMENT] += 1
            if judgment.relevance > 0:
                unknown_relevant.add(judgment.query_id)
        else:
            judged[judgment.doc_id] = max(0, judgment.relevance)
    cases_by_document: dict[str, list[Query]] = {}
    dropped_queries: Counter[str] = Counter()
    for query in collection.queries:
        relevant = [doc_id for doc_id, grade in grades.get(query.query_id, {}).items() if grade]
        if relevant:
            cases_by_document.setdefault(relevant[0], []).append(query)
        elif query.query_id in unknown_relevant:
            dropped_queries[UNKNOWN_DOCUMENT] += 1
        else:
            dropped_queries[NO_RELEVANT_DOCUMENT] += 1

    def case(entry_id: str, number: int, query: Query) -> dict[str, Any]:
        judged = grades[query.query_id]
        return {
            "case_id": f"{entry_id}_q{number}",
            "query": query.text,
            "relevant": {f"{name}_{doc_id}": grade for doc_id, grade in judged.items()},
            "expected_layer": EXPECTED_LAYER,
            "expected_rank_ceiling": rank_ceiling,
        }

    return _outcome(
        collection, name, content_type, cases_by_document, case, dropped_queries, dropped_judgments
    )


def _outcome(
    collection: Collection,
    name: str,
    content_type: str,
    cases_by_document: Mapping[str, list[Query]],
    case: Callable[[str, int, Query], dict[str, Any]],
    dropped_queries: Counter[str],
    dropped_judgments: Counter[str],
) -> ImportOutcome:
    entries = []
    for document in collection.documents:
        entry_id = f"{name}_{document.doc_id}"
        queries = cases_by_document.get(document.doc_id, [])
        metadata: dict[str, Any] = {"doc_id": document.doc_id}
        if queries:
            metadata["query_ids"] = [query.query_id for query in queries]
        entries.append(
            {
                "id": entry_id,
                "content_type": content_type,
                "haystack": document.haystack,
                "source_label": f"{name}:{document.doc_id}",
                "source_kind": SOURCE_KIND,
                "cases": [case(entry_id, n, q) for n, q in enumerate(queries, start=1)],
                "metadata": metadata,
            }
        )
    return ImportOutcome(
        entries=tuple(entries),
        queries_total=len(collection.queries),
        judgments_total=len(collection.judgments),
        dropped_queries=_in_order(dropped_queries, QUERY_DROP_REASONS),
        dropped_judgments=_in_order(dropped_judgments, JUDGMENT_DROP_REASONS),
    )


def _relevant_documents(
    collection: Collection, position_of: Mapping[str, int], min_relevance: int
) -> tuple[dict[str, list[str]], set[str], Counter[str]]:
    """Relevant known documents per query, in qrels order, and what was dropped on the way.

    Also returns the queries that judged an unknown document relevant, so a query left
    with nothing can say why.
    """
    query_ids = {query.query_id for query in collection.queries}
    relevant: dict[str, list[str]] = {}
    unknown_relevant: set[str] = set()
    dropped: Counter[str] = Counter()
    seen: set[tuple[str, str]] = set()
    for judgment in collection.judgments:
        key = (judgment.query_id, judgment.doc_id)
        if key in seen:
            dropped[DUPLICATE_JUDGMENT] += 1
        elif judgment.query_id not in query_ids:
            dropped[UNKNOWN_QUERY] += 1
        elif judgment.relevance < min_relevance:
            dropped[BELOW_THRESHOLD] += 1
        elif judgment.doc_id not in position_of:
            dropped[UNKNOWN_DOCUMENT] += 1
            unknown_relevant.add(judgment.query_id)
        else:
            relevant.setdefault(judgment.query_id, []).append(judgment.doc_id)
        seen.add(key)
    return relevant, unknown_relevant, dropped


def _needles(
    documents: Sequence[Document],
    position_of: Mapping[str, int],
    relevant: Mapping[str, Sequence[str]],
) -> dict[str, str | None]:
    """The needle of every relevant document, None where no unique one exists."""
    haystacks = [document.haystack for document in documents]
    document_frequency = _document_frequency(haystacks)
    # Exact duplicates have no unique window; knowing it up front spares a scan per word.
    duplicated = {haystack for haystack, count in Counter(haystacks).items() if count > 1}
    needles: dict[str, str | None] = {}
    for doc_ids in relevant.values():
        for doc_id in doc_ids:
            if doc_id in needles:
                continue
            position = position_of[doc_id]
            needles[doc_id] = (
                None
                if haystacks[position] in duplicated
                else unique_needle(position, haystacks, document_frequency)
            )
    return needles


def unique_needle(
    position: int, haystacks: Sequence[str], document_frequency: Counter[str]
) -> str | None:
    """The shortest window of words around the rarest word that no other haystack holds.

    Anchors are tried from the rarest word on (ties: longer, then earlier). A window
    never crosses a line, so it stays inside one chunk, and is never a needle the
    linter would warn about (too short, a common word).
    """
    anchors = []
    for line_start, line in _lines(haystacks[position]):
        line_words = list(_WORD.finditer(line))
        for index, word in enumerate(line_words):
            text = word.group()
            rarity = (document_frequency[text.lower()], -len(text), line_start + word.start())
            anchors.append((rarity, index, line, line_words))
    others_holding: dict[str, list[str]] = {}
    for _, index, line, line_words in sorted(anchors, key=lambda anchor: anchor[0]):
        anchor = line_words[index].group()
        if anchor not in others_holding:
            # Every window around the anchor contains it: only these haystacks can hold one.
            others_holding[anchor] = [
                other for at, other in enumerate(haystacks) if at != position and anchor in other
            ]
        for size in range(1, MAX_NEEDLE_WORDS + 1):
            for first in range(max(0, index - size + 1), min(index, len(line_words) - size) + 1):
                needle = line[line_words[first].start() : line_words[first + size - 1].end()]
                if needle_weakness(needle) is None and not any(
                    needle in other for other in others_holding[anchor]
                ):
                    return needle
    return None


def write_fixtures(entries: Sequence[dict[str, Any]], path: Path) -> None:
    """Write entries as JSONL, one object per line, UTF-8, in one rename (`write_lines`):
    the folder is made when missing, and a crash leaves the old file or the new one."""
    buffer = io.StringIO()
    with jsonlines.Writer(buffer, dumps=_dumps) as writer:
        writer.write_all(entries)
        text = buffer.getvalue()
    write_lines(path, [text.encode("utf-8")])


def summary_lines(outcome: ImportOutcome, path: Path) -> list[str]:
    """What an import wrote and what it dropped, one line each, for a person to read."""
    return [
        f"wrote {len(outcome.entries)} entries with {outcome.cases} cases to {path}",
        _dropped_line("queries", outcome.queries_total, outcome.dropped_queries),
        _dropped_line("judgments", outcome.judgments_total, outcome.dropped_judgments),
    ]


def _dropped_line(what: str, total: int, dropped: Sequence[tuple[str, int]]) -> str:
    count = sum(number for _, number in dropped)
    reasons = ", ".join(f"{number} {reason}" for reason, number in dropped)
    return f"dropped {count} of {total} {what}" + (f": {reasons}" if reasons else "")


def _in_order(counts: Counter[str], reasons: Sequence[str]) -> tuple[tuple[str, int], ...]:
    return tuple((reason, counts[reason]) for reason in reasons if counts[reason])


def _document_positions(documents: Sequence[Document]) -> dict[str, int]:
    positions: dict[str, int] = {}
    for position, document in enumerate(documents):
        if document.doc_id in positions:
            raise CollectionError(f"duplicate document id {document.doc_id!r}")
        positions[document.doc_id] = position
    return positions


def _document_frequency(haystacks: Sequence[str]) -> Counter[str]:
    frequency: Counter[str] = Counter()
    for haystack in haystacks:
        frequency.update(set(words(haystack)))
    return frequency


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _lines(text: str) -> Iterator[tuple[int, str]]:
    start = 0
    for line in text.splitlines(keepends=True):
        yield start, line.rstrip("\r\n")
        start += len(line)
