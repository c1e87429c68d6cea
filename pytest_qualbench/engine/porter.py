"""The porter layer: BM25 over Porter-stemmed tokens, the title field weighted."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from pytest_qualbench.engine.analysis import STOPWORDS, query_terms, stem, tokenize
from pytest_qualbench.engine.bm25 import DocIds, PostingIndex
from pytest_qualbench.engine.ranking import top
from pytest_qualbench.engine.types import Chunk


class PorterLayer:
    """Stemmed-term BM25; all query terms required first, any term if that finds nothing."""

    name = "porter"

    def __init__(
        self, chunks: Sequence[Chunk], *, k1: float, b: float, title_weight: float
    ) -> None:
        documents: list[dict[str, float]] = []
        lengths: list[float] = []
        # Surface words and their document frequency: the vocabulary fuzzy correction uses.
        self.word_frequency: Counter[str] = Counter()
        for chunk in chunks:
            body_tokens = tokenize(chunk.text)
            title_tokens = tokenize(chunk.title)
            self.word_frequency.update(set(body_tokens) | set(title_tokens))
            body = Counter(stem(t) for t in body_tokens if t not in STOPWORDS)
            title = Counter(stem(t) for t in title_tokens if t not in STOPWORDS)
            weighted = {term: body[term] + title_weight * title[term] for term in body | title}
            documents.append(weighted)
            lengths.append(body.total() + title_weight * title.total())
        self.index = PostingIndex(documents, lengths, k1=k1, b=b)

    def knows(self, word: str) -> bool:
        """True when the folded word, or its stem, occurs in some chunk."""
        return word in self.word_frequency or stem(word) in self.index

    def search(self, query: str, visible: DocIds, depth: int) -> DocIds:
        """Ranked doc ids among the visible ones (ascending ids)."""
        terms = list(dict.fromkeys(query_terms(query)))
        candidates = np.intersect1d(self.index.docs_with_all(terms), visible, assume_unique=True)
        if not len(candidates):
            candidates = np.intersect1d(
                self.index.docs_with_any(terms), visible, assume_unique=True
            )
        return top(candidates, self.index.scores(terms, candidates), depth)
