"""The chunks' words settle which chunks hold a query word, exactly as their text would."""

from __future__ import annotations

import re
from random import Random
from typing import cast

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_qualbench.engine import split
from pytest_qualbench.engine.analysis import haystack
from pytest_qualbench.engine.chunk_words import CHUNK_DENSE_SHARE, ChunkWords, chunk_words
from pytest_qualbench.engine.kernel import walks
from pytest_qualbench.engine.segmented_ids import SegmentedIds, Walked
from pytest_qualbench.engine.split import split_chunks
from pytest_qualbench.engine.trigram import TrigramLayer
from pytest_qualbench.engine.trigram_postings import trigram_keys
from pytest_qualbench.engine.types import Chunk

# ASCII word and non-word characters, and characters folding changes: a dotted capital I
# (folds to "i" and a combining dot, no word character), ß (to "ss"), a ligature (to
# "fi"), CJK (one raw word a character, one folded word a run).
ALPHABET = "aB_9 .-\n\u0130\u00df\ufb01\u4e2d\u6587"


def chunk(text: str, title: str = "", position: int = 0) -> Chunk:
    return Chunk(text, title, "s", "durable", position)


def built(chunks: list[Chunk]) -> ChunkWords:
    return chunk_words(chunks, split_chunks(chunks))


def words_of(*texts: str) -> ChunkWords:
    return built([chunk(text, position=number) for number, text in enumerate(texts)])


def layer(*chunks: Chunk) -> TrigramLayer:
    return TrigramLayer(chunks, split_chunks(chunks), k1=1.2, b=0.75)


def chunks_per_word(words: ChunkWords) -> dict[str, set[int]]:
    """Each word and the chunks holding it, as the built words say."""
    return {
        word: set(words.chunk_ids.ids(number).tolist()) for number, word in enumerate(words.words)
    }


def expected_chunks_per_word(chunks: list[Chunk]) -> dict[str, set[int]]:
    """Each word and the chunks holding it: the maximal `\\w` runs of each chunk's haystack."""
    found: dict[str, set[int]] = {}
    for number, each in enumerate(chunks):
        for word in re.findall(r"\w+", haystack(each)):
            found.setdefault(word, set()).add(number)
    return found


def holding(words: ChunkWords, word: str) -> list[int]:
    held: list[int] = words.holding([word], np.ones(words.chunk_count, dtype=bool)).every.tolist()
    return held


def words_first(words: ChunkWords, query: list[str], docs: list[int]) -> list[int]:
    """The ranking `docs`, those holding every word of `query` as a word of their own first."""
    own = words.holding(query, np.ones(words.chunk_count, dtype=bool)).own
    ranked = np.array(docs, dtype=np.int64)
    moved, scores = words.words_first(own, ranked, -ranked.astype(np.float64))
    # Each doc keeps its score.
    assert scores.tolist() == (-moved.astype(np.float64)).tolist()
    kept: list[int] = moved.tolist()
    return kept


def test_holding_every_word_then_any_among_the_visible() -> None:
    words = words_of("cache pool", "cachel", "pool", "poolcache", "other")
    shown = np.ones(5, dtype=bool)
    held = words.holding(["cache", "pool"], shown)
    # Chunk 3's one word holds both; no list of the any-word fallback when some hold all.
    assert (held.every.tolist(), held.any.tolist()) == ([0, 3], [])
    # Each query word's own id: "cache" is word 0, "pool" word 1.
    assert held.own == (0, 1)
    shown[3] = False
    assert words.holding(["cache", "pool"], shown).every.tolist() == [0]
    held = words.holding(["cachel", "pool"], shown)
    assert (held.every.tolist(), held.any.tolist()) == ([], [0, 1, 2])
    held = words.holding(["zzz", "oolcach"], shown)
    assert (held.every.tolist(), held.any.tolist(), held.own) == ([], [], (-1, -1))


