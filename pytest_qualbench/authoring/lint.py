"""Fixture linter: the traps that make a benchmark lie, found before they land.

Pure: a loaded FixtureSet goes in, a list of findings comes out. Schema errors and
duplicate ids come from the loader (`pytest_qualbench.fixtures`) and are only re-worded here. The
vocabulary checks use their own lowercase word split, so they judge the fixtures
the same way whichever engine runs them; the one engine-based check (a negative
query that the engine answers) runs only when an engine factory is given.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein

from pytest_qualbench.engine import capabilities
from pytest_qualbench.engine.fuzzy import MIN_FUZZY_WORD_CHARS, Corrector
from pytest_qualbench.engine.returned import checked_results
from pytest_qualbench.engine.types import ALL_KINDS, DEFAULT_LIMIT, SearchEngine
from pytest_qualbench.evaluation.runner import EngineFactory, started_engine
from pytest_qualbench.fixtures.schema import Case, Entry, FixtureSet

ERROR = "error"
WARNING = "warning"

MIN_NEEDLE_CHARS = 4
MIN_ENTRIES_PER_CONTENT_TYPE = 10
MIN_JSON_RANK_CEILING = 5
NAMED_ENTRIES_SHOWN = 5
SNIPPET_CHARS = 60

# The most frequent English words of 4+ letters: wordfreq 3.1 `top_n_list("en", 400)`,
# alphabetic words only, two profanities removed. Shorter needles are flagged by length.
# fmt: off
COMMON_ENGLISH_WORDS = frozenset(
    (
        "able", "about", "actually", "after", "again", "against", "almost", "already",
        "also", "always", "american", "another", "anything", "area", "around", "away",
        "back", "based", "because", "become", "been", "before", "being", "believe", "best",
        "better", "between", "black", "body", "book", "both", "business", "call", "called",
        "came", "care", "case", "change", "children", "city", "come", "coming", "company",
        "control", "could", "country", "course", "court", "days", "death", "different",
        "does", "doing", "done", "down", "during", "each", "early", "enough", "even",
        "ever", "every", "everyone", "everything", "face", "fact", "family", "feel", "find",
        "first", "five", "following", "food", "found", "four", "free", "friends", "from",
        "full", "game", "games", "general", "getting", "give", "given", "going", "good",
        "government", "great", "group", "guys", "half", "hand", "hard", "have", "having",
        "head", "health", "help", "here", "high", "history", "home", "hope", "hours",
        "house", "however", "important", "including", "information", "into", "just", "keep",
        "kind", "know", "known", "large", "last", "later", "least", "left", "less", "level",
        "life", "like", "line", "little", "live", "local", "long", "look", "looking",
        "lost", "love", "made", "make", "makes", "making", "many", "maybe", "mean", "means",
        "might", "mind", "money", "more", "most", "much", "music", "must", "name",
        "national", "need", "never", "news", "next", "night", "nothing", "number", "office",
        "often", "once", "only", "open", "order", "other", "others", "over", "part",
        "party", "people", "person", "place", "play", "please", "point", "post", "power",
        "president", "problem", "public", "read", "real", "really", "right", "said", "same",
        "says", "school", "season", "second", "seen", "service", "should", "show", "side",
        "since", "single", "small", "social", "some", "someone", "something", "south",
        "start", "state", "states", "still", "stop", "story", "such", "support", "sure",
        "system", "take", "talk", "team", "tell", "than", "thank", "thanks", "that",
        "their", "them", "then", "there", "these", "they", "thing", "things", "think",
        "this", "those", "though", "thought", "three", "through", "time", "times", "today",
        "together", "told", "took", "true", "trying", "under", "united", "until", "used",
        "using", "very", "video", "want", "water", "week", "well", "went", "were", "what",
        "when", "where", "which", "while", "white", "whole", "will", "with", "within",
        "without", "women", "work", "working", "world", "would", "year", "years", "young",
        "your",
    )
)
# fmt: on

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class LintFinding:
    """One problem in a fixture set, located at the line of the entry it concerns."""

    path: str
    line: int
    level: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.level}: {self.message}"


def lint_fixture_set(
    fixture_set: FixtureSet, engine_factory: EngineFactory | None = None
) -> list[LintFinding]:
    """Every finding for the set, sorted by file and line; the engine check needs a factory."""
    findings = [
        LintFinding(error.path, error.line, ERROR, f"{error.field}: {error.message}")
        for error in fixture_set.errors()
    ]
    content_types = sorted({entry.content_type for entry in fixture_set.entries()})
    for content_type in content_types:
        entries = fixture_set.entries(content_type)
        findings += _corpus_size_findings(content_type, entries)
        findings += _needle_findings(entries)
        findings += _case_findings(entries)
        findings += _negative_vocabulary_findings(entries)
        if engine_factory is not None:
            findings += _engine_findings(engine_factory, content_type, entries)
    return sorted(findings, key=lambda finding: (finding.path, finding.line))


def has_errors(findings: Sequence[LintFinding]) -> bool:
    """True when any finding is an error."""
    return any(finding.level == ERROR for finding in findings)


def exit_status(findings: Sequence[LintFinding], *, strict: bool) -> int:
    """1 on errors, and on warnings when strict; 0 otherwise."""
    if has_errors(findings) or (strict and findings):
        return 1
    return 0


def _corpus_size_findings(content_type: str, entries: Sequence[Entry]) -> list[LintFinding]:
    if len(entries) >= MIN_ENTRIES_PER_CONTENT_TYPE:
        return []
    first = entries[0]
    return [
        LintFinding(
            first.path,
            first.line,
            WARNING,
            f"content type {content_type!r} has only {len(entries)} entries "
            f"(fewer than {MIN_ENTRIES_PER_CONTENT_TYPE}): with so few distractors "
            "every query ranks well",
        )
    ]


def _needle_findings(entries: Sequence[Entry]) -> list[LintFinding]:
    findings = []
    for entry in entries:
        for case in entry.cases:
            findings += _case_needle_findings(entry, case, entries)
    return findings


def _case_needle_findings(entry: Entry, case: Case, entries: Sequence[Entry]) -> list[LintFinding]:
    holders = {needle: [e.id for e in entries if needle in e.haystack] for needle in case.needles}
    anchored = any(entry.id in ids for ids in holders.values())
    findings = []
    for needle, ids in holders.items():
        weakness = needle_weakness(needle)
        problems = [
            _placement_problem(entry, ids, anchored),
            (WARNING, weakness) if weakness is not None else None,
        ]
        for problem in problems:
            if problem is not None:
                level, text = problem
                message = f"case {case.case_id}: needle {needle!r} {text}"
                findings.append(LintFinding(entry.path, entry.line, level, message))
    return findings


def _placement_problem(
    entry: Entry, holder_ids: Sequence[str], anchored: bool
) -> tuple[str, str] | None:
    """Where a needle is wrong, if it is: a needle must be findable and point at one place.

    A needle may live in another entry than its case's (a query with several relevant
    documents, as an importer writes), as long as one needle of the case is in the
    case's own haystack (`anchored`) and this one is in exactly one entry.
    """
    others = _name_entries([other for other in holder_ids if other != entry.id])
    if entry.id in holder_ids:
        return (WARNING, f"also occurs in {others}") if others else None
    if not holder_ids:
        return ERROR, (
            f"is not in the haystack of entry {entry.id} "
            f"nor of any other {entry.content_type} entry"
        )
    if not anchored:
        return ERROR, (
            f"is not in the haystack of entry {entry.id} (only in {others}), "
            "and no other needle of the case is"
        )
    if len(holder_ids) > 1:
        return WARNING, f"is not in the haystack of entry {entry.id} and occurs in {others}"
    return None


def needle_weakness(needle: str) -> str | None:
    """Why a needle would match too much on its own (too short, a common word), or None."""
    if len(needle.strip()) < MIN_NEEDLE_CHARS:
        return f"is shorter than {MIN_NEEDLE_CHARS} characters"
    if needle.strip().casefold() in COMMON_ENGLISH_WORDS:
        return "is a common English word"
    return None


def _name_entries(entry_ids: Sequence[str]) -> str:
    shown = ", ".join(entry_ids[:NAMED_ENTRIES_SHOWN])
    hidden = len(entry_ids) - NAMED_ENTRIES_SHOWN
    return f"{shown} and {hidden} more" if hidden > 0 else shown


def _case_findings(entries: Sequence[Entry]) -> list[LintFinding]:
    findings = []
    for entry in entries:
        for case in entry.cases:
            ceiling = case.expected_rank_ceiling
            if case.content_type == "json" and 0 < ceiling < MIN_JSON_RANK_CEILING:
                findings.append(
                    LintFinding(
                        entry.path,
                        entry.line,
                        WARNING,
                        f"case {case.case_id}: rank ceiling {ceiling} is below "
                        f"{MIN_JSON_RANK_CEILING} for a json case: the key-path chunks of one "
                        f"document rank close together (use 0 or {MIN_JSON_RANK_CEILING}+)",
                    )
                )
            if case.xfail is not None and not case.xfail.checks and len(case.checks) > 1:
                findings.append(
                    LintFinding(
                        entry.path,
                        entry.line,
                        WARNING,
                        f"case {case.case_id}: its xfail names no checks, so any of "
                        f"{', '.join(case.checks)} may fail and it stays a known failure; "
                        'list the ones it fails today ({"reason": ..., "checks": [...]})',
                    )
                )
            if not _follows_case_id_convention(case):
                expected = f"{case.entry_id}_q_neg" if case.is_negative else f"{case.entry_id}_q<N>"
                findings.append(
                    LintFinding(
                        entry.path,
                        entry.line,
                        WARNING,
                        f"case {case.case_id}: case_id does not follow the convention {expected!r}",
                    )
                )
    return findings


def _follows_case_id_convention(case: Case) -> bool:
    """`{entry_id}_q{N}` for positive cases, `{entry_id}_q_neg` (or `_q_neg{N}`) for negatives."""
    suffix = r"_q_neg\d*" if case.is_negative else r"_q\d+"
    return re.fullmatch(re.escape(case.entry_id) + suffix, case.case_id) is not None


@dataclass(frozen=True)
class _CorpusWords:
    """The lowercase words of one content type's corpus, with document frequencies."""

    document_frequency: Counter[str]
    words_by_trigram: dict[str, set[str]]
    corrector: Corrector


