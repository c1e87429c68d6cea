"""The built-in engine: chunk, index two layers, fuse them with RRF, correct typos.

numpy and rapidfuzz load when an engine is made and nltk when `index()` runs (or a
restored index meets a query word it has never seen), not when this module is
imported: the plugin imports the package in every pytest session.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Literal, get_args

from pytest_qualbench import __version__
from pytest_qualbench.engine import chunking
from pytest_qualbench.engine.analysis import STOPWORDS, query_words
from pytest_qualbench.engine.types import (
    DEFAULT_KINDS,
    DEFAULT_LIMIT,
    Chunk,
    IndexState,
    Results,
    chunk_result,
)
from pytest_qualbench.fixtures.schema import FUZZY_PREFIX, Entry

if TYPE_CHECKING:
    from pytest_qualbench.engine.arrays import Mask
    from pytest_qualbench.engine.fusion import Fused
    from pytest_qualbench.engine.fuzzy import Corrector
    from pytest_qualbench.engine.layer_match import LayerMatcher
    from pytest_qualbench.engine.porter import PorterLayer
    from pytest_qualbench.engine.trigram import TrigramLayer

# eager: correct a query most of whose words no chunk holds, or one that finds fewer
# than `limit` results, and put the corrected results first. fallback (the pipeline of
# the engine the fixture format comes from): correct only a query that finds fewer than
# `limit` results, and append the corrected results. docs/engine.md has the measurements.
FuzzyMode = Literal["eager", "fallback"]
FUZZY_MODES: tuple[FuzzyMode, ...] = get_args(FuzzyMode)
# fusion: a result is labeled with the layers that match it in full among their ranked
# lists, which costs nothing. fts5: with the layers whose SQLite FTS5 MATCH, built as
# capy (the engine the fixture format comes from) builds it, returns the chunk
# (`layer_match`), checked on each returned chunk's text: 1.3-1.4x the median query at
# 10^5 chunks (docs/engine.md, "Layer labels, per result"). Rankings are the same.
LabelRule = Literal["fusion", "fts5"]
LABEL_RULES: tuple[LabelRule, ...] = get_args(LabelRule)
# Chosen by leave-one-collection-out on CISI, MEDLINE, CACM and NPL (docs/engine.md,
# "Choosing the defaults"): every fold chose score gaps added to RRF (weight 0.01 to
# 0.1); the three fusion options together are the best geometric mean on all four.
DEFAULT_RRF_K = 10
DEFAULT_TRIGRAM_FULL_WEIGHT_WORDS = 4
DEFAULT_SCORE_GAP_WEIGHT = 0.03


class Engine:
    """Porter BM25 + trigram BM25, fused by Reciprocal Rank Fusion plus their score gaps,
    with fuzzy fallback."""

    def __init__(
        self,
        *,
        k1: float = 1.2,
        b: float = 0.75,
        k3: float = 8.0,
        title_weight: float = 2.0,
        rrf_k: int = DEFAULT_RRF_K,
        fusion_depth: int = 100,
        trigram_full_weight_words: int = DEFAULT_TRIGRAM_FULL_WEIGHT_WORDS,
        fuzzy: FuzzyMode = "eager",
        score_gap_weight: float = DEFAULT_SCORE_GAP_WEIGHT,
        labels: LabelRule = "fusion",
    ) -> None:
        if fuzzy not in FUZZY_MODES:
            raise ValueError(f"fuzzy={fuzzy!r}: choose one of {', '.join(FUZZY_MODES)}")
        if labels not in LABEL_RULES:
            raise ValueError(f"labels={labels!r}: choose one of {', '.join(LABEL_RULES)}")
        self.k1 = k1
        self.b = b
        self.k3 = k3
        self.title_weight = title_weight
        self.rrf_k = rrf_k
        self.fusion_depth = fusion_depth
        self.trigram_full_weight_words = trigram_full_weight_words
        self.fuzzy = fuzzy
        self.score_gap_weight = score_gap_weight
        self.labels = labels
        self._chunks: tuple[Chunk, ...] = ()
        self._warnings: tuple[str, ...] = ()
        self._porter: PorterLayer | None = None
        self._trigram: TrigramLayer | None = None
        self._corrector: Corrector | None = None
        self._matcher: LayerMatcher | None = None
        self._kinds: tuple[str, ...] = ()
        self._visible_masks: dict[tuple[str, ...], Mask] = {}
        load_libraries()

    @property
    def config(self) -> dict[str, object]:
        """Every constant that shapes a ranking, for the report."""
        from pytest_qualbench.engine.fuzzy import MIN_FUZZY_WORD_CHARS
        from pytest_qualbench.engine.kernel import KERNEL
        from pytest_qualbench.engine.trigram import MIN_TRIGRAM_WORD_CHARS

        return {
            "engine": "pytest_qualbench.engine.Engine",
            # Its ranking is this package's code: a new release may rank differently.
            "library": f"pytest-qualbench {__version__}",
            # Which kernel walked the postings (`kernel`): the same rankings either way.
            "kernel": KERNEL,
            "porter": {
                "bm25_k1": self.k1,
                "bm25_b": self.b,
                "bm25_k3": self.k3,
                "idf": "log((N + 1) / df) (rank_bm25 BM25Plus, delta=0)",
                "title_weight": self.title_weight,
                "stemmer": "nltk PorterStemmer (NLTK_EXTENSIONS)",
                "stopwords": "built-in English list, kept when every query term is one",
                "match": "chunks with all terms, then the rest with any term",
            },
            "trigram": {
                "bm25_k1": self.k1,
                "bm25_b": self.b,
                "min_word_chars": MIN_TRIGRAM_WORD_CHARS,
                "match": "chunks with every word as a case-insensitive substring, then any word",
                "order": "the best depth_per_layer chunks with every word by bm25, those"
                " holding each as a whole word moved first",
            },
            "fusion": {
                "method": "weighted rrf plus score gaps",
                "rrf_k": self.rrf_k,
                "depth_per_layer": self.fusion_depth,
                "trigram_weight": "1 up to trigram_full_weight_words words, then that / words",
                "trigram_full_weight_words": self.trigram_full_weight_words,
                "score_gap_weight": self.score_gap_weight,
                "score_gaps": "a layer's score minus its list's lowest, over the list's"
                " standard deviation, times score_gap_weight, added to its rrf share",
                "labels": self.labels,
                "label_rule": (
                    "the layers whose FTS5 MATCH, built as capy builds it, returns the"
                    " result (all terms, or any term when neither returns it), else the"
                    " layers that ranked it"
                    if self.labels == "fts5"
                    else "the layers matching the result in full (every term), else every"
                    " layer that ranked it"
                ),
            },
            "fuzzy": {
                "library": "rapidfuzz Levenshtein",
                "mode": self.fuzzy,
                "max_edits": "1 for <=4 chars, 2 for <=12, 3 longer",
                "min_word_chars": MIN_FUZZY_WORD_CHARS,
                "corrects": "query words absent from the vocabulary, stems and substrings;"
                " never stopwords or numbers",
                "vocabulary": "corpus words; no stopwords, no identifier-only parts under 5 chars",
                "when": (
                    "half or more of the query's non-stopwords are unknown, or fewer than"
                    " limit results"
                    if self.fuzzy == "eager"
                    else "fewer than limit results"
                ),
                "ties": "higher document frequency, then alphabetical",
                "placement": "first" if self.fuzzy == "eager" else "after the primary results",
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
        self._build(*chunking.chunk_entries(entries))

    def index_chunks(self, chunks: Sequence[Chunk]) -> None:
        """Index chunks made elsewhere (the hybrid engine's, a ranker's), replacing any index.

        Chunk i is document i: its order is the tie-break order.
        """
        self._build(tuple(chunks), ())

    def _build(self, chunks: tuple[Chunk, ...], warnings: tuple[str, ...]) -> None:
        from pytest_qualbench.engine.analysis import porter_stemmer
        from pytest_qualbench.engine.memory import release_free_memory
        from pytest_qualbench.engine.porter import PorterLayer
        from pytest_qualbench.engine.split import split_chunks
        from pytest_qualbench.engine.trigram import TrigramLayer

        # Building stems every word; an index restored from the cache stems only
        # query words it has never seen, so nltk loads here, not with the engine.
        porter_stemmer()

        # The chunks are split into words once, for both layers.
        split = split_chunks(chunks)
        porter = PorterLayer(
            split, k1=self.k1, b=self.b, k3=self.k3, title_weight=self.title_weight
        )
        trigram = TrigramLayer(chunks, split, k1=self.k1, b=self.b)
        # 4 bytes a word, freed before the free pages go back to the OS below.
        del split
        self._set_index(chunks, warnings, porter, trigram)
        # The build's temporaries are freed; without this the allocator keeps their pages.
        release_free_memory()

    def _set_index(
        self,
        chunks: tuple[Chunk, ...],
        warnings: tuple[str, ...],
        porter: PorterLayer,
        trigram: TrigramLayer,
    ) -> None:
        from pytest_qualbench.engine.fuzzy import Corrector
        from pytest_qualbench.engine.layer_match import LayerMatcher

        self._chunks = chunks
        self._warnings = warnings
        self._kinds = tuple(chunk.kind for chunk in chunks)
        self._visible_masks = {}
        self._porter = porter
        self._trigram = trigram
        self._corrector = Corrector(porter.word_frequency, porter.identifier_parts)
        self._matcher = LayerMatcher(porter.word_terms, porter.term_ids)

    def index_state(self) -> IndexState:
        """The index as arrays and JSON, for the on-disk cache (`engine.snapshot`)."""
        from pytest_qualbench.engine.snapshot import index_state

        assert self._porter is not None and self._trigram is not None, "nothing indexed"
        return index_state(self._chunks, self._warnings, self._porter, self._trigram)

    def restore_index(self, state: IndexState) -> None:
        """Take an index `index_state` gave, as `index()` would have built it."""
        from pytest_qualbench.engine.snapshot import restored

        parts = restored(state, k1=self.k1, b=self.b, k3=self.k3)
        self._set_index(parts.chunks, parts.warnings, parts.porter, parts.trigram)

    def search(
        self, query: str, *, limit: int = DEFAULT_LIMIT, kinds: Iterable[str] = DEFAULT_KINDS
    ) -> Results:
        """At most `limit` results, best first, from chunks of the given source kinds.

        They carry the corrected query when a typo correction took part.
        """
        if limit <= 0 or not self._chunks or not query.strip():
            return Results()
        visible = self._visible(kinds)
        depth = max(limit, self.fusion_depth)
        if self.fuzzy == "eager":
            ranked, corrected = self._eager(query, visible, depth, limit)
        else:
            ranked, corrected = self._fallback(query, visible, depth, limit)
        returned = first_per_doc(ranked)[:limit]
        labels = (
            self._labels(query, corrected, returned)
            if self.labels == "fts5"
            else [item.label for item in returned]
        )
        return Results(
            (
                chunk_result(self._chunks[item.doc], layer=label, score=item.score)
                for item, label in zip(returned, labels, strict=True)
            ),
            corrected_query=corrected,
        )

    def _labels(self, query: str, corrected: str | None, returned: Sequence[Fused]) -> list[str]:
        """Each returned result's label: the layers whose FTS5 MATCH, as capy builds it,
        returns the chunk (`layer_match`), for the query that found it, the corrected one
        with `fuzzy+` before it.

        Only the returned results are labeled, each from its own text: the ranking is
        the fusion's, and a label reports on it without changing it.
        """
        assert self._matcher is not None
        matcher = self._matcher
        primary = matcher.query(query)
        fixed = matcher.query(corrected) if corrected is not None else primary
        labels = []
        for item in returned:
            chunk = self._chunks[item.doc]
            if item.label.startswith(FUZZY_PREFIX):
                fused = item.label[len(FUZZY_PREFIX) :]
                labels.append(FUZZY_PREFIX + matcher.label(fixed, chunk, fused))
            else:
                labels.append(matcher.label(primary, chunk, item.label))
        return labels

    def corrected_query(self, query: str) -> str | None:
        """The correction a search of `query` with the default limit and kinds makes, or None."""
        return self.search(query).corrected_query

    def _eager(
        self, query: str, visible: Mask, depth: int, limit: int
    ) -> tuple[list[Fused], str | None]:
        """Corrected results first, for a query half or more of whose non-stopwords are unknown.

        A query most of whose words the corpus knows already says what it wants: an
        unknown word among them is more often a real word the corpus lacks than a typo.
        """
        words = query_words(query)
        unknown = self._unknown(words)
        searched = [word for word in words if word not in STOPWORDS]
        corrected = (
            self._corrected(query, unknown)
            if unknown and 2 * len(unknown) >= len(searched)
            else None
        )
        if corrected is None:
            return self._ranked(query, visible, depth, limit), None
        ranked = self._fuzzy_ranked(corrected, visible, depth, limit)
        # The primary results only follow the corrected ones: when those fill the
        # limit, the typo's own (any-word fallback) search would be thrown away.
        if len(first_per_doc(ranked)) < limit:
            ranked += self._ranked(query, visible, depth, limit)
        return ranked, corrected

    def _fallback(
        self, query: str, visible: Mask, depth: int, limit: int
    ) -> tuple[list[Fused], str | None]:
        """The primary results, then corrected ones when those are fewer than `limit`.

        A result both find keeps its primary label: it comes first.
        """
        ranked = self._ranked(query, visible, depth, limit)
        corrected = (
            self._corrected(query, self._unknown(query_words(query)))
            if len(ranked) < limit
            else None
        )
        if corrected is not None:
            ranked += self._fuzzy_ranked(corrected, visible, depth, limit)
        return ranked, corrected

    def _unknown(self, words: Sequence[str]) -> set[str]:
        """The query's words (`query_words`) that are no stopwords and that no chunk holds
        (as a word, stem or substring)."""
        return {word for word in words if word not in STOPWORDS and not self._known(word)}

    def _corrected(self, query: str, unknown: set[str]) -> str | None:
        """The query's words, each of its `unknown` words corrected; None when none changed.

        The caller has looked the words up already: a trigram lookup of an unknown word
        checks the text of every chunk holding its trigrams.
        """
        assert self._corrector is not None
        words = query_words(query)
        corrected = [
            self._corrector.correct(word) or word if word in unknown else word for word in words
        ]
        return " ".join(corrected) if corrected != words else None

    def _fuzzy_ranked(self, corrected: str, visible: Mask, depth: int, limit: int) -> list[Fused]:
        from pytest_qualbench.engine.fusion import Fused

        return [
            Fused(item.doc, item.score, FUZZY_PREFIX + item.label)
            for item in self._ranked(corrected, visible, depth, limit)
        ]

    def _known(self, word: str) -> bool:
        assert self._porter is not None and self._trigram is not None
        return self._porter.knows(word) or self._trigram.knows(word)

    def _visible(self, kinds: Iterable[str]) -> Mask:
        import numpy as np

        wanted = tuple(sorted(set(kinds)))
        if wanted not in self._visible_masks:
            self._visible_masks[wanted] = np.isin(self._kinds, wanted)
        return self._visible_masks[wanted]

    def _ranked(self, query: str, visible: Mask, depth: int, limit: int) -> list[Fused]:
        """The best `limit` docs of both layers' rankings (each `depth` deep), fused.

        Each result is labeled with the layers that match it in full (every term):
        `porter`, `trigram` or `rrf(porter+trigram)`; one neither does (the layers'
        any-term fill) with every layer that ranked it.
        """
        from pytest_qualbench.engine.fusion import fuse, trigram_weight

        assert self._porter is not None and self._trigram is not None
        layers = [
            (self._porter.name, self._porter.search(query, visible, depth, fill_below=limit)),
            (self._trigram.name, self._trigram.search(query, visible, depth)),
        ]
        words = len(self._trigram.query_words(query))
        weights = (1.0, trigram_weight(words, self.trigram_full_weight_words))
        # Only the best `limit` of a fused list can reach the results: `search` keeps the
        # first `limit` distinct docs of at most two such lists, one after the other.
        return fuse(
            [(name, ranking.docs) for name, ranking in layers],
            self.rrf_k,
            weights,
            limit,
            matched_in_full=[ranking.matched_in_full for _, ranking in layers],
            layer_scores=[ranking.scores for _, ranking in layers],
            gap_weight=self.score_gap_weight,
        )


def load_libraries() -> None:
    """Import numpy and rapidfuzz, which every index needs, built or restored.

    Done when an engine is made: not at package import (the plugin imports the
    package in every pytest session). nltk's stemmer loads when it is first
    needed: at the start of `index()`, or for a query word a restored index
    has never seen.
    """
    from pytest_qualbench.engine import fuzzy, porter, trigram  # noqa: F401


def first_per_doc(ranked: Sequence[Fused]) -> list[Fused]:
    """Drop later occurrences of a doc, keeping the first (deduplication of merged lists)."""
    seen: set[int] = set()
    kept = []
    for item in ranked:
        if item.doc not in seen:
            seen.add(item.doc)
            kept.append(item)
    return kept