def test_words_first_moves_chunks_holding_each_word_of_their_own_up() -> None:
    words = words_of("poolcache pool", "cache pool", "cache_pool", "pool", "Cache POOL.")
    # "cache_pool" is one word (`\w` holds the underscore); case folds away. Chunks 1 and
    # 4 hold both words as words, in the ranking's order; the rest follow in theirs.
    assert words_first(words, ["cache", "pool"], [2, 4, 0, 1]) == [4, 1, 2, 0]
    assert words_first(words, ["pool"], [2, 0, 3]) == [0, 3, 2]
    # A word no chunk holds as a word of its own ("poolcach" only inside "poolcache"):
    # the ranking stays as it is.
    assert words_first(words, ["poolcach"], [2, 0]) == [2, 0]
    assert words_first(words, ["poolcache", "cache"], [1, 0]) == [1, 0]


def test_words_are_numbered_by_first_sight_with_ascending_chunks() -> None:
    words = words_of("b a", "a c a", "c")
    assert list(words.words) == ["b", "a", "c"]
    assert [words.chunk_ids.ids(word).tolist() for word in range(3)] == [[0], [0, 1], [1, 2]]
    assert words.chunk_ids.local.dtype == np.uint16


def test_a_query_word_inside_a_compound_is_found_through_the_compound() -> None:
    words = words_of("poolcachelo x", "cache", "cach ache")
    assert words.containing("cache").tolist() == [0, 2]
    assert holding(words, "cache") == [0, 1]
    # Every trigram of "cachel" is in chunk 2's words, but not the word itself.
    assert holding(words, "cachel") == [0]
    assert words.containing("zzz").tolist() == []


def test_an_ascii_chunks_words_are_its_raw_words_lowercased() -> None:
    chunks = [chunk("Foo foo_Bar, FOO", title="Bar"), chunk("bar x9", title="foo_bar")]
    assert chunks_per_word(built(chunks)) == {
        "foo": {0},
        "foo_bar": {0, 1},
        "bar": {0, 1},
        "x9": {1},
    }


def test_other_chunks_words_are_their_folded_haystacks_runs() -> None:
    chunks = [
        chunk("İstanbul Straße", title="ﬁle"),
        chunk("東京 tokyo abc中"),
        chunk("Tokyo file", title="ABC"),
    ]
    # The dotted capital I folds to "i" and a combining dot, which splits the word; the
    # raw words split CJK text by character, the haystack's words do not.
    assert chunks_per_word(built(chunks)) == {
        "file": {0, 2},
        "i": {0},
        "stanbul": {0},
        "strasse": {0},
        "東京": {1},
        "tokyo": {1, 2},
        "abc中": {1},
        "abc": {2},
    }


@pytest.mark.parametrize("block_docs", [1, 2, 1024])
def test_mixed_chunks_have_their_haystacks_words_in_any_blocks(
    monkeypatch: pytest.MonkeyPatch, block_docs: int
) -> None:
    monkeypatch.setattr(split, "BLOCK_DOCS", block_docs)
    chunks = [
        chunk("Straße STRASSE", title="Weg"),
        chunk("strasse weg", title="WEG"),
        chunk("ﬁx fix", title="Fix"),
        chunk("İi", title="I"),
    ]
    # "İi" folds to "i", a combining dot and "i": the word "i" twice, no "ii".
    assert chunks_per_word(built(chunks)) == {
        "weg": {0, 1},
        "strasse": {0, 1},
        "fix": {2},
        "i": {3},
    }


@given(
    st.lists(st.tuples(st.text(ALPHABET, max_size=12), st.text(ALPHABET, max_size=5)), max_size=6)
)
def test_the_words_are_the_haystacks_runs(fields: list[tuple[str, str]]) -> None:
    chunks = [chunk(text, title, number) for number, (text, title) in enumerate(fields)]
    assert chunks_per_word(built(chunks)) == expected_chunks_per_word(chunks)


def test_the_title_counts_but_no_word_spans_the_title_and_the_text() -> None:
    trigram = layer(chunk("gamma", title="alphabet"), chunk("beta alpha"))
    assert holding(trigram.words, "alpha") == [0, 1]
    assert holding(trigram.words, "betgam") == []
    assert trigram.search("alphabet", np.ones(2, dtype=bool), 10).docs.tolist() == [0]
    # haystack joins the title and the text with a newline, which no word holds.
    assert not trigram.knows("alphabetgamma")