def _corpus_words(entries: Sequence[Entry]) -> _CorpusWords:
    document_frequency: Counter[str] = Counter()
    for entry in entries:
        document_frequency.update(set(words(entry.haystack)))
    words_by_trigram: dict[str, set[str]] = defaultdict(set)
    for word in document_frequency:
        for gram in trigrams(word):
            words_by_trigram[gram].add(word)
    return _CorpusWords(document_frequency, words_by_trigram, Corrector(document_frequency))


def words(text: str) -> list[str]:
    """Runs of word characters, lowercased: the linter's own, engine-independent word split."""
    return _WORD.findall(text.lower())


def trigrams(word: str) -> set[str]:
    """Every 3-character window of a word."""
    return {word[start : start + 3] for start in range(len(word) - 2)}


def _negative_vocabulary_findings(entries: Sequence[Entry]) -> list[LintFinding]:
    negatives = [(entry, case) for entry in entries for case in entry.cases if case.is_negative]
    if not negatives:
        return []
    corpus_words = _corpus_words(entries)
    findings = []
    for entry, case in negatives:
        for word in dict.fromkeys(words(case.query)):
            reason = _layer_match(word, corpus_words)
            if reason is not None:
                findings.append(
                    LintFinding(
                        entry.path,
                        entry.line,
                        WARNING,
                        f"negative case {case.case_id}: query word {word!r} {reason}",
                    )
                )
    return findings


