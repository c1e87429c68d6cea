"""Rankers: who orders a corpus's chunks best for a query, compared head to head.

A ranker is anything with `rank(query, chunks) -> list[int]`: indexes into
`chunks`, best first; a chunk left out is not retrieved. Every ranker of a run
orders the same chunks (those the benchmarked engine built for one content
type), so the head-to-head table compares ranking and nothing else.

A ranker is made per content type by a factory `factory(engine, chunks)` that
receives the benchmarked engine, already indexed, and the chunk sequence later
passed to every `rank` call: a ranker that needs an index builds it there once.
Factories are registered by name (`register_ranker`); `--qualbench-rankers`
takes those names or `package.module:factory`.
"""

from __future__ import annotations

import math
import pkgutil
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib.metadata import version
from typing import Any, Protocol

from pytest_qualbench.adapters.chunked import searchable_text
from pytest_qualbench.adapters.registry import (
    EngineMaker,
    EngineSpecError,
    registered_engines,
    resolve_engine,
)
from pytest_qualbench.engine import capabilities
from pytest_qualbench.engine.types import ALL_KINDS, Chunk, Result, SearchEngine

# Every ranking is judged on its first 10 chunks: ndcg@10 is the deepest metric shown.
RANKING_DEPTH = 10

FLATFILE_MIN_TERM_CHARS = 3
BM25_K1 = 1.2
BM25_B = 0.75

QUALITY_POOL = 25
QUALITY_RANK_EXPONENT = 0.3
QUALITY_MULTIPLIER_FLOOR = 0.4
NEUTRAL_QUALITY = 0.5
OUTCOME_VALUES = {"success": 1.0, "partial": 0.5, "failure": 0.0}

_WORD = re.compile(r"\w+")


class Ranker(Protocol):
    """Orders one content type's chunks for a query."""

    def rank(self, query: str, chunks: Sequence[Chunk]) -> list[int]:
        """Indexes into `chunks`, best first, each at most once."""
        ...


RankerFactory = Callable[[SearchEngine, Sequence[Chunk]], Ranker]


class RankerSpecError(ValueError):
    """A ranker name that is not registered, or a `module:factory` that cannot be loaded."""


_REGISTRY: dict[str, RankerFactory] = {}


def register_ranker(name: str, factory: RankerFactory) -> None:
    """Make `factory` selectable as `--qualbench-rankers=name` (e.g. from a conftest.py)."""
    if not name or "," in name or ":" in name:
        raise RankerSpecError(f"ranker name {name!r}: use a non-empty name without ',' or ':'")
    _REGISTRY[name] = factory


def registered_rankers() -> tuple[str, ...]:
    """The registered ranker names, sorted."""
    return tuple(sorted(_REGISTRY))


def parse_ranker_names(text: str) -> tuple[str, ...]:
    """argparse `type=`: comma-separated ranker specs, duplicates dropped, order kept."""
    return tuple(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))


def resolve_ranker(
    spec: str, make_engine: Callable[[str], EngineMaker] = resolve_engine
) -> RankerFactory:
    """A registered name, an engine short name, or `package.module:factory` naming a factory.

    An engine short name ranks the benchmarked engine's chunks with that engine,
    made by `make_engine(name)` (the plugin binds its ini options there).
    """
    if spec in _REGISTRY:
        return _REGISTRY[spec]
    if ":" not in spec:
        engines = registered_engines()
        if spec in engines:
            try:
                return engine_ranker(make_engine(spec))
            except EngineSpecError as exc:
                raise RankerSpecError(f"ranker {spec!r}: {exc}") from None
        raise RankerSpecError(
            f"unknown ranker {spec!r}; registered: {', '.join(registered_rankers())};"
            f" engines: {', '.join(sorted(engines))} (or give package.module:factory)"
        )
    try:
        target = pkgutil.resolve_name(spec)
    except (ImportError, AttributeError, ValueError) as exc:
        raise RankerSpecError(f"ranker {spec!r}: cannot load it: {exc}") from exc
    if not callable(target):
        raise RankerSpecError(f"ranker {spec!r}: not callable")
    factory: RankerFactory = target
    return factory


def result_chunk_indexes(results: Iterable[Result], chunks: Sequence[Chunk]) -> list[int]:
    """Map an engine's results back to chunk indexes: by (source, position, text), else by text.

    A result that is no chunk of the corpus is dropped; a chunk is kept once.
    """
    exact: dict[tuple[str, int, str], int] = {}
    by_text: dict[str, int] = {}
    for position, chunk in enumerate(chunks):
        exact.setdefault((chunk.source, chunk.position, chunk.text), position)
        by_text.setdefault(chunk.text, position)
    indexes: dict[int, None] = {}
    for result in results:
        index = exact.get((result.source, result.position, result.text), by_text.get(result.text))
        if index is not None:
            indexes.setdefault(index)
    return list(indexes)


# --- flatfile: an agent reading its memory files ---------------------------------


def flatfile_terms(query: str) -> list[str]:
    """The distinct lowercased words of 3+ characters of a query, in query order."""
    words = (word for word in _WORD.findall(query.lower()) if len(word) >= FLATFILE_MIN_TERM_CHARS)
    return list(dict.fromkeys(words))