def test_folding_and_cjk_match_as_the_folded_text_does() -> None:
    trigram = layer(chunk("Straße und ﬁnden"), chunk("東京都の天気"))
    assert trigram.knows("strasse")
    assert trigram.knows("finden")
    assert trigram.knows("京都の")
    assert not trigram.knows("京都天")
    assert trigram.search("STRASSE", np.ones(2, dtype=bool), 10).docs.tolist() == [0]


def test_only_visible_chunks_are_ranked_and_every_word_comes_before_any() -> None:
    trigram = layer(chunk("needle thread"), chunk("needle"), chunk("thread"))
    everything = np.ones(3, dtype=bool)
    assert trigram.search("needle thread", everything, 10).docs.tolist() == [0]
    hidden_first = np.array([False, True, True])
    ranking = trigram.search("needle thread", hidden_first, 10)
    assert ranking.matched_in_full == 0
    assert sorted(ranking.docs.tolist()) == [1, 2]


@given(
    st.lists(st.text("ab cB\u0130\u00df\u4e2d", max_size=12), min_size=1, max_size=6),
    st.text("abc", min_size=3),
)
def test_holding_equals_a_substring_of_the_haystack(texts: list[str], word: str) -> None:
    chunks = [chunk(text, title=text[:3], position=number) for number, text in enumerate(texts)]
    trigram = layer(*chunks)
    expected = [number for number, each in enumerate(chunks) if word in haystack(each)]
    assert holding(trigram.words, word) == expected
    assert trigram.knows(word) == bool(expected)


@given(
    st.lists(st.text("ab cB\u0130\u00df\u4e2d_", max_size=12), min_size=1, max_size=6),
    st.lists(st.text("abc", min_size=3, max_size=4), min_size=1, max_size=3),
    st.randoms(use_true_random=False),
)
def test_words_first_moves_the_chunks_whose_runs_hold_every_word(
    texts: list[str], query: list[str], random: Random
) -> None:
    chunks = [chunk(text, title=text[:3], position=number) for number, text in enumerate(texts)]
    words = built(chunks)
    ranking = list(range(len(chunks)))
    random.shuffle(ranking)
    distinct = list(dict.fromkeys(query))
    runs = [set(re.findall(r"\w+", haystack(each))) for each in chunks]
    whole = [doc for doc in ranking if set(distinct) <= runs[doc]]
    expected = [*whole, *(doc for doc in ranking if doc not in whole)]
    assert words_first(words, distinct, ranking) == expected


def stored_arrays(words: ChunkWords) -> dict[str, np.ndarray]:
    return {name: array.copy() for name, array in words.arrays().items()}


def test_stored_takes_back_what_a_build_gave() -> None:
    words = words_of("alpha beta", "beta gamma")
    again = ChunkWords.stored(words.words, stored_arrays(words), 2)
    assert holding(again, "eta") == [0, 1]


@pytest.mark.parametrize(
    ("name", "damage", "message"),
    [
        ("chunk_local_ids", lambda array: array.astype(np.int32), "posting ids have the wrong"),
        ("chunk_local_ids", lambda array: array[::-1].copy(), "posting ids are not ascending"),
        ("chunk_local_ids", lambda array: array + 5, "posting ids out of range"),
        ("chunk_id_bounds", lambda array: array[:-1], "posting bounds do not span"),
        ("chunk_id_bounds", lambda array: np.array([0, 4, 2, 5, 6]), "posting bounds do not"),
        ("chunk_dense_at", lambda array: array[:-1], "dense sets have the wrong shape"),
        ("keys", lambda array: array[::-1].copy(), "word trigram keys are not ascending"),
        ("keys", lambda array: array.astype(np.int32), "word trigram keys have the wrong"),
        ("keys", lambda array: array - array.max() - 1, "word trigram keys have the wrong"),
        ("word_id_bounds", lambda array: array[1:], "posting bounds do not span"),
        ("word_id_bounds", lambda array: array[:-1], "posting"),
        ("word_local_ids", lambda array: array + 4, "posting ids out of range"),
        ("word_local_ids", lambda array: array.reshape(1, -1), "posting ids have the wrong"),
        ("word_local_ids", lambda array: array.astype(np.int32), "posting ids have the wrong"),
    ],
)
def test_stored_refuses_arrays_that_cannot_be_the_words(
    name: str, damage: object, message: str
) -> None:
    # Four words in two chunks: "alpha" and "beta" in both.
    words = words_of("alpha beta", "beta alpha delta gamma")
    arrays = stored_arrays(words)
    assert callable(damage)
    arrays[name] = damage(arrays[name])
    with pytest.raises(ValueError, match=message):
        ChunkWords.stored(words.words, arrays, 2)