def _layer_match(word: str, corpus_words: _CorpusWords) -> str | None:
    """Why the trigram or fuzzy layer would match this query word, or None when neither would."""
    if len(word) < MIN_FUZZY_WORD_CHARS:
        return None
    frequency = corpus_words.document_frequency
    grams = sorted(trigrams(word))
    sharing = set(corpus_words.words_by_trigram.get(grams[0], set()))
    for gram in grams[1:]:
        sharing &= corpus_words.words_by_trigram.get(gram, set())
    if sharing:
        match = min(sharing, key=lambda w: (-frequency[w], w))
        if match == word:
            return "occurs in the corpus"
        return f"shares all its trigrams with corpus word {match!r} (trigram layer)"
    # The engine's own corrector, over this linter's word split of the corpus.
    correction = corpus_words.corrector.nearest(word)
    if correction is None:
        return None
    distance = Levenshtein.distance(word, correction)
    return f"is within edit distance {distance} of corpus word {correction!r} (fuzzy layer)"


def _engine_findings(
    engine_factory: EngineFactory, content_type: str, entries: Sequence[Entry]
) -> list[LintFinding]:
    """What only the engine can tell: needles in no chunk it indexed, negatives it answers.

    EngineStartupError when the engine cannot be made or index the entries; the engine
    is closed either way, so a failed index() leaves no schema or directory behind.
    """
    made: list[SearchEngine] = []

    def make_engine(name: str) -> SearchEngine:
        made.append(engine_factory(name))
        return made[-1]

    try:
        engine = started_engine(make_engine, content_type, entries)
        return _unchunked_needle_findings(engine, entries) + _negative_engine_findings(
            engine, entries
        )
    finally:
        for engine in made:
            capabilities.close(engine)


