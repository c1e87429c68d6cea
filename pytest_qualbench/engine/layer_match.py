"""Which of capy's layers would return a result: the rule a result's layer label follows.

The fixture format comes from capy, whose two layers are SQLite FTS5 tables over each
chunk's title and content: one with the `porter unicode61` tokenizer, one with the
`trigram` tokenizer, each queried with FTS5 MATCH. A result is "found by" a layer when
that layer's MATCH returns it, whatever the fusion then does, and its label names the
layers that found it (docs/engine.md, "Layer labels, per result"). This module
decides, for one returned chunk and one query, whether each MATCH would return it,
from the chunk's own text: it never looks at the rest of the corpus, and it changes
no ranking and no score.

capy's query building, from its `internal/store/search.go` (`filterQueryTerms`,
`sanitizePorterQuery`, `sanitizeTrigramQuery`, `SearchWithFallback`):

- terms: FTS5 syntax characters ``'"(){}[]*:^~`` become spaces, the query splits at
  whitespace, each piece is trimmed of ``.,!?;:`` and lowercased; repeats are dropped,
  then capy's stopwords (`internal/store/stopwords.go`), unless every term is one.
- porter: each term but the FTS5 keywords AND, OR, NOT and NEAR, quoted (an FTS5
  phrase of the term's tokens, which must stand next to each other in one column),
  all required.
- trigram: each term split at every character outside ``[a-zA-Z0-9 _-]``, the pieces
  of 3+ characters quoted (a case-insensitive substring of one column), all required.
- when neither layer returns anything with every term required, both run again with
  any term (OR). So a chunk that matches either layer's all-terms query is labeled
  by the all-terms queries; one that matches neither, by the any-term queries.

The typo-corrected query is labeled the same way, with `fuzzy+` before it (done by
the engine, which knows which results came from it).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

from pytest_qualbench.engine.analysis import stem
from pytest_qualbench.engine.fusion import layer_label
from pytest_qualbench.engine.types import Chunk

# capy's internal/store/stopwords.go, the words `filterQueryTerms` drops from a query:
# not this engine's list (capy keeps "to", "is", "of" and "a"; it drops "test",
# "update" and "using"), and the labels follow capy's.
CAPY_STOPWORDS = frozenset(
    """
    about added add after all also and are been being both but can could deps dev did does
    done each fix fixed for from get good got had has have her here his how into its just
    let like make many may more most much new not now old one only other our out over run
    running same say see she should some still such take than that the their them then
    there these they this those through too update updated updates use using very was way
    were what when where which while who will with would year you your tests test
    """.split()  # noqa: SIM905
)
# FTS5 reads these as operators; capy leaves them out of the porter query only.
FTS5_KEYWORDS = frozenset({"and", "or", "not", "near"})
# capy's ftsSpecialRe: the FTS5 syntax characters a query term loses.
_FTS5_SPECIAL = str.maketrans({char: " " for char in "'\"(){}[]*:^~"})
_TERM_TRIM = ".,!?;:"
# capy's trigramCleanRe splits a term at every character outside [a-zA-Z0-9 _-].
_TRIGRAM_SPLIT = re.compile(r"[^a-zA-Z0-9 _-]")
# FTS5's trigram tokenizer matches nothing shorter than a trigram; capy drops such pieces.
MIN_PIECE_CHARS = 3
# unicode61 tokens are runs of letters and digits: any other ASCII character separates.
_ASCII_SEPARATORS = str.maketrans(
    {chr(point): " " for point in range(128) if not chr(point).isalnum()}
)
_LETTERS_AND_DIGITS = re.compile(r"[^\W_]+")
_ASCII_RUN = re.compile(r"[a-z0-9]+")
_ASCII_NEXT_RUN = re.compile(r"[^a-z0-9]*([a-z0-9]+)")

# A porter token compares by its term: the porter layer's term id when the corpus has
# that stem, else the stem itself (a stopword this engine never indexed, say).
Key = int | str


def capy_terms(query: str) -> list[str]:
    """The query's terms as capy's `filterQueryTerms` makes them."""
    seen: dict[str, None] = {}
    for word in query.translate(_FTS5_SPECIAL).split():
        term = word.strip(_TERM_TRIM).lower()
        if term:
            seen.setdefault(term)
    terms = list(seen)
    kept = [term for term in terms if term not in CAPY_STOPWORDS]
    return kept or terms


def fts5_tokens(text: str) -> list[str]:
    """The tokens FTS5's unicode61 tokenizer makes of a text, lowercased, diacritics removed
    (its defaults): runs of letters and digits, so `max_idle_conns` is three tokens and
    `maxIdleConns` one."""
    if text.isascii():
        return text.lower().translate(_ASCII_SEPARATORS).split()
    decomposed = unicodedata.normalize("NFD", text.lower())
    bare = "".join(char for char in decomposed if not unicodedata.combining(char))
    tokens: list[str] = _LETTERS_AND_DIGITS.findall(unicodedata.normalize("NFC", bare))
    return tokens


def trigram_pieces(terms: list[str]) -> tuple[str, ...]:
    """capy's trigram query: the pieces of 3+ characters of each term, lowercased."""
    return tuple(
        piece
        for term in terms
        for piece in _TRIGRAM_SPLIT.sub(" ", term).split()
        if len(piece) >= MIN_PIECE_CHARS
    )