def test_stored_refuses_chunk_postings_of_other_words() -> None:
    words = words_of("alpha beta", "beta alpha delta gamma")
    with pytest.raises(ValueError, match="chunk word postings do not match the words"):
        ChunkWords.stored(words.words[:3], stored_arrays(words), 2)


def test_stored_refuses_a_word_trigram_posting_going_back() -> None:
    # "alpha" (word 0) and "alphabet" (word 1) share "alp": its posting is [0, 1].
    words = words_of("alpha alphabet")
    arrays = stored_arrays(words)
    start, end = words.word_ids.span(int(np.searchsorted(words.keys, trigram_keys("alp")[0])))
    assert arrays["word_local_ids"][start:end].tolist() == [0, 1]
    arrays["word_local_ids"][start:end] = [1, 0]
    with pytest.raises(ValueError, match="posting ids are not ascending"):
        ChunkWords.stored(words.words, arrays, 1)


def segmented(word_chunks: list[np.ndarray], chunk_count: int) -> Walked:
    """Each word's chunks as `ChunkWords.chunk_ids` holds them, as the walks take them."""
    offsets = np.concatenate(([0], np.cumsum([len(chunks) for chunks in word_chunks])))
    return SegmentedIds.of(offsets, np.concatenate(word_chunks), chunk_count).walked()


@settings(max_examples=100, deadline=None)
@given(
    chunk_count=st.sampled_from([1, 40, 64, 65, 400, 3000, 70_000]),
    seed=st.integers(0, 2**32 - 1),
    group_sizes=st.lists(st.integers(0, 4), min_size=1, max_size=4),
    densities=st.lists(st.sampled_from([0.002, 0.01, 0.2, 0.7]), min_size=12, max_size=12),
)
def test_chunks_holding_is_the_set_of_chunks_it_stands_for(
    chunk_count: int, seed: int, group_sizes: list[int], densities: list[float]
) -> None:
    # Few or many chunks hold every group, with some hidden; a word's chunks may repeat
    # across the words of one group. 64 and 65 chunks end a set's word, or just past one;
    # 70,000 span two id segments. A word in a sixteenth of the chunks or more has a bit
    # set (`dense_sets`); a sparse word's long posting is searched for a sparse group's
    # chunks, not walked.
    rng = np.random.default_rng(seed)
    word_chunks = [
        np.flatnonzero(rng.random(chunk_count) < density).astype(np.int32) for density in densities
    ]
    visible = rng.random(chunk_count) < 0.8
    groups = [rng.choice(12, size, replace=False).tolist() for size in group_sizes]
    every, any_ = walks.chunks_holding(
        *segmented(word_chunks, chunk_count),
        np.array([word for group in groups for word in group], dtype=np.int64),
        np.cumsum(group_sizes, dtype=np.int64),
        visible,
    )
    holders = [{int(c) for word in group for c in word_chunks[word]} for group in groups]
    shown = set(np.flatnonzero(visible).tolist())
    expected_every = sorted(shown.intersection(*holders))
    expected_any = [] if expected_every else sorted(shown.intersection(set().union(*holders)))
    assert np.frombuffer(every, dtype=np.int64).tolist() == expected_every
    assert np.frombuffer(any_, dtype=np.int64).tolist() == expected_any


