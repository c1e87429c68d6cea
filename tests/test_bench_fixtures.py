"""Guards on the shipped benchmark corpus in bench_fixtures/ (docs/writing-fixtures.md).

These checks need no engine: they keep the corpus honest as it is edited, so a
needle that drifts out of its haystack, a needle that also matches another entry,
or a negative query that an aggressive trigram or fuzzy layer could match fails
here, before it skews a benchmark run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from pytest_qualbench.authoring.fixture_lines import ID_PREFIXES
from pytest_qualbench.fixtures.discovery import discover_fixture_files
from pytest_qualbench.fixtures.loading import load_fixture_set
from pytest_qualbench.fixtures.schema import CONTENT_TYPES, FUZZY_PREFIX, Case, Entry, FixtureSet

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = ROOT / "bench_fixtures"
MIN_ENTRIES_PER_FILE = 12
# Four or five keyword cases plus at least one question, as docs/writing-fixtures.md asks.
CASES_PER_ENTRY = (5, 6)
MIN_EXACT_CASES = 2
MIN_QUESTION_WORDS = 6
JSON_CEILINGS = range(5, 11)
SPLIT_THRESHOLD_BYTES = 4096


@pytest.fixture(scope="module")
def fixture_set() -> FixtureSet:
    return load_fixture_set(discover_fixture_files([BENCH_DIR]), ROOT)


def positive_cases(entry: Entry) -> Iterator[Case]:
    return (case for case in entry.cases if not case.is_negative)


def trigrams(text: str) -> set[str]:
    lowered = text.lower()
    return {lowered[i : i + 3] for i in range(len(lowered) - 2)}


def haystack_words(text: str) -> set[str]:
    """Whole words, plus the parts of camelCase and snake_case identifiers, lowercased."""
    words = set()
    for token in re.findall(r"[^\W_]+", text):
        words.add(token.lower())
        parts = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", token)
        words.update(part.lower() for part in parts)
    return words


def fuzzy_distance(word: str) -> int:
    """The built-in engine's correction distance for a query word (docs/engine.md)."""
    if len(word) <= 4:
        return 1
    return 2 if len(word) <= 12 else 3


def is_question(case: Case) -> bool:
    """A natural-language question: 6+ words ending in a question mark, no deliberate typo."""
    return (
        case.query.endswith("?")
        and len(case.query.split()) >= MIN_QUESTION_WORDS
        and not case.expected_layer.startswith(FUZZY_PREFIX)
    )


def json_depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max((json_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((json_depth(v) for v in value), default=0)
    return 0


def test_fixture_set_loads_without_errors(fixture_set: FixtureSet) -> None:
    assert [str(error) for error in fixture_set.errors()] == []
    file_names = sorted(f.path.name for f in fixture_set.files)
    assert file_names == sorted(f"{content_type}.jsonl" for content_type in CONTENT_TYPES)


def test_every_needle_occurs_verbatim_in_its_own_haystack(fixture_set: FixtureSet) -> None:
    missing = [
        (case.case_id, needle)
        for entry in fixture_set.entries()
        for case in positive_cases(entry)
        for needle in case.needles
        if needle not in entry.haystack
    ]
    assert missing == []


def test_no_needle_occurs_in_another_entry(fixture_set: FixtureSet) -> None:
    entries = fixture_set.entries()
    shared = [
        (case.case_id, needle, other.id)
        for entry in entries
        for case in positive_cases(entry)
        for needle in case.needles
        for other in entries
        if other.id != entry.id and needle in other.haystack
    ]
    assert shared == []


def test_needles_are_single_lines(fixture_set: FixtureSet) -> None:
    # Chunkers may normalise line endings or split between lines; a one-line needle survives both.
    multiline = [
        case.case_id
        for case in fixture_set.cases()
        for needle in case.needles
        if "\n" in needle or "\r" in needle
    ]
    assert multiline == []


def test_negative_queries_share_no_trigram_with_any_haystack(fixture_set: FixtureSet) -> None:
    corpus_trigrams = set().union(*(trigrams(entry.haystack) for entry in fixture_set.entries()))
    shared = {
        case.case_id: sorted(trigrams(case.query) & corpus_trigrams)
        for case in fixture_set.cases()
        if case.is_negative and trigrams(case.query) & corpus_trigrams
    }
    assert shared == {}


def test_negative_query_words_are_out_of_fuzzy_reach(fixture_set: FixtureSet) -> None:
    entries = fixture_set.entries()
    vocabulary = sorted(set().union(*(haystack_words(entry.haystack) for entry in entries)))
    near = [
        (case.case_id, word, match[0])
        for case in fixture_set.cases()
        if case.is_negative
        for word in re.findall(r"[^\W_]+", case.query.lower())
        if (
            match := process.extractOne(
                word, vocabulary, scorer=Levenshtein.distance, score_cutoff=fuzzy_distance(word)
            )
        )
    ]
    assert near == []


@pytest.mark.parametrize("content_type", CONTENT_TYPES)
def test_each_file_meets_the_corpus_rules(fixture_set: FixtureSet, content_type: str) -> None:
    entries = fixture_set.entries(content_type)
    assert len(entries) >= MIN_ENTRIES_PER_FILE
    for entry in entries:
        number = entry.id.rsplit("_", 1)[-1]
        assert entry.id == f"{ID_PREFIXES[content_type]}_{number}"
        assert entry.source_label == f"bench-{content_type}-{number}"
        assert CASES_PER_ENTRY[0] <= len(entry.cases) <= CASES_PER_ENTRY[1], entry.id
        positives = list(positive_cases(entry))
        exact = [c for c in positives if not c.expected_layer.startswith(FUZZY_PREFIX)]
        typo = [c for c in positives if c.expected_layer.startswith(FUZZY_PREFIX)]
        negatives = [c.case_id for c in entry.cases if c.is_negative]
        assert len([c for c in exact if not is_question(c)]) >= MIN_EXACT_CASES, entry.id
        assert typo, entry.id
        assert any(is_question(c) for c in positives), entry.id
        assert negatives == [f"{entry.id}_q_neg"]
        if content_type == "json":
            ceilings = {c.expected_rank_ceiling for c in positives}
            assert ceilings <= {0, *JSON_CEILINGS}, entry.id


def test_every_known_failure_names_the_checks_it_fails(fixture_set: FixtureSet) -> None:
    # Strict per check: a known failure that gets worse (rank 4 becomes not found) fails
    # the run only when the xfail says which checks it fails today.
    known = [case for case in fixture_set.cases() if case.xfail is not None]
    assert known
    assert [case.case_id for case in known if not case.xfail or not case.xfail.checks] == []


def test_corpus_exercises_every_chunker_path(fixture_set: FixtureSet) -> None:
    entries = fixture_set.entries()
    assert len([e for e in entries if len(e.haystack.encode()) > SPLIT_THRESHOLD_BYTES]) >= 3
    assert any("\r\n" in e.haystack for e in fixture_set.entries("plaintext"))
    assert len([e for e in entries if not e.haystack.isascii()]) >= 3
    assert max(json_depth(json.loads(e.haystack)) for e in fixture_set.entries("json")) >= 5
    assert {e.source_kind for e in entries} == {"durable", "ephemeral", "session"}
