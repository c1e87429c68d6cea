"""Character-trigram postings of many texts, built a block of texts at a time.

A trigram is packed into one int64 (three code points of 21 bits each). Each
block's windows are packed once more, with a dense alphabet (the block's own
characters, or all 63 ASCII word characters for an ASCII block), into one int32
per (trigram, text) where the block's values fit (int64 where not) and sorted: one
vectorised sort per block instead of one `np.unique` per text, and no sort of the
whole corpus's rows. The blocks' rows are then scattered into one CSR layout
grouped by trigram, each trigram's texts ascending, two bytes a text number
(`block_postings.merged_segmented`); `trigram_blocks` gives the blocks themselves
to a caller that keeps the plain layout.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from pytest_qualbench.engine.arrays import DocIds, Mask, Weights
from pytest_qualbench.engine.block_postings import (
    BLOCK_DOCS,
    Block,
    block_of,
    counted,
    merged_segmented,
)
from pytest_qualbench.engine.kernel import walks
from pytest_qualbench.engine.segmented_ids import SEGMENT_DOCS, SegmentedIds

# A block is small enough for its int64 temporaries to stay a few tens of MB.
BLOCK_CHARS = 1 << 21
# Packed (trigram, text) values must stay below 2**63; below 2**31 they are packed as int32.
PACKED_LIMIT = 2**63
PACKED_LIMIT_32 = 2**31
_WORD_CHAR = re.compile(r"\w")


def trigram_keys(folded: str) -> DocIds:
    """Every 3-character window of an already folded text, packed as c0 << 42 | c1 << 21 | c2."""
    points = np.frombuffer(folded.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    wide = points.astype(np.int64)
    keys: DocIds = (wide[:-2] << 42) | (wide[1:-1] << 21) | wide[2:]
    return keys


def trigram_ids(keys: DocIds, word: str) -> list[int]:
    """The positions in ascending `keys` of a word's distinct trigram keys, ascending by key,
    -1 (UNKNOWN_TERM) for those not in `keys`.

    A query word's keys are packed as `trigram_keys` packs a text's, and looked up in
    the kernel (`walks.trigram_ids`): a few numpy calls a word were a tenth of a
    query's time.
    """
    return walks.trigram_ids(keys, word)


@dataclass(frozen=True)
class TrigramPostings:
    """Distinct trigrams ascending; trigram i's rows are posting i of `ids` (ascending
    text numbers, `segmented_ids`) and the same rows of `counts` (its occurrences in
    that text). `windows` is each text's number of 3-character windows, kept or not."""

    keys: DocIds
    ids: SegmentedIds
    counts: Weights
    windows: list[int]


@functools.cache
def is_word_char(point: int) -> bool:
    """Whether Python's `re` counts the code point as `\\w`, as `query_words` does."""
    return _WORD_CHAR.match(chr(point)) is not None


def word_chars(alphabet: DocIds) -> Mask:
    return np.fromiter(map(is_word_char, alphabet.tolist()), dtype=bool, count=len(alphabet))


def trigram_postings(
    texts: Iterable[str],
    *,
    word_only: bool,
    block_texts: int = BLOCK_DOCS,
    block_chars: int = BLOCK_CHARS,
) -> TrigramPostings:
    """One row per distinct (trigram, text); with `word_only`, only trigrams of three `\\w`
    characters (the only ones a query word can have)."""
    blocks, windows = trigram_blocks(
        texts, word_only=word_only, block_texts=block_texts, block_chars=block_chars
    )
    keys, ids, counts = merged_segmented(blocks, len(windows))
    return TrigramPostings(keys, ids, counts, windows)


def trigram_blocks(
    texts: Iterable[str],
    *,
    word_only: bool,
    block_texts: int = BLOCK_DOCS,
    block_chars: int = BLOCK_CHARS,
) -> tuple[list[Block], list[int]]:
    """The rows of `trigram_postings` a block of texts at a time, for `block_postings` to
    merge, and each text's number of windows. No block spans two id segments."""
    windows: list[int] = []
    blocks = []
    for block in text_blocks(texts, block_texts, block_chars):
        first = len(windows)
        windows.extend(max(len(text) - 2, 0) for text in block)
        blocks.extend(block_rows(block, first, word_only))
    return blocks, windows


