"""The porter layer: BM25 over Porter-stemmed tokens, the title field weighted."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from pytest_qualbench.engine.analysis import STOPWORDS, query_tokens, raw_words, stem, word_tokens
from pytest_qualbench.engine.block_postings import BLOCK_DOCS, block_of, counted, merged
from pytest_qualbench.engine.bm25 import (
    UNKNOWN_TERM,
    DocIds,
    Floats,
    Mask,
    PostingIndex,
    concatenated_ranges,
    query_term_weight,
)
from pytest_qualbench.engine.ranking import LayerRanking, top_positions
from pytest_qualbench.engine.types import Chunk


class TokenIds(dict[str, int]):
    """Ids for tokens in first-seen order: looking up an unseen token gives it the next id."""

    def __init__(self) -> None:
        super().__init__()
        # The tokens in id order, so the ones a block added are a slice.
        self.tokens: list[str] = []

    def __missing__(self, token: str) -> int:
        self[token] = len(self)
        self.tokens.append(token)
        return len(self) - 1


class RawWords(dict[str, int]):
    """A number for each distinct raw word, first seen first, and its tokens' ids
    (`word_tokens`) in one flat table: word n's are `tokens[starts[n]:ends[n]]` of `tables()`."""

    def __init__(self, token_ids: TokenIds) -> None:
        super().__init__()
        self.token_ids = token_ids
        self.tokens: list[int] = []
        self.ends: list[int] = []
        self._ends = np.empty(0, dtype=np.int64)
        self._tokens = np.empty(0, dtype=np.int64)

    def __missing__(self, word: str) -> int:
        self.tokens.extend(self.token_ids[token] for token in word_tokens(word))
        self.ends.append(len(self.tokens))
        number = len(self)
        self[word] = number
        return number

    def tables(self) -> tuple[DocIds, DocIds, DocIds]:
        """Each word's first and end slot in `tokens`, and `tokens`, as arrays."""
        # Only the words added since the last call are converted.
        added_ends = np.asarray(self.ends[len(self._ends) :], dtype=np.int64)
        added_tokens = np.asarray(self.tokens[len(self._tokens) :], dtype=np.int64)
        self._ends = np.concatenate((self._ends, added_ends))
        self._tokens = np.concatenate((self._tokens, added_tokens))
        starts = np.concatenate(([0], self._ends[:-1])).astype(np.int64)
        return starts, self._ends, self._tokens


def token_stream(texts: Sequence[str], words: RawWords) -> tuple[DocIds, DocIds]:
    """The `TokenIds` id of every token of every text, and the doc (text number) of each."""
    counts = []
    per_text = []
    # Each text's words are numbered and dropped at once: a block's worth of word strings
    # alive together would fragment the heap the build leaves behind.
    for text in texts:
        text_words = raw_words(text)
        # A dict subclass's __getitem__ runs in C for known words: no Python call per word.
        per_text.append(
            np.fromiter(map(words.__getitem__, text_words), dtype=np.int64, count=len(text_words))
        )
        counts.append(len(text_words))
    numbers = np.concatenate(per_text) if per_text else np.empty(0, dtype=np.int64)
    starts, ends, tokens = words.tables()
    sizes = ends[numbers] - starts[numbers]
    # Token i of word w sits at starts[w] + i: each word's slots, one run after another.
    slots = concatenated_ranges(starts[numbers], sizes)
    docs = np.repeat(np.repeat(np.arange(len(texts), dtype=np.int64), counts), sizes)
    ids: DocIds = tokens[slots]
    return ids, docs


def weighted_pairs(
    body: tuple[DocIds, DocIds], title: tuple[DocIds, DocIds], title_weight: float, doc_count: int
) -> tuple[DocIds, Floats]:
    """Packed (term, doc) pairs, ascending, and body count + title_weight * title count of each.

    Each field is a (term id per token, doc per token) pair of columns; stopword
    tokens (UNKNOWN_TERM) are left out.
    """
    field_pairs = []
    for terms, docs in (body, title):
        kept = terms != UNKNOWN_TERM
        field_pairs.append(counted(terms[kept] * doc_count + docs[kept]))
    (body_pairs, body_counts), (title_pairs, title_counts) = field_pairs
    pairs, _ = counted(np.concatenate((body_pairs, title_pairs)))
    # The body count, then the weighted title count, added to 0.0 in that order.
    weights: Floats = np.zeros(len(pairs), dtype=np.float64)
    weights[np.searchsorted(pairs, body_pairs)] += 1.0 * body_counts
    weights[np.searchsorted(pairs, title_pairs)] += title_weight * title_counts
    return pairs, weights


