"""Blockwise trigram postings equal the plain construction: one np.unique per text, then grouping."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_qualbench.engine.analysis import haystack
from pytest_qualbench.engine.block_postings import block_of, merged_segmented
from pytest_qualbench.engine.segmented_ids import SEGMENT_DOCS
from pytest_qualbench.engine.trigram_postings import trigram_blocks, trigram_keys, trigram_postings
from pytest_qualbench.engine.types import Chunk

# ASCII, underscore, digits, accents (precomposed and combining), ß, a ligature, CJK,
# hangul, a lone surrogate, punctuation and whitespace.
ALPHABET = "ab_1 \n.-éÉ\u0301ßﬁ中文字한\ud800\x00"
WORD = re.compile(r"\w")


def plain_postings(texts: list[str], word_only: bool) -> dict[int, list[tuple[int, int]]]:
    """Trigram key -> [(text, count)], texts ascending: what the old build stored."""
    postings: dict[int, list[tuple[int, int]]] = {}
    for doc, text in enumerate(texts):
        keys, counts = np.unique(trigram_keys(text), return_counts=True)
        for key, count in zip(keys.tolist(), counts.tolist(), strict=True):
            chars = [chr((key >> shift) & 0x1FFFFF) for shift in (42, 21, 0)]
            if not word_only or all(WORD.match(char) for char in chars):
                postings.setdefault(key, []).append((doc, count))
    return dict(sorted(postings.items()))


def built_postings(
    texts: list[str], word_only: bool, block_texts: int, block_chars: int
) -> dict[int, list[tuple[int, int]]]:
    built = trigram_postings(
        texts, word_only=word_only, block_texts=block_texts, block_chars=block_chars
    )
    assert np.all(built.keys[1:] > built.keys[:-1])
    assert built.windows == [max(len(text) - 2, 0) for text in texts]
    assert built.ids.local.dtype == np.uint16
    assert built.ids.size == len(texts)
    postings = {}
    for term, key in enumerate(built.keys.tolist()):
        start, end = built.ids.span(term)
        counts = built.counts[start:end].tolist()
        postings[key] = list(zip(built.ids.ids(term).tolist(), counts, strict=True))
    return postings


@settings(max_examples=300)
@given(
    st.lists(st.text(ALPHABET, max_size=30), max_size=12),
    st.booleans(),
    st.integers(1, 5),
    st.integers(1, 40),
)
def test_blockwise_postings_equal_the_plain_ones(
    texts: list[str], word_only: bool, block_texts: int, block_chars: int
) -> None:
    assert built_postings(texts, word_only, block_texts, block_chars) == plain_postings(
        texts, word_only
    )


def test_word_only_keeps_exactly_the_trigrams_of_word_characters() -> None:
    text = haystack(Chunk("Ünïcode_id x=1 ﬁle 中文字 snake_case", "Title", "s", "durable", 0))
    kept = built_postings([text], True, 1024, 1 << 21)
    assert {chr(key >> 42) + chr((key >> 21) & 0x1FFFFF) + chr(key & 0x1FFFFF) for key in kept} == {
        word[start : start + 3]
        for word in re.findall(r"\w+", text)
        for start in range(len(word) - 2)
    }


def test_counts_above_a_byte_survive() -> None:
    texts = ["aaa" * 200, "b", "aaab"]
    assert built_postings(texts, True, 2, 1 << 21) == plain_postings(texts, True)


def test_a_block_whose_packed_values_could_overflow_is_split() -> None:
    # 300,000 distinct code points in one block of 1024 texts: 300000**3 * 1024 > 2**63, and the
    # wrap-around loses information once the trigram part passes 54 bits.
    wide = "".join(chr(point) for point in range(0x20000, 0x20000 + 300_000))
    texts = [wide, *(["abcd"] * 1023)]
    assert built_postings(texts, False, 1024, 1 << 21) == plain_postings(texts, False)


def test_a_block_past_the_int32_range_packs_as_int64() -> None:
    # 2,000 distinct code points in a block of 3 texts: 2000**3 * 3 > 2**31, far below 2**63.
    wide = "".join(chr(point) for point in range(0x4E00, 0x4E00 + 2000))
    texts = [wide, wide[::-1], "abcd" + wide[:5]]
    assert built_postings(texts, False, 1024, 1 << 21) == plain_postings(texts, False)


def test_an_ascii_block_of_every_ascii_character_equals_the_plain_build() -> None:
    # An ASCII block is coded by bytes.translate against all 63 word characters at once.
    every = "".join(map(chr, range(128)))
    texts = [every, every[::-1], every[::3] * 4, "Zz_9", ""]
    for word_only in (True, False):
        assert built_postings(texts, word_only, 1024, 1 << 21) == plain_postings(texts, word_only)


def test_blocks_cut_short_still_end_at_each_id_segment() -> None:
    # Blocks of 1000 texts would put texts 65000-65999 in one block across the first
    # two-byte id segment (65,536 texts); the blocks are cut there, and the ids of both
    # segments come out as the plain build's.
    texts = ["abcd" if text % 3 else "bcde" for text in range(SEGMENT_DOCS + 5_000)]
    assert built_postings(texts, False, 1000, 1 << 21) == plain_postings(texts, False)
    _, windows = trigram_blocks(texts, word_only=False, block_texts=1000)
    assert len(windows) == len(texts)


def test_merging_refuses_a_block_across_two_id_segments() -> None:
    across = block_of(
        SEGMENT_DOCS - 1,
        np.array([7, 7], dtype=np.int64),
        np.array([0, 1], dtype=np.int64),
        np.ones(2, dtype=np.uint8),
    )
    with pytest.raises(ValueError, match="spans two id segments"):
        merged_segmented([across], 2 * SEGMENT_DOCS)
