"""Running cases: one indexed engine per content type, shared by every case of it.

No pytest here: the plugin builds a `BenchRun` and items call `run_case`.
The corpus of a content type is always every entry of that type in the fixture
set, whatever was selected, so a case's outcome never depends on `-k` or on
which xdist worker runs it.
"""

from __future__ import annotations

import bisect
import itertools
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from pytest_qualbench.engine.types import ALL_KINDS, SearchEngine
from pytest_qualbench.evaluation.judge import CHECKS, CaseRecord, judge
from pytest_qualbench.fixtures.schema import BUILTIN_VOCABULARY, Case, FixtureSet, Vocabulary

DEFAULT_ENGINE = "pytest_qualbench.engine:Engine"

EngineFactory = Callable[[str], SearchEngine]


class IndexingFailed(RuntimeError):
    """A content type whose corpus failed to index earlier in this session."""


@dataclass
class IndexedCorpus:
    """An engine holding one content type's corpus, and what judging needs from it."""

    engine: SearchEngine
    index_ms: float
    # Texts of every chunk, to count the relevant set R; None if the engine cannot list chunks.
    chunk_texts: ChunkTexts | None

    def relevant_total(self, case: Case) -> int | None:
        if self.chunk_texts is None:
            return None
        return self.chunk_texts.count_containing(case.needles)


@dataclass(frozen=True)
class ChunkTexts:
    """Every chunk's text end to end, so the chunks holding a needle are found by str.find.

    One scan of the joined text per needle instead of a substring test per chunk:
    per case, 28 to 8 us on bench_fixtures and 105 to 25 ms at 10^5 chunks.
    """

    joined: str
    # Where each chunk starts in `joined`, then where the last one ends.
    bounds: tuple[int, ...]

    @classmethod
    def of(cls, texts: Iterable[str]) -> ChunkTexts:
        listed = list(texts)
        return cls("".join(listed), (0, *itertools.accumulate(len(text) for text in listed)))

    @property
    def chunk_count(self) -> int:
        return len(self.bounds) - 1

    def count_containing(self, needles: Iterable[str]) -> int:
        """How many chunks contain at least one of the (non-empty) needles."""
        containing: set[int] = set()
        for needle in needles:
            position = self.joined.find(needle)
            while position != -1:
                chunk = bisect.bisect_right(self.bounds, position) - 1
                chunk_end = self.bounds[chunk + 1]
                if position + len(needle) <= chunk_end:
                    containing.add(chunk)
                    position = self.joined.find(needle, chunk_end)
                else:
                    # The match runs across two chunks: it is in neither.
                    position = self.joined.find(needle, position + 1)
        return len(containing)


@dataclass
class BenchRun:
    """The per-session state of a benchmark: fixture set, engines, limits."""

    fixture_set: FixtureSet
    engine_factory: EngineFactory
    limit: int
    checks: Collection[str] = CHECKS
    # The configured engine's layer names and content types (fixtures were validated against it).
    vocabulary: Vocabulary = BUILTIN_VOCABULARY
    corpora: dict[str, IndexedCorpus] = field(default_factory=dict)
    index_errors: dict[str, Exception] = field(default_factory=dict)
    # Content types whose index error a case has raised (shown with its traceback).
    index_errors_raised: set[str] = field(default_factory=set)
    # Result texts per positive case id, best first: the token cost counts them
    # without searching a second time.
    retrieved: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def corpus(self, content_type: str) -> IndexedCorpus:
        """The content type's indexed corpus, built on first use unless `build` ran.

        A failed index is not retried for every case: the first case raises the
        engine's exception (with its traceback), the others point back to it.
        """
        self.prepare(content_type)
        if content_type in self.index_errors:
            error = self.index_errors[content_type]
            if content_type in self.index_errors_raised:
                raise IndexingFailed(f"indexing {content_type} failed earlier: {error!r}")
            self.index_errors_raised.add(content_type)
            raise error
        return self.corpora[content_type]

    def prepare(self, content_type: str) -> None:
        """Index the content type now unless it was indexed (or failed to) already."""
        if content_type not in self.corpora and content_type not in self.index_errors:
            self.build(content_type)

    def build(self, content_type: str) -> IndexedCorpus | Exception:
        """Index the content type's corpus now; a failure is kept for its cases to raise."""
        started = time.perf_counter()
        try:
            engine = self.engine_factory(content_type)
            started = time.perf_counter()
            engine.index(self.fixture_set.entries(content_type))
        except Exception as exc:
            self.index_errors[content_type] = exc
            return exc
        index_ms = (time.perf_counter() - started) * 1000.0
        chunks = getattr(engine, "chunks", None)
        texts = ChunkTexts.of(chunk.text for chunk in chunks()) if callable(chunks) else None
        corpus = IndexedCorpus(engine, index_ms, texts)
        self.corpora[content_type] = corpus
        return corpus

    def run_case(self, case: Case) -> CaseRecord:
        """Search the case's query over its corpus with every source kind, and judge it.

        An exception from the engine propagates (the item shows its traceback);
        the caller records it with `error_record`.
        """
        corpus = self.corpus(case.content_type)
        started = time.perf_counter()
        results = list(corpus.engine.search(case.query, limit=self.limit, kinds=ALL_KINDS))
        latency_ms = (time.perf_counter() - started) * 1000.0
        if not case.is_negative:
            self.retrieved[case.case_id] = tuple(result.text for result in results[: self.limit])
        corrector = getattr(corpus.engine, "corrected_query", None)
        corrected = corrector(case.query) if callable(corrector) else None
        return judge(
            case,
            results[: self.limit],
            relevant_total=corpus.relevant_total(case),
            corrected_query=corrected,
            latency_ms=round(latency_ms, 3),
            checks=self.checks,
            layer_checked=self.vocabulary.checks_layer(case.expected_layer),
        )

    def index_times(self) -> dict[str, float]:
        return {name: round(corpus.index_ms, 3) for name, corpus in sorted(self.corpora.items())}

    def lists_chunks(self) -> bool:
        return all(corpus.chunk_texts is not None for corpus in self.corpora.values())

    def close(self) -> None:
        """Let every engine release what it holds outside the process (`close()` is optional).

        Each engine is closed once, however often this is called.
        """
        corpora, self.corpora = self.corpora, {}
        for corpus in corpora.values():
            close = getattr(corpus.engine, "close", None)
            if callable(close):
                close()


def engine_info(bench_run: BenchRun) -> dict[str, Any] | None:
    """Name, config and indexing warnings of the engines this process built."""
    for corpus in bench_run.corpora.values():
        engine = corpus.engine
        config = getattr(engine, "config", {})
        return {
            "name": f"{type(engine).__module__}:{type(engine).__qualname__}",
            "config": dict(config) if isinstance(config, dict) else {},
            "lists_chunks": bench_run.lists_chunks(),
            "warnings": sorted(
                str(warning)
                for indexed in bench_run.corpora.values()
                for warning in getattr(indexed.engine, "warnings", ())
            ),
        }
    return None
