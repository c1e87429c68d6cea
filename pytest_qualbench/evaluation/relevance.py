"""Document-level relevance: which entry each result comes from, and the ranking of entries.

A case judged by `relevant` ({entry_id: grade}) is scored the way trec_eval and
ir_measures score a TREC run: per entry, each entry once, at its best rank. A
result belongs to an entry through its `source` (the entry's `source_label`, as
`chunk_result` sets it); a result whose source names no single entry (a custom
engine that sets only `text`, or a label two entries share) is attributed by its
text, when exactly one entry's chunks (or else haystack) hold it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pytest_qualbench.engine.types import Result
from pytest_qualbench.fixtures.schema import Entry

# An entry graded at least this is relevant for hit, recall, MRR (--qualbench-min-grade).
DEFAULT_MIN_GRADE = 1
# nDCG's gain of a grade (ini `qualbench_gain`): trec_eval's linear one.
DEFAULT_GAIN = "linear"


class AttributionError(ValueError):
    """A result no single entry can be named for: the case cannot be scored by entry."""


@dataclass
class EntryAttribution:
    """One content type's entries, to name the entry a result comes from."""

    entries: Sequence[Entry]
    _by_source: dict[str, list[str]] = field(default_factory=dict, init=False)
    # Chunk text -> the entries with such a chunk; made on the first result without a source.
    _by_chunk_text: dict[str, set[str]] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        for entry in self.entries:
            self._by_source.setdefault(entry.source_label, []).append(entry.id)

    def entry_of(self, result: Result) -> str:
        """The id of the entry the result comes from; AttributionError when not one entry."""
        by_source = self._by_source.get(result.source, [])
        if len(by_source) == 1:
            return by_source[0]
        holders = self._holding(result.text, by_source)
        if len(holders) == 1:
            return holders[0]
        shown = " ".join(result.text.split())[:60]
        why = (
            f"its text is in {len(holders)} entries ({', '.join(holders[:5])})"
            if holders
            else "no entry holds its text"
        )
        source = f"source {result.source!r}" if result.source else "no source"
        raise AttributionError(
            f"result {shown!r} has {source} and {why}: set Result.source to the entry's"
            " source_label to judge it by `relevant`"
        )

    def _holding(self, text: str, among: Sequence[str]) -> list[str]:
        """The entries (of `among`, when given) with a chunk of this text, else holding it."""
        if self._by_chunk_text is None:
            from pytest_qualbench.engine.chunking import chunk_entry

            self._by_chunk_text = {}
            for entry in self.entries:
                for chunk in chunk_entry(entry):
                    self._by_chunk_text.setdefault(chunk.text, set()).add(entry.id)
        wanted = set(among) if among else None
        by_chunk = sorted(
            entry_id
            for entry_id in self._by_chunk_text.get(text, set())
            if wanted is None or entry_id in wanted
        )
        if by_chunk:
            return by_chunk
        return sorted(
            entry.id
            for entry in self.entries
            if text and text in entry.haystack and (wanted is None or entry.id in wanted)
        )


@dataclass(frozen=True)
class RankedEntry:
    """One entry of a document-level ranking: its grade and its first result's index."""

    entry_id: str
    grade: int
    first_result: int


def entry_ranking(
    results: Sequence[Result],
    relevant: Mapping[str, int],
    attribution: EntryAttribution,
    needles: Sequence[str] = (),
) -> list[RankedEntry]:
    """Each entry once, at the rank of its first result, with its grade (0 when not judged).

    With `needles` too, a result counts for its entry only when it holds one; one that
    holds none is a non-relevant document of its own (grade 0, never merged).
    """
    ranking: list[RankedEntry] = []
    seen: set[str] = set()
    for index, result in enumerate(results):
        entry_id = attribution.entry_of(result)
        if needles and not any(needle in result.text for needle in needles):
            ranking.append(RankedEntry(entry_id, 0, index))
            continue
        if entry_id in seen:
            continue
        seen.add(entry_id)
        ranking.append(RankedEntry(entry_id, relevant.get(entry_id, 0), index))
    return ranking
