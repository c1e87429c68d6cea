"""Which chunks hold a needle (case-sensitive substring), through an index of character trigrams.

The relevant set R of a case is every chunk holding one of its needles. Scanning
the corpus for every case makes a benchmark quadratic: 10^5 entries with a case
on each took ten times as long as five times fewer. Here each chunk's distinct
3-character windows are indexed once; a needle's candidates are the chunks
holding its rarest window, each checked with `in`. Needles shorter than three
characters have no window and are looked for in every chunk.

Building the index takes several times as long as loading the engine's own
index from the cache, so it is cached too (`cached_substring_index`), keyed by
the chunk texts themselves: whatever engine made them, equal texts give an
equal index.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from pytest_qualbench.engine.block_postings import merged
from pytest_qualbench.engine.trigram_postings import trigram_blocks, trigram_keys
from pytest_qualbench.engine.types import IndexState
from pytest_qualbench.index_cache import IndexCache, texts_key

WINDOW = 3
# Candidates few enough to check with `in` rather than intersect more trigram postings:
# an intersection is a few numpy calls (about 5 us), `in` over a chunk's text a fraction
# of a microsecond.
FEW_CHUNKS = 16
FORMAT = "pytest_qualbench.evaluation.substrings 1"


class SubstringIndex:
    """Chunk texts and the chunks holding each of their character trigrams.

    `keys` are the distinct trigrams, ascending; the chunks holding `keys[i]` are
    `docs[offsets[i]:offsets[i + 1]]`.
    """

    def __init__(
        self,
        texts: Sequence[str],
        keys: npt.NDArray[np.int64],
        offsets: npt.NDArray[np.int64],
        docs: npt.NDArray[np.integer],
    ) -> None:
        self.texts = texts
        self.keys, self.offsets, self.docs = keys, offsets, docs
        self._counts: dict[tuple[tuple[str, ...], int | None], int] = {}

    @classmethod
    def built(cls, texts: Sequence[str]) -> SubstringIndex:
        blocks, _ = trigram_blocks(texts, word_only=False)
        keys, offsets, docs, _ = merged(blocks, len(texts))
        return cls(texts, keys, offsets, docs)

    @classmethod
    def stored(cls, texts: Sequence[str], state: IndexState) -> SubstringIndex:
        """The index `state()` gave for these texts; ValueError when it cannot be one.

        Shapes, types and ranges are checked, as the engine checks its own index, so
        a planted file fails here rather than as an IndexError mid-run; the order of
        each key's chunks is not (at 10^5 chunks that pass alone took 2.5 s).
        """
        if state.document.get("format") != FORMAT or state.document.get("texts") != len(texts):
            raise ValueError("not a substring index of these texts")
        keys, offsets, docs = (_vector(state, name) for name in ("keys", "offsets", "docs"))
        if keys.dtype != np.int64 or offsets.dtype != np.int64 or docs.dtype.kind != "i":
            raise ValueError("substring index arrays of the wrong type")
        if len(offsets) != len(keys) + 1 or offsets[0] != 0 or offsets[-1] != len(docs):
            raise ValueError("substring index offsets do not match the keys and docs")
        if np.any(np.diff(keys) <= 0) or np.any(np.diff(offsets) <= 0):
            raise ValueError("substring index keys not ascending, or a key without chunks")
        if len(docs) and (docs.min() < 0 or docs.max() >= len(texts)):
            raise ValueError("substring index chunk ids out of range")
        return cls(texts, keys, offsets, docs)

    def state(self) -> IndexState:
        return IndexState(
            arrays={"keys": self.keys, "offsets": self.offsets, "docs": self.docs},
            document={"format": FORMAT, "texts": len(self.texts)},
        )

    @property
    def chunk_count(self) -> int:
        return len(self.texts)

    def containing(self, needle: str, enough: int | None = None) -> set[int]:
        """The chunks whose text holds the needle; with `enough`, no more than that many."""
        if len(needle) < WINDOW:
            return _holding(needle, range(len(self.texts)), self.texts, enough)
        keys = np.unique(trigram_keys(needle))
        slots = np.minimum(np.searchsorted(self.keys, keys), max(len(self.keys) - 1, 0))
        if not len(self.keys) or not np.array_equal(self.keys[slots], keys):
            # A window of the needle occurs in no chunk, so the needle occurs in none.
            return set()
        # The chunks holding the needle's windows, rarest window first, until at most
        # FEW_CHUNKS are left: each candidate left is checked with `in` in Python, the
        # intersections run in numpy.
        sizes = self.offsets[slots + 1] - self.offsets[slots]
        by_size = slots[np.argsort(sizes, kind="stable")]
        candidates = self._chunks_of(int(by_size[0]))
        for slot in by_size[1:]:
            if len(candidates) <= FEW_CHUNKS:
                break
            holding = self._chunks_of(int(slot))
            found = np.minimum(np.searchsorted(holding, candidates), len(holding) - 1)
            candidates = candidates[holding[found] == candidates]
        return _holding(needle, candidates.tolist(), self.texts, enough)

    def count_containing(self, needles: Iterable[str], at_most: int | None = None) -> int:
        """How many chunks hold at least one of the needles; with `at_most`, counted no
        further than that (a common needle's chunks are then not all checked)."""
        distinct = tuple(dict.fromkeys(needles))
        # Cases share needles (a term several cases of one entry look for, a word
        # common in the corpus): each set of needles is counted once.
        key = (distinct, at_most)
        if key not in self._counts:
            holding: set[int] = set()
            for needle in distinct:
                # A needle's own chunks reaching `at_most` settle the count; below it,
                # every needle's set is whole and their union is exact.
                holding |= self.containing(needle, at_most)
            self._counts[key] = len(holding) if at_most is None else min(len(holding), at_most)
        return self._counts[key]

    def _chunks_of(self, slot: int) -> npt.NDArray[np.integer]:
        """The chunks holding the trigram `keys[slot]`, ascending."""
        return self.docs[self.offsets[slot] : self.offsets[slot + 1]]


def _holding(
    needle: str, candidates: Iterable[int], texts: Sequence[str], enough: int | None
) -> set[int]:
    """The candidates whose text holds the needle, in candidate order until `enough` are found."""
    if enough is None:
        return {doc for doc in candidates if needle in texts[doc]}
    found: set[int] = set()
    for doc in candidates:
        if needle in texts[doc]:
            found.add(doc)
            if len(found) == enough:
                break
    return found


def cached_substring_index(cache: IndexCache, name: str, texts: Sequence[str]) -> SubstringIndex:
    """The texts' substring index from the cache under `name`, else built and stored.

    A stale, damaged or planted file is rebuilt and replaced; a cache that cannot
    be written costs the next run a build, not this one its result.
    """
    key = texts_key(FORMAT, texts)
    state, _ = cache.load_state(name, key)
    if state is not None:
        try:
            return SubstringIndex.stored(texts, state)
        except ValueError:
            pass
    index = SubstringIndex.built(texts)
    with contextlib.suppress(OSError):
        cache.store_state(name, key, index.state())
    return index


def _vector(state: IndexState, name: str) -> npt.NDArray[Any]:
    array = state.arrays.get(name)
    if not isinstance(array, np.ndarray) or array.ndim != 1:
        raise ValueError(f"substring index array {name!r} is missing or not one-dimensional")
    return array
