"""The trigram layer: case-insensitive substring matching through an inverted trigram index.

The index (`trigram_postings`) holds the trigrams of three word characters of each
chunk's folded text: query words are runs of `\\w`, so no query asks for any other.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pytest_qualbench.engine.analysis import fold, query_words
from pytest_qualbench.engine.bm25 import (
    UNKNOWN_TERM,
    DocIds,
    Floats,
    Mask,
    PostingIndex,
    union_sorted,
)
from pytest_qualbench.engine.ranking import LayerRanking, top
from pytest_qualbench.engine.trigram_postings import trigram_postings
from pytest_qualbench.engine.types import Chunk

# A word shorter than a trigram has no trigram to look up.
MIN_TRIGRAM_WORD_CHARS = 3
# Candidates few enough to check their text rather than intersect more trigram postings:
# folding a chunk costs about what one more intersection does.
FEW_CANDIDATES = 8


# A chunk's folded title and text.
Fields = tuple[str, str]


def haystack(chunk: Chunk) -> str:
    """What the layer indexes and matches substrings in: the folded title, a newline, the text."""
    return fold(f"{chunk.title}\n{chunk.text}")


def folded(text: str) -> str:
    """`fold`, with the fast path of most texts: NFKC leaves ASCII alone, casefold is lower()."""
    return text.lower() if text.isascii() else fold(text)


def folded_fields(chunk: Chunk) -> Fields:
    """The chunk's folded title and text: where query words are looked for, without a join.

    A query word (`query_words`) holds no newline, and neither NFKC nor casefold
    maps characters across one, so a word is in the `haystack` exactly when it
    is in one of these.
    """
    return folded(chunk.title), folded(chunk.text)


def holds_words(chunk: Chunk, words: Sequence[str], every: bool) -> bool:
    """Whether the chunk's folded title or text holds every word (`every`), else any word.

    One call per candidate, no callable per word: checking candidates' text is most
    of a query whose words' trigrams meet in many chunks.
    """
    title, text = folded_fields(chunk)
    for word in words:
        held = word in text or word in title
        if held != every:
            return held
    return every


class TrigramLayer:
    """Every query word of 3+ characters must be a substring (then any word); BM25 over trigrams."""

    name = "trigram"

    def __init__(self, chunks: Sequence[Chunk], *, k1: float, b: float) -> None:
        # Folded texts are made again for the few candidates a query verifies, not kept:
        # a second copy of the corpus would be a sixth of the index's memory.
        self.chunks = chunks
        # Only trigrams of three word characters are kept (a query word has no other), but
        # a chunk's length stays its count of every window: scores are those of all windows.
        postings = trigram_postings(map(haystack, chunks), word_only=True)
        self.keys = postings.keys
        self.index = PostingIndex.grouped(
            postings.docs, postings.counts, postings.offsets, postings.windows, k1=k1, b=b
        )

    @classmethod
    def stored(cls, chunks: Sequence[Chunk], keys: DocIds, index: PostingIndex) -> TrigramLayer:
        """The layer made again from what a build left (see `engine.snapshot`)."""
        if keys.dtype != np.int64 or keys.ndim != 1 or len(keys) + 1 != len(index.offsets):
            raise ValueError("trigram keys do not match the postings")
        if np.any(keys[1:] <= keys[:-1]):
            raise ValueError("trigram keys are not ascending")
        if len(chunks) != index.size:
            raise ValueError("trigram postings do not match the chunks")
        layer = cls.__new__(cls)
        layer.chunks = chunks
        layer.keys = keys
        layer.index = index
        return layer

    def term_ids(self, word: str) -> list[int]:
        """Distinct trigram term ids of a folded word, UNKNOWN_TERM for those nowhere indexed.

        Ascending by trigram key; the keys of a query word (a few windows) are packed
        in Python, as `trigram_keys` packs a text's.
        """
        points = [ord(char) for char in word]
        keys = sorted(
            {
                (points[i] << 42) | (points[i + 1] << 21) | points[i + 2]
                for i in range(len(word) - 2)
            }
        )
        if not len(self.keys) or not keys:
            return [UNKNOWN_TERM] * len(keys)
        wanted = np.array(keys, dtype=np.int64)
        slots = np.minimum(np.searchsorted(self.keys, wanted), len(self.keys) - 1)
        ids: list[int] = np.where(self.keys[slots] == wanted, slots, UNKNOWN_TERM).tolist()
        return ids

    def best_holding(
        self, candidates: DocIds, scores: Floats, depth: int, words: Sequence[str], every: bool
    ) -> DocIds:
        """The `depth` best candidates by score holding every word (`every`), else any word.

        Checking a candidate means folding its text: at 10^5 chunks a query's
        candidates run to thousands, and checking them all took most of its time.
        So candidates are ranked first (a doc's score does not depend on the others)
        and checked best first until `depth` pass: the same docs, in the same order,
        as checking all, then ranking.
        """
        kept: list[int] = []
        checked = 0
        ranked_depth = depth
        # Most of the best candidates pass: rank a few more than needed, more if not.
        while len(kept) < depth and checked < len(candidates):
            ranked = top(candidates, scores, ranked_depth).tolist()
            for doc in ranked[checked:]:
                if holds_words(self.chunks[doc], words, every):
                    kept.append(doc)
                    if len(kept) == depth:
                        break
            checked = len(ranked)
            ranked_depth *= 4
        return np.asarray(kept, dtype=np.int64)

    def best_containing_any(
        self, words: Sequence[str], terms: Sequence[int], visible: Mask, depth: int
    ) -> tuple[DocIds, Floats]:
        """The `depth` best visible docs holding at least one of the words, ranked by `terms`,
        and their scores."""
        per_word = [self.index.docs_with_all(self.term_ids(word)) for word in words]
        candidates = union_sorted(per_word, len(self.chunks))
        candidates = candidates[visible[candidates]]
        scores = self.index.scores(terms, candidates)
        found = self.best_holding(candidates, scores, depth, words, every=False)
        return found, scores[np.searchsorted(candidates, found)]

    def knows(self, word: str) -> bool:
        """True when the folded word occurs as a substring of some chunk."""
        if len(word) < MIN_TRIGRAM_WORD_CHARS:
            return False
        candidates = self.index.narrowed(self.term_ids(word), FEW_CANDIDATES)
        return any(holds_words(self.chunks[doc], [word], True) for doc in candidates.tolist())

    @staticmethod
    def query_words(query: str) -> list[str]:
        """The distinct folded query words of 3+ characters: what this layer matches."""
        return [word for word in query_words(query) if len(word) >= MIN_TRIGRAM_WORD_CHARS]

    def search(self, query: str, visible: Mask, depth: int) -> LayerRanking:
        """Ranked doc ids among the visible ones: those holding every word, or when none
        does, those holding any."""
        words = self.query_words(query)
        if not words:
            return LayerRanking(np.empty(0, dtype=np.int64), 0, np.empty(0))
        terms = list(dict.fromkeys(term for word in words for term in self.term_ids(word)))
        # All words: the rarest trigrams narrow the candidates, the text settles them.
        candidates = self.index.narrowed(terms, FEW_CANDIDATES)
        candidates = candidates[visible[candidates]]
        scores = self.index.scores(terms, candidates)
        found = self.best_holding(candidates, scores, depth, words, every=True)
        if not len(found):
            any_docs, any_scores = self.best_containing_any(words, terms, visible, depth)
            return LayerRanking(any_docs, 0, any_scores)
        # Candidates are ascending doc ids: each found doc's score is found by bisection.
        return LayerRanking(found, len(found), scores[np.searchsorted(candidates, found)])