class PorterLayer:
    """Stemmed-term BM25; chunks holding every query term, filled up from any term."""

    name = "porter"

    def __init__(
        self, chunks: Sequence[Chunk], *, k1: float, b: float, k3: float, title_weight: float
    ) -> None:
        self.k3 = k3
        words = TokenIds()
        token_ids = RawWords(words)
        self.term_ids: dict[str, int] = {}
        term_of_word = np.empty(0, dtype=np.int64)
        frequency = np.empty(0, dtype=np.int64)
        blocks = []
        lengths = [np.empty(0, dtype=np.float64)]
        # A block of chunks at a time: every per-token column stays a block's size.
        for first in range(0, len(chunks), BLOCK_DOCS):
            part = chunks[first : first + BLOCK_DOCS]
            body_words, body_docs = token_stream([chunk.text for chunk in part], token_ids)
            title_words, title_docs = token_stream([chunk.title for chunk in part], token_ids)
            # Each distinct word is stemmed once, not each token: stemming is the slow part.
            new_terms = [self.term_of(word) for word in words.tokens[len(term_of_word) :]]
            term_of_word = np.append(term_of_word, np.asarray(new_terms, dtype=np.int64))
            word_pairs, _ = counted(
                np.concatenate((body_words, title_words)) * len(part)
                + np.concatenate((body_docs, title_docs))
            )
            frequency = np.append(frequency, np.zeros(len(words) - len(frequency), dtype=np.int64))
            frequency += np.bincount(word_pairs // len(part), minlength=len(words))
            body_terms = term_of_word[body_words]
            title_terms = term_of_word[title_words]
            pairs, weights = weighted_pairs(
                (body_terms, body_docs), (title_terms, title_docs), title_weight, len(part)
            )
            blocks.append(block_of(first, pairs // len(part), pairs % len(part), weights))
            # Lengths weigh title tokens as the frequencies do: the title counted title_weight times.
            body_lengths = np.bincount(body_docs[body_terms != UNKNOWN_TERM], minlength=len(part))
            title_lengths = np.bincount(
                title_docs[title_terms != UNKNOWN_TERM], minlength=len(part)
            )
            lengths.append(body_lengths + title_weight * title_lengths)
        # Surface words and their document frequency: the vocabulary fuzzy correction uses.
        self.word_frequency: dict[str, int] = dict(zip(words, frequency.tolist(), strict=True))
        # Tokens seen only as a part of an identifier (`cert` of DB_SSL_CERT), never as a
        # word of their own: fuzzy correction is wary of them.
        starts, ends, tokens = token_ids.tables()
        whole = set(tokens[starts[ends > starts]].tolist())
        self.identifier_parts = frozenset(word for word, id_ in words.items() if id_ not in whole)
        # The term of every indexed word, so a query of known words needs no stemmer:
        # importing nltk is slow, and an index from the cache then answers without it.
        self.word_terms: dict[str, int] = {
            word: term
            for word, term in zip(words, term_of_word.tolist(), strict=True)
            if term != UNKNOWN_TERM
        }
        terms, offsets, docs, rows = merged(blocks, len(chunks))
        # Every term has a posting (it is the stem of a word some chunk holds): row i is term i.
        assert np.array_equal(terms, np.arange(len(self.term_ids))), "a term without postings"
        self.index = PostingIndex.grouped(docs, rows, offsets, np.concatenate(lengths), k1=k1, b=b)

    def term_of(self, word: str) -> int:
        """A new word's term id (a new one for a new stem), UNKNOWN_TERM for a stopword."""
        if word in STOPWORDS:
            return UNKNOWN_TERM
        return self.term_ids.setdefault(stem(word), len(self.term_ids))

    @classmethod
    def stored(
        cls,
        word_frequency: dict[str, int],
        identifier_parts: frozenset[str],
        term_ids: dict[str, int],
        word_terms: dict[str, int],
        index: PostingIndex,
        *,
        k3: float,
    ) -> PorterLayer:
        """The layer made again from what a build left (see `engine.snapshot`)."""
        layer = cls.__new__(cls)
        layer.k3 = k3
        layer.word_frequency = word_frequency
        layer.identifier_parts = identifier_parts
        layer.term_ids = term_ids
        layer.word_terms = word_terms
        layer.index = index
        return layer

    def term_id(self, token: str) -> int:
        """The term of a query token: looked up for an indexed word, else stemmed."""
        if token in self.word_terms:
            return self.word_terms[token]
        return self.term_ids.get(stem(token), UNKNOWN_TERM)

    def knows(self, word: str) -> bool:
        """True when the folded word, or its stem, occurs in some chunk."""
        return word in self.word_frequency or stem(word) in self.term_ids

    def search(self, query: str, visible: Mask, depth: int, *, fill_below: int) -> LayerRanking:
        """Ranked visible doc ids: those holding every query term; when fewer than
        `fill_below` do, the rest of `depth` from those holding any.

        A query term repeated in the query weighs more (Robertson's k3 component):
        a long request names what it is about more than once.
        """
        counts = Counter(self.term_id(token) for token in query_tokens(query))
        terms = list(counts)
        weights = [query_term_weight(counts[term], self.k3) for term in terms]
        every = self.index.docs_with_all(terms)
        every = every[visible[every]]
        every_scores = self.index.scores(terms, every, weights)
        best = top_positions(every, every_scores, depth)
        ranked, ranked_scores = every[best], every_scores[best]
        if len(ranked) >= fill_below:
            return LayerRanking(ranked, len(ranked), ranked_scores)
        # Too few hold every term to fill the result list (one distractor can): the
        # any-term ranking fills it, so the other relevant chunks still reach the list.
        wanted = visible.copy()
        wanted[every] = False
        rest = self.index.docs_with_any(terms)
        rest = rest[wanted[rest]]
        rest_scores = self.index.scores(terms, rest, weights)
        fill = top_positions(rest, rest_scores, depth - len(ranked))
        return LayerRanking(
            np.concatenate((ranked, rest[fill])),
            len(ranked),
            np.concatenate((ranked_scores, rest_scores[fill])),
        )
