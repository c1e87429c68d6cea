"""The trigram layer matches whole query words as substrings, never mere shared trigrams."""

from __future__ import annotations

import numpy as np

from pytest_qualbench.engine.trigram import TrigramLayer, trigram_keys
from pytest_qualbench.engine.types import Chunk

EVERY_DOC = np.ones(3, dtype=bool)


def layer(*texts: str) -> TrigramLayer:
    chunks = [Chunk(text, "", "s", "durable", position) for position, text in enumerate(texts)]
    return TrigramLayer(chunks, k1=1.2, b=0.75)


def test_trigram_keys_pack_three_code_points() -> None:
    assert trigram_keys("abcd").tolist() == [
        (ord("a") << 42) | (ord("b") << 21) | ord("c"),
        (ord("b") << 42) | (ord("c") << 21) | ord("d"),
    ]
    assert trigram_keys("ab").tolist() == []


def test_shared_trigrams_without_the_whole_word_do_not_match() -> None:
    trigram = layer("xabc bcdx", "the abcd word", "unrelated")
    assert trigram.search("abcd", EVERY_DOC, 10).tolist() == [1]
    assert trigram.knows("abcd")
    assert not trigram.knows("bcdxa")


def test_all_words_first_then_any_word() -> None:
    trigram = layer("alpha beta", "alpha only", "beta only")
    assert trigram.search("ALPHA beta", EVERY_DOC, 10).tolist() == [0]
    assert sorted(trigram.search("alpha gamma", EVERY_DOC, 10).tolist()) == [0, 1]


def test_words_under_three_characters_are_ignored() -> None:
    assert layer("ab cd", "x", "y").search("ab cd", EVERY_DOC, 10).tolist() == []


def test_invisible_docs_are_never_candidates() -> None:
    visible = np.array([False, True, True])
    assert layer("needle", "needle", "hay").search("needle", visible, 10).tolist() == [1]
