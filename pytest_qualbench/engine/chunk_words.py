"""The words of the chunks' folded texts: which chunks hold a query word, with no text read.

A query word (`analysis.query_words`) is a run of `\\w`, so each of its occurrences in
a text lies inside one maximal `\\w` run of that text: it is a substring of the text
exactly when it is a substring of one of the text's words (`analysis.word_runs`). The
chunks holding it are then the union of the postings of the corpus's distinct words
that contain it, and those words are found by a trigram index over the words (a small
corpus of short strings) and settled by `in` on each.

Checking candidate chunks' text instead costs about 2 us a candidate, and on a corpus
of compound identifiers a query's trigrams meet in thousands of chunks that do not
hold its words (docs/performance-history.md, "Issue 28: trigram verification").
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from pytest_qualbench.engine.analysis import haystack, word_runs
from pytest_qualbench.engine.arrays import DocIds, Floats, Mask
from pytest_qualbench.engine.block_postings import Block, block_of, counted, merged_segmented
from pytest_qualbench.engine.kernel import walks
from pytest_qualbench.engine.segmented_ids import DENSE_ARRAY_NAMES, SegmentedIds
from pytest_qualbench.engine.split import FirstSeenIds, Split, SplitBlock
from pytest_qualbench.engine.trigram_postings import trigram_postings
from pytest_qualbench.engine.types import Chunk

# A word in at least 1/CHUNK_DENSE_SHARE of the chunks gets a bit set of them
# (`dense_sets`), or'ed into a query word's chunks instead of its posting walked.
# 64 against 16 and 256, engines taking turns query by query at 10^5 chunks: median
# per-query time 0.962 and 1.013 of 16's on the compound corpus, 0.958 and 0.990 on
# prose; the sets take 10.0 and 12.8 MB there (docs/performance-history.md, round 11).
CHUNK_DENSE_SHARE = 64
# Candidate words few enough to check with `in` rather than intersect more trigram
# postings: an intersection costs about what checking a few dozen short words does.
FEW_WORDS = 32
# A word id in the bytes `_containing` gives: int64.
WORD_ID_BYTES = 8
# The arrays `ChunkWords.arrays` gives, beside the words themselves: the words' chunks
# and the word trigrams' postings are `SegmentedIds` arrays, each name after its prefix.
CHUNK_IDS = "chunk_"
WORD_IDS = "word_"
ARRAY_NAMES = (
    "keys",
    *(
        prefix + name
        for prefix in (CHUNK_IDS, WORD_IDS)
        for name in ("local_ids", "id_bounds", *DENSE_ARRAY_NAMES)
    ),
)


@dataclass(frozen=True)
class Holding:
    """The visible chunks holding a query's words, each list ascending (`ChunkWords.holding`)."""

    # Those holding every word as a substring.
    every: DocIds
    # When none holds every word, those holding any; else empty.
    any: DocIds
    # Each word's own id among the words, -1 for one no chunk holds as a word of its own.
    own: tuple[int, ...]


