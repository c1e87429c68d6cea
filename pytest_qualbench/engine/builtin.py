"""The built-in engine: chunk, index two layers, fuse them with RRF, correct typos.

numpy, nltk and rapidfuzz load when `index()` first runs, not when this module is
imported: the plugin imports the package in every pytest session.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pytest_qualbench.engine import chunking
from pytest_qualbench.engine.analysis import query_words
from pytest_qualbench.engine.types import (
    DEFAULT_KINDS,
    DEFAULT_LIMIT,
    Chunk,
    IndexState,
    Result,
)
from pytest_qualbench.fixtures.schema import Entry

if TYPE_CHECKING:
    from pytest_qualbench.engine.bm25 import Mask
    from pytest_qualbench.engine.fusion import Fused
    from pytest_qualbench.engine.fuzzy import Corrector
    from pytest_qualbench.engine.porter import PorterLayer
    from pytest_qualbench.engine.trigram import TrigramLayer

FUZZY_PREFIX = "fuzzy+"
# Corrected results go before the primary ones: a correction is only made for a word
# no chunk contains, so the primary results can at best match the query's other words
# (the any-term fallback). docs/engine.md records the measurement behind this.
FUZZY_PLACEMENT = "first"


@dataclass(frozen=True)
class Ranked:
    """One result before it becomes a `Result`: doc id, score and layer label."""

    doc: int
    score: float
    layer: str


class Engine:
    """Porter BM25 + trigram BM25, fused by Reciprocal Rank Fusion, with fuzzy fallback."""

    def __init__(
        self,
        *,
        k1: float = 1.2,
        b: float = 0.75,
        title_weight: float = 2.0,
        rrf_k: int = 60,
        fusion_depth: int = 100,
    ) -> None:
        self.k1 = k1
        self.b = b
        self.title_weight = title_weight
        self.rrf_k = rrf_k
        self.fusion_depth = fusion_depth
        self._chunks: tuple[Chunk, ...] = ()
        self._warnings: tuple[str, ...] = ()
        self._porter: PorterLayer | None = None
        self._trigram: TrigramLayer | None = None
        self._corrector: Corrector | None = None
        # The latest query and its correction: `search` corrects every query, and a
        # caller showing the correction (the plugin's failure message) asks right after.
        self._latest_correction: tuple[str, str | None] | None = None
        self._kinds: tuple[str, ...] = ()
        self._visible_masks: dict[tuple[str, ...], Mask] = {}
        load_libraries()

    @property
    def config(self) -> dict[str, object]:
        """Every constant that shapes a ranking, for the report."""
        return {
            "engine": "pytest_qualbench.engine.Engine",
            "porter": {
                "bm25_k1": self.k1,
                "bm25_b": self.b,
                "idf": "log((N + 1) / df) (rank_bm25 BM25Plus, delta=0)",
                "title_weight": self.title_weight,
                "stemmer": "nltk PorterStemmer (NLTK_EXTENSIONS)",
                "stopwords": "built-in English list, kept when every query term is one",
                "match": "all terms, then any term",
            },
            "trigram": {
                "bm25_k1": self.k1,
                "bm25_b": self.b,
                "min_word_chars": 3,
                "match": "every word as a case-insensitive substring, then any word",
            },
            "fusion": {"method": "rrf", "rrf_k": self.rrf_k, "depth_per_layer": self.fusion_depth},
            "fuzzy": {
                "library": "rapidfuzz Levenshtein",
                "max_edits": "1 for <=4 chars, 2 for <=12, 3 longer",
                "min_word_chars": 3,
                "corrects": "query words absent from the vocabulary, stems and substrings",
                "ties": "higher document frequency, then alphabetical",
                "placement": FUZZY_PLACEMENT,
            },
            "chunking": {
                "max_chunk_chars": chunking.MAX_CHUNK_CHARS,
                "title_chars": chunking.TITLE_CHARS,
                "max_paragraphs": chunking.MAX_PARAGRAPHS,
                "window_lines": chunking.WINDOW_LINES,
                "window_overlap_lines": chunking.WINDOW_OVERLAP_LINES,
                "turns_per_window": chunking.TURNS_PER_WINDOW,
                "turn_overlap": chunking.TURN_OVERLAP,
                "json_identity_fields": list(chunking.JSON_IDENTITY_FIELDS),
                "markdown_heading_levels": "H1-H4",
            },
            "default_limit": DEFAULT_LIMIT,
            "default_kinds": list(DEFAULT_KINDS),
            "tie_break": "(source, position)",
        }

    @property
    def warnings(self) -> tuple[str, ...]:
        """What chunking could not do as asked (e.g. invalid JSON indexed as plaintext)."""
        return self._warnings

    def chunks(self) -> tuple[Chunk, ...]:
        """Every chunk, ordered by (source, position)."""
        return self._chunks

    def index(self, entries: Sequence[Entry]) -> None:
        """Chunk and index all entries of one content type, replacing any earlier index."""
        from pytest_qualbench.engine.fuzzy import Corrector
        from pytest_qualbench.engine.porter import PorterLayer
        from pytest_qualbench.engine.trigram import TrigramLayer

        chunks: list[Chunk] = []
        warnings: list[str] = []
        # Entries sorted by (source, id) make the index, hence every ranking and tie,
        # independent of the order entries arrive in.
        for entry in sorted(entries, key=lambda e: (e.source_label, e.id)):
            chunked = chunking.chunk_entry_with_warnings(entry)
            chunks.extend(chunked.chunks)
            warnings.extend(chunked.warnings)
        renumbered = renumber(chunks)
        porter = PorterLayer(renumbered, k1=self.k1, b=self.b, title_weight=self.title_weight)
        trigram = TrigramLayer(renumbered, k1=self.k1, b=self.b)
        self._set_index(renumbered, tuple(warnings), porter, trigram)
        self._corrector = Corrector(porter.word_frequency)

    def _set_index(
        self,
        chunks: tuple[Chunk, ...],
        warnings: tuple[str, ...],
        porter: PorterLayer,
        trigram: TrigramLayer,
    ) -> None:
        self._chunks = chunks
        self._warnings = warnings
        self._kinds = tuple(chunk.kind for chunk in chunks)
        self._visible_masks = {}
        self._porter = porter
        self._trigram = trigram
        self._latest_correction = None

    def index_state(self) -> IndexState:
        """The index as arrays and JSON, for the on-disk cache (`engine.snapshot`)."""
        from pytest_qualbench.engine.snapshot import index_state

        assert self._porter is not None and self._trigram is not None, "nothing indexed"
        return index_state(self._chunks, self._warnings, self._porter, self._trigram)

    def restore_index(self, state: IndexState) -> None:
        """Take an index `index_state` gave, as `index()` would have built it."""
        from pytest_qualbench.engine.fuzzy import Corrector
        from pytest_qualbench.engine.snapshot import restored

        parts = restored(state, k1=self.k1, b=self.b)
        self._set_index(parts.chunks, parts.warnings, parts.porter, parts.trigram)
        self._corrector = Corrector(parts.porter.word_frequency)

    def search(
        self, query: str, *, limit: int = DEFAULT_LIMIT, kinds: Iterable[str] = DEFAULT_KINDS
    ) -> list[Result]:
        """At most `limit` results, best first, from chunks of the given source kinds."""
        if limit <= 0 or not self._chunks or not query.strip():
            return []
        visible = self._visible(kinds)
        depth = max(limit, self.fusion_depth)
        corrected = self.corrected_query(query)
        if corrected is None:
            ranked = self._ranked(query, visible, depth)
        else:
            ranked = [
                Ranked(item.doc, item.score, FUZZY_PREFIX + item.layer)
                for item in self._ranked(corrected, visible, depth)
            ]
            # The primary results only follow the corrected ones: when those fill the
            # limit, the typo's own (any-word fallback) search would be thrown away.
            if len(first_per_doc(ranked)) < limit:
                ranked += self._ranked(query, visible, depth)
        return [self._result(item) for item in first_per_doc(ranked)[:limit]]

    def corrected_query(self, query: str) -> str | None:
        """The query with each unknown word (3+ chars) corrected; None when none was."""
        if self._corrector is None:
            return None
        if self._latest_correction is None or self._latest_correction[0] != query:
            words = query_words(query)
            corrected = [self._correct(word) for word in words]
            self._latest_correction = (query, " ".join(corrected) if corrected != words else None)
        return self._latest_correction[1]

    def _correct(self, word: str) -> str:
        assert self._corrector is not None
        if self._known(word):
            return word
        return self._corrector.correct(word) or word

    def _known(self, word: str) -> bool:
        assert self._porter is not None and self._trigram is not None
        return self._porter.knows(word) or self._trigram.knows(word)

    def _visible(self, kinds: Iterable[str]) -> Mask:
        import numpy as np

        wanted = tuple(sorted(set(kinds)))
        if wanted not in self._visible_masks:
            self._visible_masks[wanted] = np.isin(self._kinds, wanted)
        return self._visible_masks[wanted]

    def _ranked(self, query: str, visible: Mask, depth: int) -> list[Ranked]:
        from pytest_qualbench.engine.fusion import fuse

        assert self._porter is not None and self._trigram is not None
        layers = (self._porter, self._trigram)
        rankings = [(layer.name, layer.search(query, visible, depth).tolist()) for layer in layers]
        fused: list[Fused] = fuse(rankings, self.rrf_k)
        return [Ranked(item.doc, item.score, item.label) for item in fused]

    def _result(self, item: Ranked) -> Result:
        chunk = self._chunks[item.doc]
        return Result(
            text=chunk.text,
            layer=item.layer,
            title=chunk.title,
            score=item.score,
            source=chunk.source,
            position=chunk.position,
        )


def load_libraries() -> None:
    """Import numpy, rapidfuzz and nltk's stemmer.

    Done when an engine is made: not at package import (the plugin imports the
    package in every pytest session), and not inside `index()`, whose duration the
    report states as the corpus's build time.
    """
    from pytest_qualbench.engine import fuzzy, porter, trigram  # noqa: F401
    from pytest_qualbench.engine.analysis import porter_stemmer

    porter_stemmer()


def renumber(chunks: Sequence[Chunk]) -> tuple[Chunk, ...]:
    """Positions counted per source, so (source, position) is unique even when sources repeat."""
    seen: dict[str, int] = {}
    renumbered = []
    for chunk in chunks:
        position = seen.get(chunk.source, 0)
        seen[chunk.source] = position + 1
        renumbered.append(replace(chunk, position=position))
    return tuple(renumbered)


def first_per_doc(ranked: Sequence[Ranked]) -> list[Ranked]:
    """Drop later occurrences of a doc, keeping the first (deduplication of merged lists)."""
    seen: set[int] = set()
    kept = []
    for item in ranked:
        if item.doc not in seen:
            seen.add(item.doc)
            kept.append(item)
    return kept
