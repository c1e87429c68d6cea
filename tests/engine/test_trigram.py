"""The trigram layer matches whole query words as substrings, never mere shared trigrams."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from pytest_qualbench.engine.arrays import DocIds
from pytest_qualbench.engine.split import split_chunks
from pytest_qualbench.engine.trigram import TrigramLayer
from pytest_qualbench.engine.trigram_postings import trigram_keys
from pytest_qualbench.engine.types import Chunk

EVERY_DOC = np.ones(3, dtype=bool)


def layer(*texts: str) -> TrigramLayer:
    chunks = [Chunk(text, "", "s", "durable", position) for position, text in enumerate(texts)]
    return TrigramLayer(chunks, split_chunks(chunks), k1=1.2, b=0.75)


def test_trigram_keys_pack_three_code_points() -> None:
    assert trigram_keys("abcd").tolist() == [
        (ord("a") << 42) | (ord("b") << 21) | ord("c"),
        (ord("b") << 42) | (ord("c") << 21) | ord("d"),
    ]
    assert trigram_keys("ab").tolist() == []


def test_shared_trigrams_without_the_whole_word_do_not_match() -> None:
    trigram = layer("xabc bcdx", "the abcd word", "unrelated")
    assert trigram.search("abcd", EVERY_DOC, 10).docs.tolist() == [1]
    assert trigram.knows("abcd")
    assert not trigram.knows("bcdxa")


def test_all_words_first_then_any_word() -> None:
    trigram = layer("alpha beta", "alpha only", "beta only")
    assert trigram.search("ALPHA beta", EVERY_DOC, 10).docs.tolist() == [0]
    assert sorted(trigram.search("alpha gamma", EVERY_DOC, 10).docs.tolist()) == [0, 1]


def test_chunks_holding_the_words_as_words_rank_first() -> None:
    # Doc 2 holds "cache" four times over, but only inside longer words: by BM25 over the
    # trigrams it is the best, yet the chunks holding "cache" itself come first.
    trigram = layer("cache", "the cache here", "poolcache cachemap lrucache cacheline")
    assert trigram.index.scores(term_ids_of(trigram, ["cache"]), np.array([2])).tolist() > [
        trigram.index.scores(term_ids_of(trigram, ["cache"]), np.array([1])).tolist()[0]
    ]
    ranking = trigram.search("cache", EVERY_DOC, 10)
    assert ranking.docs.tolist() == [0, 1, 2]
    assert ranking.matched_in_full == 3
    # The best `depth` by BM25 are re-ranked: at depth 2 those are docs 2 and 0.
    assert trigram.search("cache", EVERY_DOC, 2).docs.tolist() == [0, 2]


def test_words_under_three_characters_are_ignored() -> None:
    assert layer("ab cd", "x", "y").search("ab cd", EVERY_DOC, 10).docs.tolist() == []


def test_invisible_docs_are_never_candidates() -> None:
    visible = np.array([False, True, True])
    assert layer("needle", "needle", "hay").search("needle", visible, 10).docs.tolist() == [1]


def test_any_word_fallback_stops_at_depth_with_the_best_docs() -> None:
    # "abcd" shares every trigram with docs 0 and 2 but is a substring of neither.
    trigram = layer("abc bcd", "zzz abcd", "bcd abc abc", "abcd abcd zzz")
    assert trigram.search("abcd qqqq", np.ones(4, dtype=bool), 10).docs.tolist() == [3, 1]
    assert trigram.search("abcd qqqq", np.ones(4, dtype=bool), 1).docs.tolist() == [3]


def term_ids_of(trigram: TrigramLayer, words: list[str]) -> list[int]:
    return list(dict.fromkeys(term for word in words for term in trigram.term_ids(word)))


def ranked_by_checking_every_doc(
    trigram: TrigramLayer, texts: list[str], words: list[str], match: Callable[..., bool]
) -> DocIds:
    """The reference: every doc whose text holds all (or any) of the words, ranked by BM25."""
    holding = np.array(
        [doc for doc, text in enumerate(texts) if match(word in text for word in words)],
        dtype=np.int64,
    )
    terms = term_ids_of(trigram, words)
    scores = trigram.index.scores(terms, holding)
    ranked: DocIds = holding[np.lexsort((holding, -scores))]
    return ranked


def words_first(ranked: list[int], texts: list[str], words: list[str]) -> list[int]:
    """The ranking, the docs holding every word as a word of their own moved first."""
    whole = [doc for doc in ranked if set(words) <= set(re.findall(r"\w+", texts[doc]))]
    return [*whole, *(doc for doc in ranked if doc not in whole)]


@given(
    st.lists(st.text("abcd ", max_size=14), min_size=1, max_size=8),
    st.lists(st.text("abcd", min_size=3, max_size=5), min_size=1, max_size=3),
    st.integers(1, 4),
)
def test_any_word_fallback_equals_checking_every_candidate(
    texts: list[str], words: list[str], depth: int
) -> None:
    trigram = layer(*texts)
    visible = np.ones(len(texts), dtype=bool)
    # No text holds "zzz", so no text holds every word: the ranking is the any-word one.
    distinct = trigram.query_words(" ".join([*words, "zzz"]))
    expected = ranked_by_checking_every_doc(trigram, texts, distinct, any)
    ranking = trigram.search(" ".join(distinct), visible, depth)
    assert ranking.matched_in_full == 0
    assert ranking.docs.tolist() == expected[:depth].tolist()
    terms = term_ids_of(trigram, distinct)
    ascending = np.argsort(ranking.docs)
    scored = trigram.index.scores(terms, ranking.docs[ascending])
    assert ranking.scores[ascending].tolist() == scored.tolist()


@given(
    st.lists(st.text("abc ", max_size=24), min_size=1, max_size=30),
    st.lists(st.text("abc", min_size=3, max_size=5), min_size=1, max_size=3),
    st.integers(1, 12),
)
def test_search_equals_checking_every_doc_then_ranking(
    texts: list[str], words: list[str], depth: int
) -> None:
    # Three letters make many candidates and many tied scores.
    trigram = layer(*texts)
    visible = np.ones(len(texts), dtype=bool)
    query = " ".join(words)
    distinct = trigram.query_words(query)
    every = ranked_by_checking_every_doc(trigram, texts, distinct, all)
    if len(every):
        # The best `depth`, those holding the words as words first.
        expected = words_first(every[:depth].tolist(), texts, distinct)
    else:
        expected = ranked_by_checking_every_doc(trigram, texts, distinct, any)[:depth].tolist()
    ranking = trigram.search(query, visible, depth)
    assert ranking.docs.tolist() == expected
    # Each doc's score is its BM25 over the query's trigrams, as fusion weighs it.
    terms = list(dict.fromkeys(term for word in distinct for term in trigram.term_ids(word)))
    ascending = np.argsort(ranking.docs)
    scored = trigram.index.scores(terms, ranking.docs[ascending])
    assert ranking.scores[ascending].tolist() == scored.tolist()


@given(st.text("ab\u00e9\U0001f600", max_size=9))
def test_term_ids_are_the_words_distinct_trigram_keys_looked_up(word: str) -> None:
    trigram = layer("ab\u00e9ab \U0001f600ab", "bab aab", "")
    keys = np.unique(trigram_keys(word)).tolist()
    known = trigram.keys.tolist()
    expected = [known.index(key) if key in known else -1 for key in keys]
    assert trigram.term_ids(word) == expected