@dataclass(frozen=True)
class ChunkWords:
    """The distinct words of the chunks (`words`, by first sight) and where they occur.

    Word w is in the chunks of posting w of `chunk_ids` (ascending chunk ids, two bytes
    each: `segmented_ids`; a word in a sixty-fourth of the chunks or more also has a
    bit set of them, `dense_sets`). The words' distinct trigrams are `keys` (ascending); the
    words holding key k are posting k of `word_ids` (ascending word ids, likewise).
    """

    words: list[str]
    chunk_ids: SegmentedIds
    keys: DocIds
    word_ids: SegmentedIds

    @property
    def chunk_count(self) -> int:
        return self.chunk_ids.size

    def containing(self, word: str) -> DocIds:
        """The ids of the words holding `word` (of 3+ characters) as a substring, ascending."""
        return np.frombuffer(self._containing(word)[0], dtype=np.int64)

    def holding(self, words: Sequence[str], visible: Mask) -> Holding:
        """The visible chunks holding every one of `words` (each of 3+ characters) as a
        substring, ascending; when none does, those holding any (else no chunk); and each
        word's own id.

        The containing words' postings are walked in compiled code
        (`walks.chunks_holding`), one bit a chunk, with no union sorted; a word in
        many chunks has its bit set or'ed in, not its posting walked.
        """
        found = [self._containing(word) for word in words]
        ends = itertools.accumulate(len(ids) // WORD_ID_BYTES for ids, _ in found)
        every, any_ = walks.chunks_holding(
            *self.chunk_ids.walked(),
            np.frombuffer(b"".join(ids for ids, _ in found), dtype=np.int64),
            np.fromiter(ends, dtype=np.int64, count=len(found)),
            visible,
        )
        return Holding(
            np.frombuffer(every, dtype=np.int64),
            np.frombuffer(any_, dtype=np.int64),
            tuple(own for _, own in found),
        )

    def words_first(
        self, own: Sequence[int], docs: DocIds, scores: Floats
    ) -> tuple[DocIds, Floats]:
        """The ranking `docs` (with its `scores`), the chunks holding every word whose own
        id is in `own` (`Holding.own`) as a word of its own moved first, each part in its
        order; as it is when some word is in no chunk as a word of its own."""
        if min(own, default=-1) < 0 or len(docs) < 2:
            return docs, scores
        moved, moved_scores = walks.words_first(
            *self.chunk_ids.walked(), np.array(own, dtype=np.int64), docs, scores
        )
        return np.frombuffer(moved, dtype=np.int64), np.frombuffer(moved_scores, dtype=np.float64)

    def _containing(self, word: str) -> tuple[bytearray, int]:
        """`containing` as int64 bytes, and the id of `word` itself (-1 when no chunk holds
        it as a word): found, narrowed and checked in one compiled call
        (`walks.words_containing`), as a query's words' lookups were a tenth of it."""
        return walks.words_containing(
            self.keys,
            *self.word_ids.walked(),
            self.words,
            word,
            FEW_WORDS,
        )

    def arrays(self) -> dict[str, npt.NDArray[Any]]:
        """The arrays `stored` takes back, by ARRAY_NAMES (the words are stored apart)."""
        return {
            "keys": self.keys,
            **{CHUNK_IDS + name: array for name, array in self.chunk_ids.arrays().items()},
            **{WORD_IDS + name: array for name, array in self.word_ids.arrays().items()},
        }

    @classmethod
    def stored(
        cls, words: list[str], arrays: Mapping[str, npt.NDArray[Any]], chunk_count: int
    ) -> ChunkWords:
        """The chunk words whose `words` and `arrays()` these are; ValueError when they
        cannot be: a planted or damaged cache must fail here, not mid-query."""
        chunk_ids = SegmentedIds.stored(arrays, chunk_count, CHUNK_IDS)
        if chunk_ids.key_count != len(words):
            raise ValueError("chunk word postings do not match the words")
        keys = arrays["keys"]
        if keys.dtype != np.int64 or keys.ndim != 1 or (len(keys) and keys.min() < 0):
            raise ValueError("word trigram keys have the wrong type or range")
        if np.any(keys[1:] <= keys[:-1]):
            raise ValueError("word trigram keys are not ascending")
        word_ids = SegmentedIds.stored(arrays, len(words), WORD_IDS)
        if word_ids.key_count != len(keys):
            raise ValueError("word trigram postings do not match the keys")
        return cls(words, chunk_ids, keys, word_ids)


def chunk_words(chunks: Sequence[Chunk], split: Split) -> ChunkWords:
    """The words of the chunks' haystacks (`analysis.haystack`) and their indexes.

    The haystack of an ASCII chunk folds to its title and text lowercased, joined by a
    newline, which no word holds: its words are its raw words (`split`) lowercased, so
    each distinct raw word is lowercased and numbered once and a block's (word, chunk)
    pairs come from the split's raw word numbers by numpy alone. Any other chunk's
    haystack is split again: folding can move a word's bounds ("İ" folds to "i" and a
    combining dot, no word character) and raw words split CJK text by character.

    Words are numbered by first sight, block by block (a build is reproducible); each
    block's pairs are made distinct by one sort and merged, as the porter layer's are.
    """
    ids = FirstSeenIds()
    # The word id of each raw word some ASCII chunk holds, -1 for the others.
    lowered = np.full(len(split.words), -1, dtype=np.int64)
    blocks = []
    for block in split.blocks:
        part = chunks[block.first : block.first + block.size]
        blocks.append(block_words(block, part, split.words, lowered, ids))
    # Every word is in some chunk, so word w's chunks are posting w of the merged ones.
    _, chunk_ids, _ = merged_segmented(blocks, split.chunk_count, CHUNK_DENSE_SHARE)
    words = list(ids)
    # Words hold only word characters: every window is kept, none spans two words.
    trigrams = trigram_postings(words, word_only=False)
    return ChunkWords(words, chunk_ids, trigrams.keys, trigrams.ids)


def block_words(
    block: SplitBlock,
    chunks: Sequence[Chunk],
    raw_words: Sequence[str],
    lowered: DocIds,
    ids: FirstSeenIds,
) -> Block:
    """One block's distinct (word, chunk) rows; `lowered` and `ids` learn its new words."""
    is_ascii = np.fromiter(
        (chunk.title.isascii() and chunk.text.isascii() for chunk in chunks),
        dtype=bool,
        count=len(chunks),
    )
    numbers = np.concatenate((block.text.numbers, block.title.numbers))
    docs = np.concatenate((block.text.docs(), block.title.docs()))
    kept = is_ascii[docs]
    numbers, docs = numbers[kept], docs[kept]
    # Python work only for the raw words no earlier ASCII chunk held, ascending: reproducible.
    # (`counted`, not np.unique: numpy 2's hashing np.unique took 20 ms a block, a sort 0.5.)
    unseen = counted(numbers[lowered[numbers] < 0])[0].tolist()
    lowered[unseen] = [ids[raw_words[number].lower()] for number in unseen]
    word_columns = [lowered[numbers]]
    doc_columns = [docs]
    for doc in np.flatnonzero(~is_ascii).tolist():
        found = [ids[word] for word in word_runs(haystack(chunks[doc]))]
        word_columns.append(np.asarray(found, dtype=np.int64))
        doc_columns.append(np.full(len(found), doc, dtype=np.int64))
    pairs, _ = counted(np.concatenate(word_columns) * block.size + np.concatenate(doc_columns))
    return block_of(
        block.first, pairs // block.size, pairs % block.size, np.ones(len(pairs), np.uint8)
    )