def term_overlap(terms: Sequence[str], lowered_text: str) -> int:
    """Naive term overlap (the flat-file memory baseline): how many terms the text contains."""
    return sum(1 for term in terms if term in lowered_text)


class FlatfileRanker:
    """Chunks containing any query term, by how many distinct terms they contain; no IDF."""

    def rank(self, query: str, chunks: Sequence[Chunk]) -> list[int]:
        terms = flatfile_terms(query)
        scores = [term_overlap(terms, chunk.text.lower()) for chunk in chunks]
        matched = [index for index, score in enumerate(scores) if score > 0]
        # Ties keep chunk order, as a reader scanning files top to bottom would.
        return sorted(matched, key=lambda index: -scores[index])


def make_flatfile(engine: SearchEngine, chunks: Sequence[Chunk]) -> Ranker:
    """Factory of `flatfile` (needs neither the engine nor an index)."""
    return FlatfileRanker()


# --- bm25: textbook BM25 with Lucene's IDF -----------------------------------------

# Lucene's EnglishAnalyzer default stop set (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET),
# also bm25s's "en" list: a fixed list, so no nltk corpus is downloaded.
BM25_STOPWORDS = frozenset(
    (
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into",
        "is", "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then",
        "there", "these", "they", "this", "to", "was", "will", "with",
    )
)  # fmt: skip
# Words of two or more word characters: bm25s's (and scikit-learn's) default pattern.
_BM25_TOKEN = re.compile(r"(?u)\b\w\w+\b")


def lucene_idf(documents: int, document_frequency: int) -> float:
    """log(1 + (N - df + 0.5) / (df + 0.5)): Lucene's BM25Similarity IDF, never negative."""
    return math.log(1.0 + (documents - document_frequency + 0.5) / (document_frequency + 0.5))


class Bm25Analyzer:
    """Lowercased words of 2+ word characters, the Lucene English stop set dropped,
    each stemmed by nltk's Porter stemmer (memoised per word)."""

    def __init__(self) -> None:
        from pytest_qualbench.engine.analysis import porter_stemmer

        self._stem = porter_stemmer().stem
        self._stems: dict[str, str] = {}

    def terms(self, text: str) -> list[str]:
        terms = []
        for word in _BM25_TOKEN.findall(text.lower()):
            if word in BM25_STOPWORDS:
                continue
            stemmed = self._stems.get(word)
            if stemmed is None:
                stemmed = self._stems[word] = self._stem(word)
            terms.append(stemmed)
        return terms


def lucene_bm25(documents: Sequence[Sequence[str]], k1: float, b: float) -> Any:
    """rank_bm25's BM25Okapi with Lucene's IDF in place of its own.

    BM25Okapi scores idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)), the
    Robertson-Sparck Jones formula; its own IDF, log((N - df + 0.5) / (df + 0.5)), goes
    negative for a term in more than half the documents and is then floored at a
    fraction of the mean. Lucene's IDF (`lucene_idf`) needs no floor. Lucene 8+ leaves
    out the constant (k1 + 1), which changes no ranking.
    """
    from rank_bm25 import BM25Okapi

    class LuceneIdfBm25(BM25Okapi):  # type: ignore[misc]
        def _calc_idf(self, document_frequencies: dict[str, int]) -> None:
            self.idf = {
                term: lucene_idf(self.corpus_size, frequency)
                for term, frequency in document_frequencies.items()
            }

    return LuceneIdfBm25(documents, k1=k1, b=b)


class Bm25Ranker:
    """Textbook BM25 over each chunk's title and text: `Bm25Analyzer` terms, k1 1.2,
    b 0.75, Lucene's IDF (`lucene_bm25`).

    Every query term counts once per occurrence in the query, as Lucene sums its term
    clauses. No title weight, trigrams or fuzzy correction: the plain keyword
    baseline. Chunks sharing no term with the query are not retrieved.
    """

    def __init__(self, chunks: Sequence[Chunk], *, k1: float = BM25_K1, b: float = BM25_B) -> None:
        self._k1 = k1
        self._b = b
        self._analyzer = Bm25Analyzer()
        documents = [self._analyzer.terms(searchable_text(chunk)) for chunk in chunks]
        # rank_bm25 divides by the corpus size and the mean length: a corpus without a
        # term gets no model (no query could match it).
        self._model = lucene_bm25(documents, k1, b) if any(documents) else None

    @property
    def config(self) -> dict[str, object]:
        """Library, version and parameters, for the report (`rankers.config`)."""
        return {
            "library": f"rank-bm25 {version('rank-bm25')}",
            "k1": self._k1,
            "b": self._b,
            "idf": "log(1 + (N - df + 0.5) / (df + 0.5)) (Lucene)",
        }

    def rank(self, query: str, chunks: Sequence[Chunk]) -> list[int]:
        terms = self._analyzer.terms(query)
        if self._model is None or not terms:
            return []
        scores = self._model.get_scores(terms)
        # Every IDF is positive, so a chunk scores above 0 exactly when it holds a term.
        matched = [index for index, score in enumerate(scores.tolist()) if score > 0.0]
        return sorted(matched, key=lambda index: (-scores[index], index))


