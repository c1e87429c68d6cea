"""The trigram layer: case-insensitive substring matching through an inverted trigram index."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pytest_qualbench.engine.analysis import fold, query_words, trigrams
from pytest_qualbench.engine.bm25 import DocIds, PostingIndex
from pytest_qualbench.engine.ranking import top
from pytest_qualbench.engine.types import Chunk

MIN_WORD_CHARS = 3


class TrigramLayer:
    """Every query word of 3+ characters must be a substring (then any word); BM25 over trigrams."""

    name = "trigram"

    def __init__(self, chunks: Sequence[Chunk], *, k1: float, b: float) -> None:
        self.haystacks = [fold(f"{chunk.title}\n{chunk.text}") for chunk in chunks]
        documents = [trigrams(haystack) for haystack in self.haystacks]
        lengths = [float(counts.total()) for counts in documents]
        self.index = PostingIndex(documents, lengths, k1=k1, b=b)

    def containing(self, word: str, pool: DocIds | None = None) -> DocIds:
        """Docs (within pool, if given) holding the folded word as a substring.

        Candidates come from intersecting the word's trigram postings, so the work is
        bounded by its rarest trigram; only they are verified against the text.
        """
        candidates = self.index.docs_with_all(sorted(trigrams(word)))
        if pool is not None:
            candidates = np.intersect1d(candidates, pool, assume_unique=True)
        if len(word) == MIN_WORD_CHARS:
            return candidates
        verified = [doc for doc in candidates.tolist() if word in self.haystacks[doc]]
        return np.asarray(verified, dtype=np.int64)

    def knows(self, word: str) -> bool:
        """True when the folded word occurs as a substring of some chunk."""
        return len(word) >= MIN_WORD_CHARS and len(self.containing(word)) > 0

    def search(self, query: str, visible: DocIds, depth: int) -> DocIds:
        """Ranked doc ids among the visible ones (ascending ids)."""
        words = [word for word in query_words(query) if len(word) >= MIN_WORD_CHARS]
        if not words:
            return np.empty(0, dtype=np.int64)
        candidates = visible
        for word in words:
            candidates = self.containing(word, candidates)
            if not len(candidates):
                break
        if not len(candidates):
            candidates = np.unique(
                np.concatenate([self.containing(word, visible) for word in words])
            )
        terms = list(dict.fromkeys(gram for word in words for gram in sorted(trigrams(word))))
        return top(candidates, self.index.scores(terms, candidates), depth)
