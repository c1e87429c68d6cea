"""The words of the chunks' folded texts: which chunks hold a query word, with no text read.

A query word (`analysis.query_words`) is a run of `\\w`, so each of its occurrences in
a text lies inside one maximal `\\w` run of that text: it is a substring of the text
exactly when it is a substring of one of the text's words (`analysis.word_runs`). The
chunks holding it are then the union of the postings of the corpus's distinct words
that contain it, and those words are found by a trigram index over the words (a small
corpus of short strings) and settled by `in` on each.

Checking candidate chunks' text instead costs about 2 us a candidate, and on a corpus
of compound identifiers a query's trigrams meet in thousands of chunks that do not
hold its words (docs/performance.md, "Issue 28").
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from pytest_qualbench.engine.analysis import word_runs
from pytest_qualbench.engine.bm25 import DocIds, Mask, narrowed_postings
from pytest_qualbench.engine.trigram_postings import is_word_char, trigram_ids, trigram_postings

# Candidate words few enough to check with `in` rather than intersect more trigram
# postings: an intersection costs about what checking a few dozen short words does.
FEW_WORDS = 32
# The arrays `ChunkWords.arrays` gives, beside the words themselves.
ARRAY_NAMES = ("offsets", "chunks", "keys", "key_offsets", "word_ids")
# Every byte but an ASCII word character's, mapped to a space.
_NON_WORD_BYTES_BLANKED = bytes(
    byte if byte < 128 and is_word_char(byte) else ord(" ") for byte in range(256)
)


def encoded_words(text: str) -> list[bytes]:
    """The maximal `\\w` runs of a text (`analysis.word_runs`), UTF-8 encoded.

    An ASCII text's runs come from one bytes translate and split, twice as fast as
    `str.translate` with its mapping and three times as fast as the regex: splitting
    the chunks into words is most of what `chunk_words` costs.
    """
    if text.isascii():
        return text.encode("ascii").translate(_NON_WORD_BYTES_BLANKED).split()
    return [run.encode() for run in word_runs(text)]


@dataclass(frozen=True)
class ChunkWords:
    """The distinct words of the chunks (`words`, by first sight) and where they occur.

    Word w is in chunks[offsets[w]:offsets[w + 1]] (ascending chunk ids). The words'
    distinct trigrams are `keys` (ascending); key k is in the words
    word_ids[key_offsets[k]:key_offsets[k + 1]] (ascending word ids).
    """

    words: Sequence[str]
    offsets: DocIds
    chunks: DocIds
    keys: DocIds
    key_offsets: DocIds
    word_ids: DocIds
    chunk_count: int

    def containing(self, word: str) -> list[int]:
        """The ids of the words holding `word` (of 3+ characters) as a substring."""
        trigrams = trigram_ids(self.keys, word)
        candidates = narrowed_postings(
            self.key_offsets, self.word_ids, trigrams, FEW_WORDS, len(self.words)
        )
        # Holding the word's trigrams is not holding the word ("abcab" and "bca").
        return [found for found in candidates.tolist() if word in self.words[found]]

    def holding(self, word: str) -> Mask:
        """Which chunks hold `word` (of 3+ characters) as a substring: a flag per chunk.

        Flags set by a scatter of the containing words' postings, where a union of
        sorted postings would sort them.
        """
        found = np.array(self.containing(word), dtype=np.int64)
        starts = self.offsets[found]
        lengths = self.offsets[found + 1] - starts
        # Row numbers of every containing word's posting, all in one array.
        rows = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
        rows += np.arange(len(rows), dtype=np.int64)
        held = np.zeros(self.chunk_count, dtype=bool)
        held[self.chunks[rows]] = True
        return held

    def arrays(self) -> dict[str, npt.NDArray[Any]]:
        """The arrays `stored` takes back, by ARRAY_NAMES (the words are stored apart)."""
        return {name: getattr(self, name) for name in ARRAY_NAMES}

    @classmethod
    def stored(
        cls, words: Sequence[str], arrays: Mapping[str, npt.NDArray[Any]], chunk_count: int
    ) -> ChunkWords:
        """The chunk words whose `words` and `arrays()` these are; ValueError when they
        cannot be: a planted or damaged cache must fail here, not mid-query."""
        offsets, chunks, keys, key_offsets, word_ids = (arrays[name] for name in ARRAY_NAMES)
        checked_postings("chunk word", offsets, chunks, len(words), chunk_count)
        if keys.dtype != np.int64 or keys.ndim != 1 or (len(keys) and keys.min() < 0):
            raise ValueError("word trigram keys have the wrong type or range")
        if np.any(keys[1:] <= keys[:-1]):
            raise ValueError("word trigram keys are not ascending")
        checked_postings("word trigram", key_offsets, word_ids, len(keys), len(words))
        return cls(words, offsets, chunks, keys, key_offsets, word_ids, chunk_count)


def checked_postings(name: str, offsets: DocIds, ids: DocIds, groups: int, bound: int) -> None:
    """ValueError unless `offsets` (int64) split int32 `ids` below `bound` into `groups`
    runs, each strictly ascending."""
    if offsets.dtype != np.int64 or ids.dtype != np.int32 or offsets.ndim != 1 or ids.ndim != 1:
        raise ValueError(f"{name} postings have the wrong types")
    if offsets.shape != (groups + 1,) or offsets[0] != 0 or offsets[-1] != len(ids):
        raise ValueError(f"{name} offsets do not span the postings")
    if np.any(offsets[1:] < offsets[:-1]):
        raise ValueError(f"{name} offsets are not ascending")
    if len(ids) and (ids.min() < 0 or ids.max() >= bound):
        raise ValueError(f"{name} postings out of range")
    rises = np.diff(ids) > 0
    # Each posting's first id may be below the previous posting's last.
    firsts = offsets[1:-1]
    rises[firsts[(firsts > 0) & (firsts < len(ids))] - 1] = True
    if not rises.all():
        raise ValueError(f"{name} postings are not ascending")


def chunk_words(texts: Iterable[str]) -> ChunkWords:
    """The words of already folded texts (chunk i is the i-th text) and their indexes."""
    ids: dict[bytes, int] = {}
    # One row per (chunk, distinct word), chunk by chunk: 4 bytes a row, not a Python int.
    row_words = array("i")
    row_counts = array("q")
    for text in texts:
        # dict.fromkeys, not set: words are numbered in text order, so a build is reproducible.
        distinct = dict.fromkeys(encoded_words(text))
        row_counts.append(len(distinct))
        row_words.extend([ids.setdefault(word, len(ids)) for word in distinct])
    words = [word.decode() for word in ids]
    word_column = np.frombuffer(row_words, dtype=np.int32)
    counts = np.frombuffer(row_counts, dtype=np.int64)
    chunk_column = np.repeat(np.arange(len(counts), dtype=np.int32), counts)
    # Rows come chunk by chunk, so a stable sort by word keeps each word's chunks ascending.
    chunks = chunk_column[np.argsort(word_column, kind="stable")]
    per_word = np.bincount(word_column, minlength=len(words))
    offsets = np.concatenate(([0], np.cumsum(per_word))).astype(np.int64)
    # Words hold only word characters: every window is kept, none spans two words.
    trigrams = trigram_postings(words, word_only=False)
    return ChunkWords(
        words, offsets, chunks, trigrams.keys, trigrams.offsets, trigrams.docs, len(counts)
    )