def make_bm25(engine: SearchEngine, chunks: Sequence[Chunk]) -> Ranker:
    """Factory of `bm25`: indexes the chunks once."""
    return Bm25Ranker(chunks)


# --- engine: the benchmarked engine itself ----------------------------------------


class EngineRanker:
    """The benchmarked engine's own results, searched with every source kind."""

    def __init__(self, engine: SearchEngine, depth: int = RANKING_DEPTH) -> None:
        self._engine = engine
        self._depth = depth

    def rank(self, query: str, chunks: Sequence[Chunk]) -> list[int]:
        results = self._engine.search(query, limit=self._depth, kinds=ALL_KINDS)
        return result_chunk_indexes(results, chunks)


def make_engine(engine: SearchEngine, chunks: Sequence[Chunk]) -> Ranker:
    """Factory of `engine`: reuses the engine the benchmark already indexed."""
    return EngineRanker(engine)


# --- an engine by short name, over the benchmarked engine's chunks ----------------


class IndexedEngineRanker:
    """Another engine indexed over the same chunks (`index_chunks`), its results mapped back."""

    def __init__(self, engine: Any, chunks: Sequence[Chunk], depth: int = RANKING_DEPTH) -> None:
        self._engine = engine
        self._depth = depth
        engine.index_chunks(chunks)

    @property
    def config(self) -> Mapping[str, object]:
        """The engine's, for the report (`rankers.config`)."""
        return capabilities.config(self._engine)

    def rank(self, query: str, chunks: Sequence[Chunk]) -> list[int]:
        results = self._engine.search(query, limit=self._depth, kinds=ALL_KINDS)
        return result_chunk_indexes(results, chunks)

    def close(self) -> None:
        capabilities.close(self._engine)


def engine_ranker(make_engine: EngineMaker) -> RankerFactory:
    """Factory of an engine-name ranker: a fresh engine that indexes the given chunks."""

    def make(engine: SearchEngine, chunks: Sequence[Chunk]) -> Ranker:
        other = make_engine()
        if not capabilities.indexes_chunks(other):
            raise RankerSpecError(
                f"{type(other).__name__} cannot rank given chunks: it has no index_chunks()"
            )
        return IndexedEngineRanker(other, chunks)

    return make


# --- quality: an example reranker over entry metadata ------------------------------


def outcome_value(metadata: Mapping[str, Any]) -> float:
    """`outcome` as a number: success 1, partial 0.5, failure 0; anything else neutral 0.5."""
    outcome = metadata.get("outcome")
    if isinstance(outcome, str):
        return OUTCOME_VALUES.get(outcome.strip().lower(), NEUTRAL_QUALITY)
    return NEUTRAL_QUALITY


def confidence_value(metadata: Mapping[str, Any]) -> float:
    """`confidence` clamped to [0, 1]; neutral 0.5 when absent or not a number."""
    confidence = metadata.get("confidence")
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        return NEUTRAL_QUALITY
    return min(1.0, max(0.0, float(confidence)))


def chunk_quality(metadata: Mapping[str, Any]) -> float:
    """Quality in [0, 1]: the mean of outcome value and confidence (0.5 without metadata)."""
    return (outcome_value(metadata) + confidence_value(metadata)) / 2.0


def quality_score(
    rank: int,
    quality: float,
    *,
    exponent: float = QUALITY_RANK_EXPONENT,
    floor: float = QUALITY_MULTIPLIER_FLOOR,
) -> float:
    """rank^-exponent * (floor + (1 - floor) * quality): compressed relevance times quality.

    The shape of Cachly-Bench's rerank (compress relevance by a 0.3 power, then
    multiply by 0.4 + 0.6 * quality), taken over the engine's rank instead of
    its score, since fused scores are rank-derived and differ between engines.
    """
    return math.pow(rank, -exponent) * (floor + (1.0 - floor) * quality)


class QualityRanker:
    """Reranks the engine's top 25 by `quality_score`; ties keep the engine's order.

    Chunks without metadata all weigh the same, so on a corpus without
    metadata this ranker returns the engine's own order.
    """

    def __init__(self, engine: SearchEngine, pool: int = QUALITY_POOL) -> None:
        self._engine = EngineRanker(engine, depth=pool)

    def rank(self, query: str, chunks: Sequence[Chunk]) -> list[int]:
        candidates = self._engine.rank(query, chunks)
        scores = [
            quality_score(rank, chunk_quality(chunks[index].metadata))
            for rank, index in enumerate(candidates, start=1)
        ]
        order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))
        return [candidates[i] for i in order]


def make_quality(engine: SearchEngine, chunks: Sequence[Chunk]) -> Ranker:
    """Factory of `quality`: reranks the indexed engine's results."""
    return QualityRanker(engine)


register_ranker("flatfile", make_flatfile)
register_ranker("bm25", make_bm25)
register_ranker("engine", make_engine)
register_ranker("quality", make_quality)
