"""The trigram layer: case-insensitive substring matching through an inverted trigram index.

The index (`trigram_postings`) holds the trigrams of three word characters of each
chunk's folded text: query words are runs of `\\w`, so no query asks for any other. It
scores; which chunks hold a query word is settled by the chunks' words
(`chunk_words`), without reading any chunk's text.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pytest_qualbench.engine.analysis import haystack, query_words
from pytest_qualbench.engine.arrays import DocIds, Floats, Mask
from pytest_qualbench.engine.bm25 import PostingIndex
from pytest_qualbench.engine.chunk_words import ChunkWords, chunk_words
from pytest_qualbench.engine.ranking import LayerRanking
from pytest_qualbench.engine.split import Split
from pytest_qualbench.engine.trigram_postings import trigram_ids, trigram_postings
from pytest_qualbench.engine.types import Chunk

# A word shorter than a trigram has no trigram to look up.
MIN_TRIGRAM_WORD_CHARS = 3


class TrigramLayer:
    """Every query word of 3+ characters must be a substring (then any word); BM25 over trigrams."""

    name = "trigram"

    def __init__(self, chunks: Sequence[Chunk], split: Split, *, k1: float, b: float) -> None:
        # Only trigrams of three word characters are kept (a query word has no other), but
        # a chunk's length stays its count of every window: scores are those of all windows.
        postings = trigram_postings(map(haystack, chunks), word_only=True)
        self.keys = postings.keys
        self.index = PostingIndex.grouped(
            postings.ids, postings.counts, postings.windows, k1=k1, b=b
        )
        del postings
        # Which chunks hold a query word is settled by the words of the chunks, not their
        # text; an ASCII chunk's are its raw words in `split`, lowercased.
        self.words = chunk_words(chunks, split)

    @classmethod
    def stored(cls, keys: DocIds, index: PostingIndex, words: ChunkWords) -> TrigramLayer:
        """The layer made again from what a build left (see `engine.snapshot`)."""
        if keys.dtype != np.int64 or keys.ndim != 1 or len(keys) != index.term_count:
            raise ValueError("trigram keys do not match the postings")
        if np.any(keys[1:] <= keys[:-1]):
            raise ValueError("trigram keys are not ascending")
        if words.chunk_count != index.size:
            raise ValueError("trigram postings do not match the chunk words")
        layer = cls.__new__(cls)
        layer.keys = keys
        layer.index = index
        layer.words = words
        return layer

    def term_ids(self, word: str) -> list[int]:
        """Distinct trigram term ids of a folded word, ascending by trigram key,
        UNKNOWN_TERM for those nowhere indexed."""
        return trigram_ids(self.keys, word)

    def best(self, docs: DocIds, terms: Sequence[int], depth: int) -> tuple[DocIds, Floats]:
        """The `depth` best of `docs`, ranked by BM25 over `terms`, and their scores.

        Only the docs holding the words are ranked: a doc's score does not depend on
        the others, and ties go by doc id, so this is the ranking of checking every
        candidate of the trigram postings, then ranking those passing.
        """
        return self.index.best(terms, docs, depth)

    def knows(self, word: str) -> bool:
        """True when the folded word occurs as a substring of some chunk."""
        return len(word) >= MIN_TRIGRAM_WORD_CHARS and len(self.words.containing(word)) > 0

    @staticmethod
    def query_words(query: str) -> list[str]:
        """The distinct folded query words of 3+ characters: what this layer matches."""
        return [word for word in query_words(query) if len(word) >= MIN_TRIGRAM_WORD_CHARS]

    def search(self, query: str, visible: Mask, depth: int) -> LayerRanking:
        """Ranked doc ids among the visible ones: those holding every word, or when none
        does, those holding any.

        Of the best `depth` holding every word, the ones holding each as a word of its own
        come first: `cache` standing alone answers a query for it more surely than
        `cache` inside `poolcache` does (docs/engine.md, "Trigram layer").
        """
        words = self.query_words(query)
        if not words:
            return LayerRanking(np.empty(0, dtype=np.int64), 0, np.empty(0))
        terms = list(dict.fromkeys(term for word in words for term in self.term_ids(word)))
        holding = self.words.holding(words, visible)
        if not len(holding.every):
            any_docs, any_scores = self.best(holding.any, terms, depth)
            return LayerRanking(any_docs, 0, any_scores)
        docs, scores = self.best(holding.every, terms, depth)
        docs, scores = self.words.words_first(holding.own, docs, scores)
        return LayerRanking(docs, len(docs), scores)