def _unchunked_needle_findings(engine: SearchEngine, entries: Sequence[Entry]) -> list[LintFinding]:
    """A needle in its entry's haystack but in none of its chunks: the case can never pass.

    A needle that spans two chunks (two paragraphs, two JSON keys), or holds text the
    chunker changes (`\r\n` line endings), is verbatim in the haystack, so the
    placement checks pass it; only the engine's own chunks show that no result can
    ever contain it. An engine that cannot list its chunks is not checked.
    """
    chunks = capabilities.listed_chunks(engine)
    if chunks is None:
        return []
    by_source = {entry.source_label: entry.id for entry in entries}
    texts: dict[str, list[str]] = defaultdict(list)
    for chunk in chunks:
        texts[chunk.entry_id or by_source.get(chunk.source, "")].append(chunk.text)
    findings = []
    for entry in entries:
        for case in entry.cases:
            for needle in dict.fromkeys(case.needles):
                holders = (
                    [entry]
                    if needle in entry.haystack
                    else [e for e in entries if needle in e.haystack]
                )
                if holders and not any(
                    needle in text for holder in holders for text in texts[holder.id]
                ):
                    where = ", ".join(holder.id for holder in holders[:NAMED_ENTRIES_SHOWN])
                    findings.append(
                        LintFinding(
                            entry.path,
                            entry.line,
                            WARNING,
                            f"case {case.case_id}: needle {needle!r} is in the haystack of "
                            f"{where} but in no single chunk the engine indexed (it spans "
                            "chunks, or the chunker changes its text, e.g. \\r\\n line "
                            "endings): no result can contain it",
                        )
                    )
    return findings


def _negative_engine_findings(engine: SearchEngine, entries: Sequence[Entry]) -> list[LintFinding]:
    negatives = [(entry, case) for entry in entries for case in entry.cases if case.is_negative]
    if not negatives:
        return []
    findings = []
    for entry, case in negatives:
        returned = engine.search(case.query, limit=DEFAULT_LIMIT, kinds=ALL_KINDS)
        results = checked_results(returned, engine)
        if results:
            first = results[0]
            snippet = " ".join(first.text.split())[:SNIPPET_CHARS]
            findings.append(
                LintFinding(
                    entry.path,
                    entry.line,
                    WARNING,
                    f"negative case {case.case_id}: the engine returns {len(results)} "
                    f"result(s); first from layer {first.layer or 'unknown'}: {snippet!r}",
                )
            )
    return findings
