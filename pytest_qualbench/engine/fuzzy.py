"""Fuzzy correction of query words the corpus does not contain, with rapidfuzz."""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from collections.abc import Set as AbstractSet

import numpy as np
import numpy.typing as npt
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from pytest_qualbench.engine.analysis import STOPWORDS

# One or two edits turn a word under three characters into too many others to choose from.
MIN_FUZZY_WORD_CHARS = 3
MIN_PART_CHARS = 5

# A character's bit in a word's letter set: one each for a-z, 0-9, "_" and "-", and one
# shared by every other character. Sharing a bit only hides differences, so the bound of
# `letter_set_bound` stays a lower bound.
LETTER_BITS = "abcdefghijklmnopqrstuvwxyz0123456789_-"
OTHER_BIT = len(LETTER_BITS)
_BIT_OF_ASCII = np.full(128, OTHER_BIT, dtype=np.uint8)
_BIT_OF_ASCII[[ord(char) for char in LETTER_BITS]] = np.arange(OTHER_BIT, dtype=np.uint8)


def is_correction(word: str, identifier_parts: AbstractSet[str]) -> bool:
    """Whether a vocabulary word may be a correction: no stopword, no identifier fragment."""
    if word in STOPWORDS or len(word) < MIN_FUZZY_WORD_CHARS:
        return False
    return word not in identifier_parts or len(word) >= MIN_PART_CHARS


def letter_sets(words: list[str]) -> npt.NDArray[np.uint64]:
    """Each word's letter set (`LETTER_BITS`) as the bits of one uint64, in one numpy pass
    over the words joined: a restored index builds them on every run."""
    if not words:
        return np.empty(0, dtype=np.uint64)
    points = np.frombuffer("".join(words).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    bits = np.where(points < 128, _BIT_OF_ASCII[np.minimum(points, 127)], OTHER_BIT)
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    sets: npt.NDArray[np.uint64] = np.bitwise_or.reduceat(
        np.left_shift(np.uint64(1), bits.astype(np.uint64)), starts
    )
    return sets


def letter_set_bound(
    word_set: np.uint64, choice_sets: npt.NDArray[np.uint64]
) -> npt.NDArray[np.uint64]:
    """A lower bound on the Levenshtein distance from the word to each choice: the larger
    count of letter bits one has and the other lacks. Each edit brings in or takes out at
    most one character occurrence, so every letter the word has and a choice lacks needs
    an edit of its own, and so does every letter the choice has and the word lacks
    (the bag-distance bound of Bartolini, Ciaccia and Patella 2002, on sets)."""
    bound: npt.NDArray[np.uint64] = np.maximum(
        np.bitwise_count(choice_sets & ~word_set), np.bitwise_count(word_set & ~choice_sets)
    )
    return bound


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
        self.choice_sets = letter_sets(self.choices)
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
        # Nor can a word whose letters differ from this one's by more than `edits`: at
        # 10^5 chunks a five-letter word's length window holds over 100,000 words and
        # about one in seventy passes this bound (docs/engine.md, "Fuzzy correction").
        bound = letter_set_bound(letter_sets([word])[0], self.choice_sets[first:end])
        window: list[str] = [
            self.choices[first + at] for at in np.flatnonzero(bound <= edits).tolist()
        ]
        # One row of distances (edits + 1 past the cutoff), made without the result
        # tuple per word that process.extract would build.
        distances = process.cdist(
            [word], window, scorer=Levenshtein.distance, score_cutoff=edits, dtype=np.int32
        )[0]
        close = [(int(distances[i]), window[i]) for i in np.flatnonzero(distances <= edits)]
        if not close:
            return None
        return min(close, key=lambda m: (m[0], -self.word_frequency[m[1]], m[1]))[1]
