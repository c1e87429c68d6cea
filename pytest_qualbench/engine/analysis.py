"""Text analysis shared by the layers: folding, tokens, stopwords, Porter stems.

nltk is imported on the first stem, never at module import: the pytest plugin
imports this package in every session, benchmark or not.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from typing import Any

from pytest_qualbench.engine.types import Chunk

# Han, kana and hangul are written without spaces: each character is a token, so a
# two-character CJK query still meets the porter layer (the trigram layer needs 3+).
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_CHAR = re.compile(f"[{_CJK}]")
_TOKEN = re.compile(f"[{_CJK}]|(?:(?![{_CJK}])\\w)+")
_WORD = re.compile(r"\w+")
# Every ASCII character `\w` does not match, mapped to a space.
_ASCII_NON_WORD_BLANKED = str.maketrans(
    {chr(point): " " for point in range(128) if not _WORD.fullmatch(chr(point))}
)
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")

# A word list reads better as prose than as quoted strings.
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    """.split()  # noqa: SIM905
)


def fold(text: str) -> str:
    """Compatibility-normalize (NFKC) and case-fold, so `ﬁ`, `Ǆ` and `É` compare as typed."""
    return unicodedata.normalize("NFKC", text).casefold()


def haystack(chunk: Chunk) -> str:
    """What the trigram layer indexes and matches substrings in: the folded title, a
    newline, the text."""
    return fold(f"{chunk.title}\n{chunk.text}")


def identifier_parts(word: str) -> list[str]:
    """The snake_case and camelCase parts of an identifier (empty when it has only one)."""
    if "_" not in word and word[1:] == word[1:].lower():
        return []
    parts = [
        piece for segment in word.split("_") for piece in _CAMEL_BOUNDARY.split(segment) if piece
    ]
    return parts if len(parts) > 1 else []


# Memos for query words, bounded: a build memoises its own words (`porter.RawWords`,
# and each distinct word is stemmed once), and an unbounded memo here would keep every
# word of every corpus the process ever indexed.
QUERY_MEMO_WORDS = 4096


@functools.lru_cache(maxsize=QUERY_MEMO_WORDS)
def word_tokens(word: str) -> tuple[str, ...]:
    """The tokens of one word: itself folded, then its identifier parts."""
    folded = word.casefold()
    whole = (folded,) if folded.strip("_") else ()
    return whole + tuple(part.casefold() for part in identifier_parts(word))


def word_runs(text: str) -> list[str]:
    """The maximal runs of `\\w` in a text, in order, as `_WORD.findall` finds them."""
    if text.isascii():
        # ASCII words are the runs of [A-Za-z0-9_]: blanking every other character and
        # splitting finds the same runs as the regex, several times faster.
        return text.translate(_ASCII_NON_WORD_BLANKED).split()
    runs: list[str] = _WORD.findall(text)
    return runs


def raw_words(text: str) -> list[str]:
    """The NFKC-normalized words of a text before folding, each the source of `word_tokens`."""
    if text.isascii():
        # NFKC leaves ASCII alone.
        return word_runs(text)
    normalized = unicodedata.normalize("NFKC", text)
    # The CJK-aware pattern is slower; most texts never need it.
    pattern = _TOKEN if _CJK_CHAR.search(normalized) else _WORD
    words: list[str] = pattern.findall(normalized)
    return words


def tokenize(text: str) -> list[str]:
    """Folded word tokens in text order; an identifier also yields its parts after itself."""
    return list(itertools.chain.from_iterable(map(word_tokens, raw_words(text))))


def query_words(text: str) -> list[str]:
    """Distinct folded words of a query, in order: the units of substring and fuzzy matching."""
    return list(dict.fromkeys(_WORD.findall(fold(text))))


@functools.lru_cache(maxsize=1)
def porter_stemmer() -> Any:
    """nltk's PorterStemmer, made once (importing nltk is the slow part)."""
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


@functools.lru_cache(maxsize=QUERY_MEMO_WORDS)
def stem(word: str) -> str:
    """nltk's PorterStemmer (NLTK_EXTENSIONS mode)."""
    lowered = word.lower()
    # Every Porter rule (and every entry of nltk's irregular-forms pool) needs the word to
    # end in an ASCII letter, so any other word is returned lowercased and unchanged,
    # without the stemmer's Python: numbers and ids are common in logs and configs.
    if not "a" <= lowered[-1:] <= "z":
        return lowered
    return str(porter_stemmer().stem(word))


def index_terms(text: str) -> list[str]:
    """What the porter layer indexes: tokens minus stopwords, Porter-stemmed."""
    return [stem(token) for token in tokenize(text) if token not in STOPWORDS]


def query_tokens(text: str) -> list[str]:
    """The tokens of a query that become its porter terms: stopwords only when all are."""
    tokens = tokenize(text)
    return [token for token in tokens if token not in STOPWORDS] or tokens


def query_terms(text: str) -> list[str]:
    """Porter terms of a query; stopwords are kept when every term is one."""
    return [stem(token) for token in query_tokens(text)]
