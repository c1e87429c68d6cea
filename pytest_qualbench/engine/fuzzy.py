"""Fuzzy correction of query words the corpus does not contain, with rapidfuzz."""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from collections.abc import Set as AbstractSet

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from pytest_qualbench.engine.analysis import STOPWORDS

# One or two edits turn a word under three characters into too many others to choose from.
MIN_FUZZY_WORD_CHARS = 3
MIN_PART_CHARS = 5


def is_correction(word: str, identifier_parts: AbstractSet[str]) -> bool:
    """Whether a vocabulary word may be a correction: no stopword, no identifier fragment."""
    if word in STOPWORDS or len(word) < MIN_FUZZY_WORD_CHARS:
        return False
    return word not in identifier_parts or len(word) >= MIN_PART_CHARS


def max_edits(word: str) -> int:
    """Allowed Levenshtein distance: 1 up to 4 characters, 2 up to 12, 3 beyond (capy's rule)."""
    if len(word) <= 4:
        return 1
    if len(word) <= 12:
        return 2
    return 3


class Corrector:
    """Nearest vocabulary word within `max_edits`; ties by higher document frequency, then A-Z.

    A stopword is never a correction: it carries no meaning a query could have meant.
    Nor is an identifier fragment, a part of fewer than MIN_PART_CHARS characters that
    the corpus only has inside identifiers: those are abbreviations (`cert` of
    DB_SSL_CERT, `cfg`, `utc`) that nobody types as a word, and short enough for the
    edit budget to reach them from unrelated words (`cerata` is 2 edits from `cert`).
    Longer parts are words (`uptime` of uptime_seconds) and stay correctable.
    """

    def __init__(
        self, word_frequency: Mapping[str, int], identifier_parts: AbstractSet[str] = frozenset()
    ) -> None:
        self.word_frequency = word_frequency
        # By length first: the words of a range of lengths are one slice. Sorted A-Z,
        # then stably by length: the (length, word) order without a key tuple per
        # word, since restoring a cached index builds this on every run.
        self.choices = sorted(
            word for word in word_frequency if is_correction(word, identifier_parts)
        )
        self.choices.sort(key=len)
        self.memo: dict[str, str | None] = {}

    def correct(self, word: str) -> str | None:
        """The correction of a word absent from the vocabulary, or None when nothing is close.

        A word with a digit is left alone: 1979 is no misspelling of 1969.
        """
        if len(word) < MIN_FUZZY_WORD_CHARS or any(char.isdigit() for char in word):
            return None
        if word not in self.memo:
            self.memo[word] = self.nearest(word)
        return self.memo[word]

    def nearest(self, word: str) -> str | None:
        edits = max_edits(word)
        # A Levenshtein distance is at least the difference in length, so only words
        # within `edits` characters of this one's length can match: the rest of the
        # vocabulary is never compared.
        first = bisect.bisect_left(self.choices, len(word) - edits, key=len)
        end = bisect.bisect_right(self.choices, len(word) + edits, key=len)
        window = self.choices[first:end]
        # One row of distances (edits + 1 past the cutoff), made without the result
        # tuple per word that process.extract would build.
        distances = process.cdist(
            [word], window, scorer=Levenshtein.distance, score_cutoff=edits, dtype=np.int32
        )[0]
        close = [(int(distances[i]), window[i]) for i in np.flatnonzero(distances <= edits)]
        if not close:
            return None
        return min(close, key=lambda m: (m[0], -self.word_frequency[m[1]], m[1]))[1]
