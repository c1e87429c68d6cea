"""The porter layer: BM25 over Porter-stemmed tokens, the title field weighted."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pytest_qualbench.engine.analysis import STOPWORDS, query_terms, stem, tokenize
from pytest_qualbench.engine.bm25 import UNKNOWN_TERM, DocIds, Mask, PostingIndex
from pytest_qualbench.engine.ranking import top
from pytest_qualbench.engine.types import Chunk


class PorterLayer:
    """Stemmed-term BM25; all query terms required first, any term if that finds nothing."""

    name = "porter"

    def __init__(
        self, chunks: Sequence[Chunk], *, k1: float, b: float, title_weight: float
    ) -> None:
        self.term_ids: dict[str, int] = {}
        # Surface words and their document frequency: the vocabulary fuzzy correction uses.
        self.word_frequency: Counter[str] = Counter()
        term_column: list[int] = []
        doc_column: list[int] = []
        weight_column: list[float] = []
        lengths: list[float] = []
        for doc, chunk in enumerate(chunks):
            body = Counter(tokenize(chunk.text))
            title = Counter(tokenize(chunk.title))
            self.word_frequency.update(body.keys() | title.keys())
            weighted: dict[str, float] = {}
            # Counting before stemming stems each distinct token once per chunk.
            for counts, weight in ((body, 1.0), (title, title_weight)):
                for token, count in counts.items():
                    if token not in STOPWORDS:
                        term = stem(token)
                        weighted[term] = weighted.get(term, 0.0) + weight * count
            for term, frequency in weighted.items():
                term_column.append(self.term_ids.setdefault(term, len(self.term_ids)))
                doc_column.append(doc)
                weight_column.append(frequency)
            lengths.append(sum(weighted.values()))
        self.index = PostingIndex(
            term_column,
            doc_column,
            weight_column,
            term_count=len(self.term_ids),
            doc_lengths=lengths,
            k1=k1,
            b=b,
        )

    def knows(self, word: str) -> bool:
        """True when the folded word, or its stem, occurs in some chunk."""
        return word in self.word_frequency or stem(word) in self.term_ids

    def search(self, query: str, visible: Mask, depth: int) -> DocIds:
        """Ranked doc ids among the visible ones."""
        distinct = dict.fromkeys(query_terms(query))
        terms = [self.term_ids.get(term, UNKNOWN_TERM) for term in distinct]
        candidates = self.index.docs_with_all(terms)
        candidates = candidates[visible[candidates]]
        if not len(candidates):
            candidates = self.index.docs_with_any(terms)
            candidates = candidates[visible[candidates]]
        return top(candidates, self.index.scores(terms, candidates), depth)
