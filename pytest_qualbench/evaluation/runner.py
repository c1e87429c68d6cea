"""Running cases: one indexed engine per content type, shared by every case of it.

No pytest here: the plugin builds a `BenchRun` and items call `run_case`.
The corpus of a content type is always every entry of that type in the fixture
set, whatever was selected, so a case's outcome never depends on `-k` or on
which xdist worker runs it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from pytest_qualbench.engine import capabilities
from pytest_qualbench.engine.types import ALL_KINDS, Chunk, SearchEngine
from pytest_qualbench.evaluation.case_record import CaseRecord
from pytest_qualbench.evaluation.deadline import call_within
from pytest_qualbench.evaluation.judge import judge
from pytest_qualbench.evaluation.metrics import NDCG_K
from pytest_qualbench.evaluation.relevance import DEFAULT_GAIN, DEFAULT_MIN_GRADE, EntryAttribution
from pytest_qualbench.evaluation.substrings import SubstringIndex, cached_substring_index
from pytest_qualbench.fixtures.schema import (
    BUILTIN_VOCABULARY,
    CHECKS,
    Case,
    Entry,
    FixtureSet,
    Vocabulary,
)
from pytest_qualbench.index_cache import IndexCache, Indexed, load_or_index

DEFAULT_ENGINE = "pytest_qualbench.engine:Engine"
# Under the index cache: the substring indexes of the relevant sets, one per content type.
SUBSTRINGS_DIR = "substrings"
# Searched once per content type before its cases: a first query pays for lazy imports
# and first-use setup (182 ms against 0.8 ms after), which no case's latency should hold.
# Words no fixture is likely to hold, so the fuzzy path is warmed too.
WARM_UP_QUERY = "qualbench warmup xqzv"

EngineFactory = Callable[[str], SearchEngine]


class EngineStartupError(RuntimeError):
    """The engine could not be made, or could not index a content type's corpus.

    No case of the content type can run: the benchmark stops before its cases, the
    authoring commands before they write anything (plugin.engine_config words it).
    """

    def __init__(self, content_type: str, cause: Exception) -> None:
        super().__init__(f"{content_type}: {type(cause).__name__}: {cause}")
        self.content_type = content_type
        self.cause = cause


class SharedEngine(TypeError):
    """The factory returned an engine object it had already returned for another content type."""


@dataclass
class IndexedCorpus:
    """An engine holding one content type's corpus, and what judging needs from it."""

    engine: SearchEngine
    index_ms: float
    # Every chunk's text, indexed to count the relevant set R; None if the engine
    # cannot list its chunks.
    chunk_texts: SubstringIndex | None
    # Whether the index came from the on-disk cache (`index_ms` is then the load's time).
    cached: bool = False
    # The warm-up search's time (WARM_UP_QUERY); None when it raised.
    warmup_ms: float | None = None

    def relevant_total(self, case: Case) -> int | None:
        """|R| as far as any metric reads it: nDCG@10's ideal takes min(|R|, 10), and no
        other metric takes |R| (recall counts needles), so counting stops at 10."""
        if self.chunk_texts is None:
            return None
        return self.chunk_texts.count_containing(case.needles, at_most=NDCG_K)


