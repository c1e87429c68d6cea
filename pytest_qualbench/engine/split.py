"""The chunks' raw words (`analysis.raw_words`), split and numbered once for both layers.

Splitting the chunks into words is much of what a build costs. The porter layer
tokenizes and stems each distinct raw word once; the trigram layer's words of an
ASCII chunk are its raw words lowercased (`chunk_words`): both take the numbers
here, neither splits a chunk's text again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pytest_qualbench.engine.analysis import raw_words
from pytest_qualbench.engine.arrays import DocIds
from pytest_qualbench.engine.block_postings import BLOCK_DOCS
from pytest_qualbench.engine.types import Chunk


class FirstSeenIds(dict[str, int]):
    """Ids for strings in first-seen order: looking up an unseen one gives it the next id.

    A dict subclass's __getitem__ runs in C for known keys: no Python call per word.
    """

    def __missing__(self, key: str) -> int:
        number = len(self)
        self[key] = number
        return number


@dataclass(frozen=True)
class FieldWords:
    """One field (the text or the title) of a block's chunks: the number of every raw
    word, chunk after chunk, and how many words each chunk's field has."""

    numbers: npt.NDArray[np.int32]
    counts: DocIds

    def docs(self) -> DocIds:
        """The chunk (numbered within the block) of each word of `numbers`."""
        docs: DocIds = np.repeat(np.arange(len(self.counts), dtype=np.int64), self.counts)
        return docs


@dataclass(frozen=True)
class SplitBlock:
    """The raw words of chunks first .. first + size - 1."""

    first: int
    size: int
    text: FieldWords
    title: FieldWords


@dataclass(frozen=True)
class Split:
    """Every chunk's raw words, a block of BLOCK_DOCS chunks at a time; raw word n is `words[n]`."""

    words: Sequence[str]
    blocks: Sequence[SplitBlock]
    chunk_count: int


def field_words(texts: Sequence[str], ids: FirstSeenIds) -> FieldWords:
    """The raw words of each text, numbered by `ids`."""
    numbers: list[int] = []
    counts = []
    # Each text's words are numbered and dropped at once: a block's worth of word strings
    # alive together would fragment the heap the build leaves behind. The numbers are
    # the ids' own int objects, so the list holds no new ones.
    for text in texts:
        text_words = raw_words(text)
        numbers += map(ids.__getitem__, text_words)
        counts.append(len(text_words))
    return FieldWords(np.array(numbers, dtype=np.int32), np.asarray(counts, dtype=np.int64))


def split_chunks(chunks: Sequence[Chunk]) -> Split:
    """The chunks' raw words, numbered first seen first: a block's texts, then its titles."""
    ids = FirstSeenIds()
    blocks = []
    for first in range(0, len(chunks), BLOCK_DOCS):
        part = chunks[first : first + BLOCK_DOCS]
        text = field_words([chunk.text for chunk in part], ids)
        title = field_words([chunk.title for chunk in part], ids)
        blocks.append(SplitBlock(first, len(part), text, title))
    return Split(list(ids), blocks, len(chunks))
