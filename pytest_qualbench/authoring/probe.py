"""One query through the engine over its content type's corpus, as the benchmark runs it.

`qualbench case` probes a draft case before writing it, `qualbench show` probes a
written one: both index every entry of the content type in the fixture set (the
corpus a benchmark case sees) and search every source kind, like the plugin.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from pytest_qualbench.engine import capabilities
from pytest_qualbench.engine.types import ALL_KINDS, Result
from pytest_qualbench.evaluation.case_record import CaseRecord
from pytest_qualbench.evaluation.judge import judge, snippet
from pytest_qualbench.evaluation.outcomes import (
    NEEDLE_CLOSE,
    NEEDLE_OPEN,
    VERDICT_WORDS,
    check_outcomes,
    marked,
)
from pytest_qualbench.evaluation.relevance import (
    DEFAULT_GAIN,
    DEFAULT_MIN_GRADE,
    AttributionError,
    EntryAttribution,
)
from pytest_qualbench.evaluation.runner import BenchRun, EngineFactory
from pytest_qualbench.fixtures import Case, FixtureSet


@dataclass(frozen=True)
class Probe:
    """What the engine returned for a case, and how the case's checks came out."""

    case: Case
    results: tuple[Result, ...]
    record: CaseRecord
    corpus_entries: int
    corpus_chunks: int | None
    # Chunks of the corpus holding a needle (None: the engine cannot list its chunks).
    relevant_total: int | None
    # Entry id per source label, to say which entry each result came from.
    entry_of_source: dict[str, str]
    # Cases judged by `relevant`: each result's entry, and the run's grade settings.
    attribution: EntryAttribution
    min_grade: int = DEFAULT_MIN_GRADE
    gain: str = DEFAULT_GAIN


def probe(
    case: Case,
    fixture_set: FixtureSet,
    engine_factory: EngineFactory,
    limit: int,
    *,
    min_grade: int = DEFAULT_MIN_GRADE,
    gain: str = DEFAULT_GAIN,
) -> Probe:
    """Index the case's corpus with a fresh engine, search the query, judge the results."""
    run = BenchRun(
        fixture_set=fixture_set,
        engine_factory=engine_factory,
        limit=limit,
        min_grade=min_grade,
        gain=gain,
    )
    corpus = run.corpus(case.content_type)
    found = capabilities.search(corpus.engine, case.query, limit=limit, kinds=ALL_KINDS)
    results = tuple(found)[:limit]
    relevant_total = corpus.relevant_total(case)
    attribution = run.attribution(case.content_type)
    record = judge(
        case,
        results,
        relevant_total=relevant_total,
        corrected_query=found.corrected_query,
        attribution=attribution,
        min_grade=min_grade,
        gain=gain,
    )
    entries = fixture_set.entries(case.content_type)
    chunks = capabilities.listed_chunks(corpus.engine)
    return Probe(
        case=case,
        results=results,
        record=record,
        corpus_entries=len(entries),
        corpus_chunks=None if chunks is None else len(chunks),
        relevant_total=relevant_total,
        entry_of_source={entry.source_label: entry.id for entry in reversed(entries)},
        attribution=attribution,
        min_grade=min_grade,
        gain=gain,
    )


def judged_as(found: Probe, case: Case) -> Probe:
    """The same results judged against another version of the case (same query, needles)."""
    record = judge(
        case,
        found.results,
        relevant_total=found.relevant_total,
        corrected_query=found.record.corrected_query,
        attribution=found.attribution,
        min_grade=found.min_grade,
        gain=found.gain,
    )
    return replace(found, case=case, record=record)


def report_lines(found: Probe) -> list[str]:
    """Query, corpus, ranked results with needles marked, and each check's outcome."""
    record = found.record
    chunks = "" if found.corpus_chunks is None else f", {counted(found.corpus_chunks, 'chunk')}"
    lines = [f"query:     {record.query!r}"]
    if record.corrected_query is not None:
        lines.append(f"corrected: {record.corrected_query!r}")
    lines.append(
        f"corpus:    {record.content_type}, {counted(found.corpus_entries, 'entry')}{chunks}"
    )
    if found.case.relevant:
        lines += graded_result_lines(found)
    else:
        lines += result_lines(found.results, found.case.needles, found.entry_of_source)
    lines.append("checks:")
    for outcome in check_outcomes(record):
        verdict = VERDICT_WORDS[outcome.passed]
        lines.append(f"  {outcome.check:<9}{verdict:<5} {outcome.text}")
    return lines


def counted(number: int, noun: str) -> str:
    """`1 entry`, `2 entries`, `1 chunk`, `7 chunks`."""
    if number == 1:
        return f"1 {noun}"
    return f"{number} {noun[:-1]}ies" if noun.endswith("y") else f"{number} {noun}s"


def result_lines(
    results: Sequence[Result], needles: Sequence[str], entry_of_source: dict[str, str]
) -> list[str]:
    """`rank. [layer] entry | title | snippet`, the first needle of a relevant result marked."""
    if not results:
        return ["results:   none"]
    lines = [
        f"results:   {len(results)}, best first ({NEEDLE_OPEN}needle{NEEDLE_CLOSE} marks a relevant one)"
    ]
    for rank, result in enumerate(results, start=1):
        needle = next((n for n in needles if n in result.text), None)
        excerpt = marked(snippet(result.text, needle), needle)
        where = entry_of_source.get(result.source, result.source or "?")
        title = f" {result.title} |" if result.title else ""
        layer = result.layer or "no layer"
        lines.append(f"  {rank:>2}. [{layer}] {where} |{title} {excerpt}")
    return lines


def graded_result_lines(found: Probe) -> list[str]:
    """`rank. [layer] entry (grade g) | title | snippet` for a case judged by entry.

    An entry's later chunks are marked as such: they take no rank of their own
    (docs/metrics.md). A result no single entry holds names why instead.
    """
    if not found.results:
        return ["results:   none"]
    grades = found.case.relevant
    marks = f"; {NEEDLE_OPEN}needle{NEEDLE_CLOSE} marks a needle" if found.case.needles else ""
    lines = [
        f"results:   {len(found.results)}, best first (each result's entry and grade; grade "
        f">= {found.min_grade} counts{marks})"
    ]
    seen: set[str] = set()
    for rank, result in enumerate(found.results, start=1):
        try:
            entry_id: str | None = found.attribution.entry_of(result)
        except AttributionError:
            entry_id = None
        if entry_id is None:
            judged = "no single entry"
        elif entry_id in seen:
            judged = "again, no rank of its own"
        else:
            judged = f"grade {grades[entry_id]}" if entry_id in grades else "not judged"
        if entry_id is not None:
            seen.add(entry_id)
        needle = next((n for n in found.case.needles if n in result.text), None)
        excerpt = marked(snippet(result.text, needle), needle)
        title = f" {result.title} |" if result.title else ""
        layer = result.layer or "no layer"
        lines.append(f"  {rank:>2}. [{layer}] {entry_id or '?'} ({judged}) |{title} {excerpt}")
    return lines