def text_blocks(texts: Iterable[str], most_texts: int, most_chars: int) -> Iterator[list[str]]:
    """The texts in blocks of at most `most_texts`, cut once `most_chars` are reached and
    at each multiple of SEGMENT_DOCS texts."""
    block: list[str] = []
    chars = 0
    done = 0
    for text in texts:
        block.append(text)
        chars += len(text)
        if (
            len(block) == most_texts
            or chars >= most_chars
            or (done + len(block)) % SEGMENT_DOCS == 0
        ):
            done += len(block)
            yield block
            block, chars = [], 0
    if block:
        yield block


def ascii_word_codes() -> tuple[DocIds, bytes]:
    """The ASCII characters `\\w` matches (ascending code points), and a bytes.translate
    table taking an ASCII byte to its position among them, 0xFF (-1 as int8) for any other."""
    points = [point for point in range(128) if is_word_char(point)]
    table = bytearray(b"\xff" * 256)
    for position, point in enumerate(points):
        table[point] = position
    return np.array(points, dtype=np.int64), bytes(table)


# Nearly every haystack is ASCII: its characters are coded by one bytes.translate, with no
# pass to find which of them occur. All 63 word characters stand for the block's alphabet;
# a superset packs the same keys, and 63**3 * BLOCK_DOCS still fits int32.
ASCII_WORD_POINTS, _ASCII_WORD_CODES = ascii_word_codes()


def dense_codes(joined: str, word_only: bool) -> tuple[DocIds, npt.NDArray[np.int8 | np.int32]]:
    """A block's alphabet (ascending code points, only `\\w` ones with `word_only`) and
    each character's position in it, -1 for a character left out."""
    if word_only and joined.isascii():
        coded = joined.encode("ascii").translate(_ASCII_WORD_CODES)
        return ASCII_WORD_POINTS, np.frombuffer(coded, dtype=np.int8)
    points = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    alphabet = np.flatnonzero(np.bincount(points))
    if word_only:
        alphabet = alphabet[word_chars(alphabet)]
    code = np.full(int(points.max()) + 1 if len(points) else 0, -1, dtype=np.int32)
    code[alphabet] = np.arange(len(alphabet), dtype=np.int32)
    codes: npt.NDArray[np.int32] = code[points]
    return alphabet, codes


def block_rows(texts: Sequence[str], first: int, word_only: bool) -> list[Block]:
    """The block's rows; two half blocks when its packed values could overflow int64."""
    alphabet, small_codes = dense_codes("".join(texts), word_only)
    size = len(alphabet)
    if size**3 * len(texts) >= PACKED_LIMIT and len(texts) > 1:
        half = len(texts) // 2
        return block_rows(texts[:half], first, word_only) + block_rows(
            texts[half:], first + half, word_only
        )
    # Most blocks' packed values fit int32 (an alphabet of a few dozen characters): their
    # passes and the sort move half the bytes, and sorting int32 takes half the time.
    pack_type = np.int32 if size**3 * len(texts) < PACKED_LIMIT_32 else np.int64
    codes = small_codes.astype(pack_type, copy=False)
    del small_codes
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    text_of = np.repeat(np.arange(len(texts), dtype=pack_type), lengths)
    # A window counts when it lies inside one text and each of its characters is kept.
    kept = (text_of[:-2] == text_of[2:]) & (codes[:-2] >= 0) & (codes[1:-1] >= 0)
    kept &= codes[2:] >= 0
    # Every window is packed from contiguous slices, in place, and the kept ones picked
    # after: gathering the kept windows' three characters by position instead cost a
    # tenth of the compound corpus's 100k build. A dropped window's value is never read.
    window = codes[:-2] * size
    window += codes[1:-1]
    window *= size
    window += codes[2:]
    window *= len(texts)
    window += text_of[:-2]
    del codes, text_of
    packed = window[kept]
    del window, kept
    pairs, repeats = counted(packed)
    del packed
    trigrams, docs = np.divmod(pairs, len(texts))
    block = block_of(first, trigrams, docs, repeats.astype(np.uint32))
    # The alphabet is ascending, so dense-code order is code-point order: keys come ascending.
    wide = alphabet.astype(np.int64)
    dense = block.keys
    keys = (
        (wide[dense // (size * size)] << 42)
        | (wide[dense // size % size] << 21)
        | wide[dense % size]
    )
    return [replace(block, keys=keys)]