@settings(max_examples=100, deadline=None)
@given(
    chunk_count=st.sampled_from([1, 40, 65, 3000, 70_000]),
    seed=st.integers(0, 2**32 - 1),
    words=st.lists(st.integers(0, 5), max_size=4),
    densities=st.lists(st.sampled_from([0.002, 0.05, 0.5, 1.0]), min_size=6, max_size=6),
    ranked=st.integers(0, 100),
)
def test_words_first_is_a_stable_partition_by_every_words_chunks(
    chunk_count: int, seed: int, words: list[int], densities: list[float], ranked: int
) -> None:
    rng = np.random.default_rng(seed)
    word_chunks = [
        np.flatnonzero(rng.random(chunk_count) < density).astype(np.int32) for density in densities
    ]
    docs = rng.permutation(chunk_count)[:ranked].astype(np.int64)
    scores = rng.random(len(docs))
    moved, moved_scores = walks.words_first(
        *segmented(word_chunks, chunk_count),
        np.array(words, dtype=np.int64),
        docs,
        scores,
    )
    held = [set(word_chunks[word].tolist()) for word in words]
    first = [at for at, doc in enumerate(docs.tolist()) if all(doc in each for each in held)]
    order = [*first, *(at for at in range(len(docs)) if at not in first)]
    assert np.frombuffer(moved, dtype=np.int64).tolist() == docs[order].tolist()
    assert np.frombuffer(moved_scores, dtype=np.float64).tolist() == scores[order].tolist()


def test_words_first_refuses_words_and_docs_out_of_range_and_scores_of_another_length() -> None:
    # Word 0 is in chunks 0 and 2, word 1 in chunk 1.
    postings = segmented([np.array([0, 2]), np.array([1])], 3)
    docs = np.array([1, 2, 0], dtype=np.int64)
    scores = np.array([3.0, 2.0, 1.0])
    moved, _ = walks.words_first(*postings, np.array([0]), docs, scores)
    assert np.frombuffer(moved, dtype=np.int64).tolist() == [2, 0, 1]
    for word in (2, -1):
        with pytest.raises(ValueError, match=r"posting key -?[0-9]+ out of range"):
            walks.words_first(*postings, np.array([word]), docs, scores)
    past_the_ids = (postings[0], np.array([0, 2, 4], dtype=np.int64), *postings[2:])
    with pytest.raises(ValueError, match="id bounds out of range"):
        walks.words_first(*past_the_ids, np.array([1]), docs, scores)
    for doc in (-1, 1 << 16):
        with pytest.raises(ValueError, match="doc id is out of range"):
            walks.words_first(*postings, np.array([0]), np.array([doc]), scores[:1])
    with pytest.raises(ValueError, match="scores differ"):
        walks.words_first(*postings, np.array([0]), docs, scores[:2])


def test_words_containing_refuses_word_ids_past_the_words_and_words_not_str() -> None:
    words = words_of("cabca", "xabcabx")
    index = (words.keys, *words.word_ids.walked())
    # "cabca" holds every trigram of "abcab" but not the word: only word 1 is kept, and
    # no word is "abcab" itself.
    found, own = walks.words_containing(*index, words.words, "abcab", 32)
    assert (np.frombuffer(found, dtype=np.int64).tolist(), own) == ([1], -1)
    found, own = walks.words_containing(*index, words.words, "cabca", 32)
    assert (np.frombuffer(found, dtype=np.int64).tolist(), own) == ([0], 0)
    with pytest.raises(ValueError, match="word id is out of range"):
        walks.words_containing(*index, words.words[:1], "abcab", 32)
    not_str = cast(list[str], [b"cabca", b"xabcabx"])
    with pytest.raises(TypeError, match="must be str"):
        walks.words_containing(*index, not_str, "abcab", 32)


def test_a_word_in_a_sixty_fourth_of_the_chunks_has_a_bit_set() -> None:
    # Of 128 chunks, "held" is in 2 (1/64) and "rare" in 1.
    words = words_of("held rare", "held", *(f"w{number}" for number in range(126)))
    dense_at = words.chunk_ids.dense.at.tolist()
    assert CHUNK_DENSE_SHARE == 64
    assert (dense_at[words.words.index("held")] >= 0, dense_at[words.words.index("rare")]) == (
        True,
        -1,
    )
    assert holding(words, "held") == [0, 1]