@dataclass(frozen=True)
class Token:
    """One token of a porter query term: its key, and what every token of a text with that
    key starts with (`stem_prefix`)."""

    key: Key
    prefix: str


@dataclass(frozen=True)
class CapyQuery:
    """One query as capy's two MATCH queries see it.

    `porter` holds a phrase per term, its tokens in order (a term without tokens, such
    as `-`, is no phrase: FTS5 ignores an empty phrase); `trigram` holds the substrings.
    """

    porter: tuple[tuple[Token, ...], ...]
    trigram: tuple[str, ...]


# The stems of nltk's irregular forms (its stemmer's `pool`) that some of their words do
# not start with but for the last character (`dying` is `die`), each with the prefix all
# of them share. Written out, not read from nltk: a restored index answers a query of
# known words without importing nltk (tests/engine/test_capy_layers.py derives it).
IRREGULAR_PREFIXES = {"die": "d", "lie": "l", "tie": "t"}


def stem_prefix(stemmed: str) -> str:
    """What every word with this Porter stem starts with: the stem but its last character.

    The Porter steps remove or replace suffixes, and every replacement keeps the first
    character of the suffix it replaces (`biliti` becomes `ble`), so only the last
    character of a stem can differ from its word's; nltk's few irregular forms are the
    exceptions (`IRREGULAR_PREFIXES`). Over the 25,000 distinct words of
    ../shared/data's collections, only `dying` and `lying` are.
    """
    return IRREGULAR_PREFIXES.get(stemmed, stemmed[:-1] or stemmed)


@dataclass(frozen=True)
class Found:
    """Whether each layer's MATCH returns a chunk, all terms required (`every`) or any."""

    porter_every: bool
    trigram_every: bool
    porter_any: bool
    trigram_any: bool

    def layers(self) -> tuple[str, ...]:
        """The layers that found the chunk, porter first: by the all-terms queries when
        either returns it, else by the any-term ones (capy's OR pass)."""
        if self.porter_every or self.trigram_every:
            porter, trigram = self.porter_every, self.trigram_every
        else:
            porter, trigram = self.porter_any, self.trigram_any
        return (("porter",) if porter else ()) + (("trigram",) if trigram else ())