@dataclass
class BenchRun:
    """The per-session state of a benchmark: fixture set, engines, limits."""

    fixture_set: FixtureSet
    engine_factory: EngineFactory
    limit: int
    # The factory's keyword arguments from --qualbench-engine-option, as typed values.
    engine_options: Mapping[str, Any] = field(default_factory=dict)
    checks: Collection[str] = CHECKS
    # The configured engine's layer names and content types (fixtures were validated against it).
    vocabulary: Vocabulary = BUILTIN_VOCABULARY
    # Where built indexes are kept between runs; None builds every time.
    index_cache: IndexCache | None = None
    # Seconds an index build or a search may take; None: no limit.
    timeout: float | None = None
    # Cases judged by `relevant`: the grade that counts as relevant, and nDCG's gain.
    min_grade: int = DEFAULT_MIN_GRADE
    gain: str = DEFAULT_GAIN
    corpora: dict[str, IndexedCorpus] = field(default_factory=dict)
    # Per content type, its entries by source label and text (cases judged by entry).
    attributions: dict[str, EntryAttribution] = field(default_factory=dict)
    index_errors: dict[str, Exception] = field(default_factory=dict)
    # Result texts per positive case id, best first: the token cost counts them
    # without searching a second time.
    retrieved: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Each fixture file collected, by resolved path, with the path it was collected under:
    # a symlinked directory leads to a file twice, by another path.
    collected_files: dict[Path, Path] = field(default_factory=dict)
    # Every engine the factory made, indexed or not (a failed, abandoned or replaced
    # build included): `close` closes each of them, so none keeps a schema or a directory.
    made_engines: list[SearchEngine] = field(default_factory=list)

    def corpus(self, content_type: str) -> IndexedCorpus:
        """The content type's indexed corpus, built on first use unless `build` ran.

        A failed start (the factory or `index()` raising) is not retried: it raises
        EngineStartupError now and for every later call.
        """
        self.prepare(content_type)
        error = self.startup_error(content_type)
        if error is not None:
            raise error from error.cause
        return self.corpora[content_type]

    def startup_error(self, content_type: str) -> EngineStartupError | None:
        """Why the engine could not start for the content type, once `prepare` tried."""
        error = self.index_errors.get(content_type)
        if error is None or isinstance(error, EngineStartupError):
            return error
        return EngineStartupError(content_type, error)

    def prepare(self, content_type: str) -> None:
        """Index the content type now unless it was indexed (or failed to) already."""
        if content_type not in self.corpora and content_type not in self.index_errors:
            self.build(content_type)

    def build(self, content_type: str) -> IndexedCorpus | Exception:
        """Index the content type's corpus now; a failure is kept for its cases to raise."""
        try:
            indexed = call_within(
                lambda: self.indexed(content_type), self.timeout, f"indexing {content_type}"
            )
            chunks = call_within(
                lambda: capabilities.listed_chunks(indexed.engine),
                self.timeout,
                f"chunks() of {content_type}",
            )
        except Exception as exc:
            self.index_errors[content_type] = exc
            return exc
        texts = None if chunks is None else self.substrings(content_type, chunks)
        corpus = IndexedCorpus(indexed.engine, indexed.milliseconds, texts, indexed.cached)
        corpus.warmup_ms = self.warm_up(content_type, corpus.engine)
        self.corpora[content_type] = corpus
        return corpus

    def warm_up(self, content_type: str, engine: SearchEngine) -> float | None:
        """One search before the cases, timed apart; an error is the cases' to show."""
        started = time.perf_counter()
        try:
            call_within(
                lambda: capabilities.search(
                    engine, WARM_UP_QUERY, limit=self.limit, kinds=ALL_KINDS
                ),
                self.timeout,
                f"warm-up search of {content_type}",
            )
        except Exception:
            return None
        return (time.perf_counter() - started) * 1000.0

    def substrings(self, content_type: str, chunks: Iterable[Chunk]) -> SubstringIndex:
        """The index counting each case's relevant set, from the cache beside the engine's."""
        texts = [chunk.text for chunk in chunks]
        if self.index_cache is None:
            return SubstringIndex.built(texts)
        cache = IndexCache(self.index_cache.directory / SUBSTRINGS_DIR)
        return cached_substring_index(cache, content_type, texts)

    def indexed(self, content_type: str) -> Indexed:
        """A new engine holding the content type's index: from the cache, or built (and stored)."""
        entries = self.fixture_set.entries(content_type)
        if self.index_cache is not None:
            return load_or_index(
                self.index_cache,
                content_type,
                self.fixture_set.dataset_hash,
                lambda: self.make_engine(content_type),
                entries,
            )
        started = time.perf_counter()
        engine = started_engine(self.make_engine, content_type, entries)
        return Indexed(engine, (time.perf_counter() - started) * 1000.0, False, "unused")

    def make_engine(self, content_type: str) -> SearchEngine:
        """A new engine from the factory, remembered so that `close` closes it.

        SharedEngine when the factory hands back another content type's engine: one
        object for every type would index each type's entries over the last, and every
        case would search the last-built corpus, passing or failing by accident.
        """
        engine = self.engine_factory(content_type)
        for other, corpus in sorted(self.corpora.items()):
            if corpus.engine is engine and other != content_type:
                raise SharedEngine(
                    f"the engine factory returned the same {type(engine).__qualname__} object "
                    f"for {other} and {content_type}: each content type is indexed on its "
                    "own engine, so return a new one on every call (e.g. from "
                    "pytest_qualbench_make_engine)"
                )
        self.made_engines.append(engine)
        return engine

    def run_case(self, case: Case) -> CaseRecord:
        """Search the case's query over its corpus with every source kind, and judge it.

        An exception from the engine propagates (the item shows its traceback);
        the caller records it with `error_record`.
        """
        corpus = self.corpus(case.content_type)
        started = time.perf_counter()
        results = call_within(
            lambda: capabilities.search(
                corpus.engine, case.query, limit=self.limit, kinds=ALL_KINDS
            ),
            self.timeout,
            f"search of {case.case_id}",
        )
        latency_ms = (time.perf_counter() - started) * 1000.0
        if not case.is_negative:
            self.retrieved[case.case_id] = tuple(result.text for result in results[: self.limit])
        return judge(
            case,
            results[: self.limit],
            relevant_total=None if case.relevant else corpus.relevant_total(case),
            corrected_query=results.corrected_query,
            latency_ms=round(latency_ms, 3),
            checks=self.checks,
            layer_not_checked=self.vocabulary.layer_not_checked(case.expected_layer),
            attribution=self.attribution(case.content_type) if case.relevant else None,
            min_grade=self.min_grade,
            gain=self.gain,
        )

    def attribution(self, content_type: str) -> EntryAttribution:
        """The content type's entries, to name the entry of each result."""
        if content_type not in self.attributions:
            entries = self.fixture_set.entries(content_type)
            self.attributions[content_type] = EntryAttribution(entries)
        return self.attributions[content_type]

    def index_times(self) -> dict[str, float]:
        return {name: round(corpus.index_ms, 3) for name, corpus in sorted(self.corpora.items())}

    def warmup_times(self) -> dict[str, float]:
        return {
            name: round(corpus.warmup_ms, 3)
            for name, corpus in sorted(self.corpora.items())
            if corpus.warmup_ms is not None
        }

    def cached_indexes(self) -> list[str]:
        """The content types whose index this process loaded from the cache."""
        return sorted(name for name, corpus in self.corpora.items() if corpus.cached)

    def lists_chunks(self) -> bool:
        return all(corpus.chunk_texts is not None for corpus in self.corpora.values())

    def close(self) -> list[str]:
        """Let every engine made release what it holds outside the process (`Closes`).

        Each engine is closed once, however often this is called, each within the
        run's timeout. A `close()` that fails (a server gone since) does not stop
        the others: the problems come back, one line each, for the caller to show.
        """
        self.corpora = {}
        engines, self.made_engines = self.made_engines, []
        unique = list({id(engine): engine for engine in engines}.values())
        problems = []
        for engine in unique:
            try:
                call_within(
                    partial(capabilities.close, engine),
                    self.timeout,
                    f"closing {type(engine).__name__}",
                )
            except Exception as exc:
                reason = " ".join(str(exc).split())  # a server's message spans lines
                problems.append(f"{type(engine).__name__}.close(): {type(exc).__name__}: {reason}")
        return problems


def close_problems_line(problems: Sequence[str]) -> str:
    """One warning line for the engines that could not be closed."""
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"qualbench warning: an engine could not be closed: {problems[0]}{more}"


def started_engine(
    engine_factory: EngineFactory, content_type: str, entries: Sequence[Entry]
) -> SearchEngine:
    """A new engine holding `entries`; EngineStartupError when it cannot be made or fed them."""
    try:
        engine = engine_factory(content_type)
        engine.index(entries)
    except Exception as exc:
        raise EngineStartupError(content_type, exc) from exc
    return engine


def engine_info(bench_run: BenchRun) -> dict[str, Any] | None:
    """Name, config and indexing warnings of the engines this process built."""
    for corpus in bench_run.corpora.values():
        engine = corpus.engine
        return {
            "name": f"{type(engine).__module__}:{type(engine).__qualname__}",
            "config": dict(capabilities.config(engine)),
            "options": dict(bench_run.engine_options),
            "lists_chunks": bench_run.lists_chunks(),
            "warnings": sorted(
                warning
                for indexed in bench_run.corpora.values()
                for warning in capabilities.warnings(indexed.engine)
            ),
        }
    return None
