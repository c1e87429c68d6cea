"""Which chunks hold a needle (case-sensitive substring), through an index of character trigrams.

The relevant set R of a case is every chunk holding one of its needles. Scanning
the corpus for every case makes a benchmark quadratic: 10^5 entries with a case
on each took ten times as long as five times fewer. Here each chunk's distinct
3-character windows are indexed once; a needle's candidates are the chunks
holding its rarest window, each checked with `in`. Needles shorter than three
characters have no window and are looked for in every chunk.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from pytest_qualbench.engine.trigram import grouped_by_key, trigram_keys, trigram_rows

WINDOW = 3


class SubstringIndex:
    """Chunk texts and the chunks holding each of their character trigrams."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = texts
        row_keys, docs, counts = trigram_rows(texts)
        self.keys, self.offsets, self.docs, _ = grouped_by_key(row_keys, docs, counts)

    @property
    def chunk_count(self) -> int:
        return len(self.texts)

    def containing(self, needle: str) -> set[int]:
        """The chunks whose text holds the needle."""
        if len(needle) < WINDOW:
            return {doc for doc, text in enumerate(self.texts) if needle in text}
        keys = np.unique(trigram_keys(needle))
        slots = np.minimum(np.searchsorted(self.keys, keys), max(len(self.keys) - 1, 0))
        if not len(self.keys) or not np.array_equal(self.keys[slots], keys):
            # A window of the needle occurs in no chunk, so the needle occurs in none.
            return set()
        sizes = self.offsets[slots + 1] - self.offsets[slots]
        rarest = int(slots[np.argmin(sizes)])
        candidates = self.docs[self.offsets[rarest] : self.offsets[rarest + 1]].tolist()
        return {doc for doc in candidates if needle in self.texts[doc]}

    def count_containing(self, needles: Iterable[str]) -> int:
        """How many chunks hold at least one of the needles."""
        holding: set[int] = set()
        for needle in dict.fromkeys(needles):
            holding |= self.containing(needle)
        return len(holding)
