"""Fuzzy correction of query words the corpus does not contain, with rapidfuzz."""

from __future__ import annotations

from collections.abc import Mapping

from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

MIN_WORD_CHARS = 3


def max_edits(word: str) -> int:
    """Allowed Levenshtein distance: 1 up to 4 characters, 2 up to 12, 3 beyond (capy's rule)."""
    if len(word) <= 4:
        return 1
    if len(word) <= 12:
        return 2
    return 3


class Corrector:
    """Nearest vocabulary word within `max_edits`; ties by higher document frequency, then A-Z."""

    def __init__(self, word_frequency: Mapping[str, int]) -> None:
        self.word_frequency = word_frequency
        self.choices = sorted(w for w in word_frequency if len(w) >= MIN_WORD_CHARS)
        self.memo: dict[str, str | None] = {}

    def correct(self, word: str) -> str | None:
        """The correction of a word absent from the vocabulary, or None when nothing is close."""
        if len(word) < MIN_WORD_CHARS:
            return None
        if word not in self.memo:
            self.memo[word] = self.nearest(word)
        return self.memo[word]

    def nearest(self, word: str) -> str | None:
        matches = process.extract(
            word,
            self.choices,
            scorer=Levenshtein.distance,
            score_cutoff=max_edits(word),
            limit=None,
        )
        if not matches:
            return None
        best = min(matches, key=lambda m: (m[1], -self.word_frequency[m[0]], m[0]))
        return str(best[0])