class LayerMatcher:
    """Decides capy's porter and trigram MATCH for one chunk at a time.

    Tokens compare by the porter layer's terms (`word_terms`, every indexed token's term
    id, and `term_ids`, every stem's): the build stemmed each corpus word once, so a
    returned chunk's tokens need no stemmer but for the few the layer never indexed.
    """

    def __init__(self, word_terms: Mapping[str, int], term_ids: Mapping[str, int]) -> None:
        self.word_terms = word_terms
        self.term_ids = term_ids
        # Each term's stem by id (`term_ids` is in id order), made at the first query:
        # a query word the corpus has needs no stemmer, as in the porter layer's search.
        self._stems: list[str] | None = None

    def label(self, query: CapyQuery, chunk: Chunk, fallback: str) -> str:
        """The label capy's rule gives `chunk` for `query`, or `fallback` (the fusion's
        label) for a chunk neither layer's MATCH returns: capy would not return it at all,
        and the engine found it through a word capy's queries leave out."""
        layers = self.found(query, chunk).layers()
        return layer_label(layers) if layers else fallback

    def key(self, token: str) -> Key:
        """The term a token compares by. Only a token the layer never indexed (a stopword
        of this engine's list, mostly) is stemmed, which imports nltk on a restored index."""
        term = self.word_terms.get(token)
        if term is not None:
            return term
        stemmed = stem(token)
        return self.term_ids.get(stemmed, stemmed)

    def query(self, query: str) -> CapyQuery:
        terms = capy_terms(query)
        phrases = (
            tuple(self.token(token) for token in fts5_tokens(term))
            for term in terms
            if term not in FTS5_KEYWORDS
        )
        return CapyQuery(tuple(phrase for phrase in phrases if phrase), trigram_pieces(terms))

    def token(self, token: str) -> Token:
        key = self.key(token)
        if isinstance(key, str):
            return Token(key, stem_prefix(key))
        if self._stems is None:
            self._stems = list(self.term_ids)
        return Token(key, stem_prefix(self._stems[key]))

    def found(self, query: CapyQuery, chunk: Chunk) -> Found:
        """Which of `query`'s MATCH queries return `chunk`."""
        # A piece has no newline: it is a substring of the title or the text exactly when
        # it is one of them joined by a newline. FTS5's trigram folding of ASCII is lower().
        lowered = f"{chunk.title}\n{chunk.text}".lower()
        pieces = [piece in lowered for piece in query.trigram]
        phrases = (
            [self._ascii_phrase(phrase, lowered, chunk) for phrase in query.porter]
            if lowered.isascii()
            else self._phrases(query.porter, chunk)
        )
        return Found(
            porter_every=bool(phrases) and all(phrases),
            trigram_every=bool(pieces) and all(pieces),
            porter_any=any(phrases),
            trigram_any=any(pieces),
        )

    def _ascii_phrase(self, phrase: tuple[Token, ...], lowered: str, chunk: Chunk) -> bool:
        """Whether an ASCII chunk (`lowered`: its title, a newline and its text, lowercased)
        holds the phrase's tokens in a row in one of the two.

        Tokenizing and looking up all of a chunk's words cost a median query ten times
        over: only the tokens starting with the first token's `prefix` are looked up,
        found by `str.find`, and those are few; then the tokens after each.
        """
        first, rest = phrase[0], phrase[1:]
        title_end = len(chunk.title)
        start = lowered.find(first.prefix)
        while start >= 0:
            # A match inside a word is no token: a token starts after a non-alphanumeric.
            # (A prefix that is no letter or digit, from a stem no ASCII token has, starts
            # no token here.)
            word = _ASCII_RUN.match(lowered, start)
            if word is not None and (not start or not lowered[start - 1].isalnum()):
                column_end = title_end if start < title_end else len(lowered)
                if self.key(word.group()) == first.key and self._follows(
                    rest, lowered, word.end(), column_end
                ):
                    return True
            start = lowered.find(first.prefix, start + 1)
        return False

    def _follows(self, rest: tuple[Token, ...], lowered: str, end: int, column_end: int) -> bool:
        """Whether the tokens after `end` are `rest`'s, before `column_end` (the end of the
        title or of the text: a phrase stands in one column)."""
        for token in rest:
            word = _ASCII_NEXT_RUN.match(lowered, end)
            if word is None or word.start(1) >= column_end:
                return False
            if self.key(word.group(1)) != token.key:
                return False
            end = word.end()
        return True

    def _phrases(self, phrases: tuple[tuple[Token, ...], ...], chunk: Chunk) -> list[bool]:
        """For each phrase, whether the chunk's title or text holds its tokens in a row,
        every token of the chunk looked up."""
        columns = [
            [self.key(token) for token in fts5_tokens(chunk.title)],
            [self.key(token) for token in fts5_tokens(chunk.text)],
        ]
        return [
            any(in_a_row(tuple(token.key for token in phrase), column) for column in columns)
            for phrase in phrases
        ]


def in_a_row(keys: tuple[Key, ...], column: list[Key]) -> bool:
    """Whether `keys` stand next to each other, in order, somewhere in `column`."""
    width = len(keys)
    return any(
        tuple(column[start : start + width]) == keys for start in range(len(column) - width + 1)
    )
