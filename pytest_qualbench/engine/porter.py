"""The porter layer: BM25 over Porter-stemmed tokens, the title field weighted."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pytest_qualbench.engine.analysis import STOPWORDS, query_tokens, stem, word_tokens
from pytest_qualbench.engine.arrays import DocIds, Floats, Mask
from pytest_qualbench.engine.block_postings import block_of, counted, merged_segmented
from pytest_qualbench.engine.bm25 import (
    UNKNOWN_TERM,
    PostingIndex,
    concatenated_ranges,
    query_term_weight,
)
from pytest_qualbench.engine.ranking import LayerRanking
from pytest_qualbench.engine.split import FieldWords, FirstSeenIds, Split


@dataclass(frozen=True)
class TokenTable:
    """The tokens (`word_tokens`) of each distinct raw word, numbered by token id: word n's
    are `tokens[starts[n]:starts[n] + sizes[n]]`, and `first[n]` is the first of them (0
    for a word without tokens, which `sizes` tells apart)."""

    starts: DocIds
    sizes: DocIds
    tokens: DocIds
    first: DocIds


def token_table(words: Sequence[str], token_ids: FirstSeenIds) -> TokenTable:
    """The tokens of each of `words`, numbered by `token_ids`."""
    tokens: list[int] = []
    ends = []
    for word in words:
        tokens.extend(token_ids[token] for token in word_tokens(word))
        ends.append(len(tokens))
    end_array = np.asarray(ends, dtype=np.int64)
    starts = np.concatenate(([0], end_array))[:-1]
    sizes = end_array - starts
    token_array = np.asarray(tokens, dtype=np.int64)
    has_tokens = sizes > 0
    first = np.zeros(len(words), dtype=np.int64)
    first[has_tokens] = token_array[starts[has_tokens]]
    return TokenTable(starts, sizes, token_array, first)


def token_stream(field: FieldWords, table: TokenTable) -> tuple[DocIds, DocIds]:
    """The token id of every token of every chunk's field, and the chunk of each.

    The pairs come in no particular order: every consumer counts them. Most words are
    one token, so every word's first token is gathered at once, and only the few words
    of several tokens (identifiers) or none (`__`) take the slower path.
    """
    numbers = field.numbers
    docs = field_docs = field.docs()
    sizes = table.sizes[numbers]
    ids = table.first[numbers]
    longer = np.flatnonzero(sizes > 1)
    if (sizes == 0).any():
        has_tokens = sizes > 0
        ids, docs = ids[has_tokens], docs[has_tokens]
    if not len(longer):
        return ids, docs
    # A longer word's tokens after its first, one run of slots after another.
    rest = sizes[longer] - 1
    slots = concatenated_ranges(table.starts[numbers[longer]] + 1, rest)
    rest_docs = np.repeat(field_docs[longer], rest)
    return np.concatenate((ids, table.tokens[slots])), np.concatenate((docs, rest_docs))


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
    # A title is a few words: its pairs are placed among the body's rather than sorted
    # with them, and the body's own places follow from where the new ones went.
    at_body = np.searchsorted(body_pairs, title_pairs)
    in_body = at_body < len(body_pairs)
    in_body[in_body] = body_pairs[at_body[in_body]] == title_pairs[in_body]
    inserted_at = at_body[~in_body]
    pairs = np.insert(body_pairs, inserted_at, title_pairs[~in_body])
    # Body pair i moves right by the title pairs inserted before it (at i or earlier).
    moved = np.cumsum(np.bincount(inserted_at, minlength=len(body_pairs) + 1))
    body_places = np.arange(len(body_pairs)) + moved[: len(body_pairs)]
    # The body count, then the weighted title count, added to 0.0 in that order.
    weights: Floats = np.zeros(len(pairs), dtype=np.float64)
    weights[body_places] += 1.0 * body_counts
    weights[np.searchsorted(pairs, title_pairs)] += title_weight * title_counts
    return pairs, weights


class PorterLayer:
    """Stemmed-term BM25; chunks holding every query term, filled up from any term."""

    name = "porter"

    def __init__(
        self, split: Split, *, k1: float, b: float, k3: float, title_weight: float
    ) -> None:
        self.k3 = k3
        words = FirstSeenIds()
        table = token_table(split.words, words)
        self.term_ids: dict[str, int] = {}
        # Each distinct word is stemmed once, not each token: stemming is the slow part.
        term_of_word = np.asarray([self.term_of(word) for word in words], dtype=np.int64)
        frequency = np.zeros(len(words), dtype=np.int64)
        blocks = []
        lengths = [np.empty(0, dtype=np.float64)]
        # A block of chunks at a time: every per-token column stays a block's size.
        for block in split.blocks:
            body_words, body_docs = token_stream(block.text, table)
            title_words, title_docs = token_stream(block.title, table)
            word_pairs, _ = counted(
                np.concatenate((body_words, title_words)) * block.size
                + np.concatenate((body_docs, title_docs))
            )
            frequency += np.bincount(word_pairs // block.size, minlength=len(words))
            body_terms = term_of_word[body_words]
            title_terms = term_of_word[title_words]
            pairs, weights = weighted_pairs(
                (body_terms, body_docs), (title_terms, title_docs), title_weight, block.size
            )
            blocks.append(block_of(block.first, pairs // block.size, pairs % block.size, weights))
            # Lengths weigh title tokens as the frequencies do: the title counted title_weight times.
            body_lengths = np.bincount(body_docs[body_terms != UNKNOWN_TERM], minlength=block.size)
            title_lengths = np.bincount(
                title_docs[title_terms != UNKNOWN_TERM], minlength=block.size
            )
            lengths.append(body_lengths + title_weight * title_lengths)
        # Surface words and their document frequency: the vocabulary fuzzy correction uses.
        self.word_frequency: dict[str, int] = dict(zip(words, frequency.tolist(), strict=True))
        # Tokens seen only as a part of an identifier (`cert` of DB_SSL_CERT), never as a
        # word of their own: fuzzy correction is wary of them.
        whole = set(table.first[table.sizes > 0].tolist())
        self.identifier_parts = frozenset(word for word, id_ in words.items() if id_ not in whole)
        # The term of every indexed word, so a query of known words needs no stemmer:
        # importing nltk is slow, and an index from the cache then answers without it.
        self.word_terms: dict[str, int] = {
            word: term
            for word, term in zip(words, term_of_word.tolist(), strict=True)
            if term != UNKNOWN_TERM
        }
        terms, ids, rows = merged_segmented(blocks, split.chunk_count)
        # Every term has a posting (it is the stem of a word some chunk holds): row i is term i.
        assert np.array_equal(terms, np.arange(len(self.term_ids))), "a term without postings"
        self.index = PostingIndex.grouped(ids, rows, np.concatenate(lengths), k1=k1, b=b)

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

        Too few holding every term would leave the results short (one distractor can):
        the any-term ranking fills them, so the other relevant chunks still reach the
        list. A query term repeated in the query weighs more (Robertson's k3
        component): a long request names what it is about more than once.
        """
        counts = Counter(self.term_id(token) for token in query_tokens(query))
        terms = list(counts)
        weights = [query_term_weight(counts[term], self.k3) for term in terms]
        docs, matched_in_full, scores = self.index.every_then_any(
            terms, visible, depth, fill_below, weights
        )
        return LayerRanking(docs, matched_in_full, scores)
