"""A second benchmark corpus whose words are compound identifiers, as in code, config and logs.

Words are glued from a few dozen short morphemes (`poolcachelo`, `shardbusnodecache`),
so a handful of trigrams occur in most chunks and a query word's trigrams meet in
many chunks that do not hold the word: the case `benchmarks/corpus.py`, whose words
are mostly distinct pseudo-words, does not exercise. Issue 28 found the engine 6-7x
further from tantivy on such a corpus than on that one.

Same shape as `benchmarks.corpus`: `build_corpus(chunk_count, query_count)` gives a
`Corpus` of one-chunk plaintext entries and `Query` records. Chunk i depends only
on (SEED, i // BLOCK_CHUNKS), so each scale is a prefix of the next; queries come
from the first block, so every scale answers the same queries.
"""

from __future__ import annotations

import itertools
import random
from functools import cache

import numpy as np

from benchmarks.corpus import (
    BLOCK_CHUNKS,
    QUERY_COUNT,
    TYPO_SHARE,
    Corpus,
    Query,
    zipf_cumulative_weights,
)
from pytest_qualbench.fixtures.schema import SOURCE_KINDS, Entry

SCALES = {"1k": 1_000, "10k": 10_000, "100k": 100_000, "1M": 1_000_000}
SEED = 20261207
MORPHEMES = (
    "pool",
    "cache",
    "lo",
    "shard",
    "bus",
    "node",
    "map",
    "key",
    "net",
    "log",
    "io",
    "db",
    "buf",
    "req",
    "res",
    "conn",
    "mgr",
    "sync",
    "id",
    "idx",
    "ptr",
    "len",
    "max",
    "min",
    "cfg",
    "env",
    "run",
    "job",
    "task",
    "queue",
    "lock",
    "hash",
    "tx",
    "rx",
    "get",
    "set",
    "ack",
    "seq",
    "ttl",
    "hi",
    "rate",
    "peer",
    "ring",
    "slot",
    "page",
    "row",
)
MIN_MORPHEMES = 2
MAX_MORPHEMES = 4
COMPOUND_WORDS = 30_000
ZIPF_EXPONENT = 1.07
MIN_WORDS = 50
MAX_WORDS = 200
# 12 words a line keeps a chunk of MAX_WORDS within 17 lines: the plaintext chunker
# keeps a text of at most 20 lines whole, so one entry is one chunk.
WORDS_PER_LINE = 12
# What follows a word inside a line, by style: code, config keys, log lines.
STYLES = ("code", "config", "logs")
SEPARATORS = {
    "code": (" = ", ".", "(", ", ", ") ", " "),
    "config": (".", ".", " = ", " "),
    "logs": (" ", " ", ": ", "="),
}


@cache
def compound_words() -> tuple[str, ...]:
    """COMPOUND_WORDS distinct compounds of 2-4 morphemes, in Zipf rank order.

    Morphemes are drawn by their own Zipf ranks, so the first few (pool, cache, lo)
    are in most compounds and their trigrams in most chunks.
    """
    rng = random.Random(f"{SEED}:compounds")
    weights = zipf_cumulative_weights(len(MORPHEMES), ZIPF_EXPONENT).tolist()
    words: dict[str, None] = {}
    while len(words) < COMPOUND_WORDS:
        size = rng.randint(MIN_MORPHEMES, MAX_MORPHEMES)
        parts = rng.choices(MORPHEMES, cum_weights=weights, k=size)
        words.setdefault("".join(parts))
    return tuple(words)


@cache
def _word_array() -> np.ndarray:
    return np.array(compound_words(), dtype=object)


@cache
def _word_weights() -> np.ndarray:
    return zipf_cumulative_weights(COMPOUND_WORDS, ZIPF_EXPONENT)


def build_corpus(chunk_count: int, query_count: int = QUERY_COUNT) -> Corpus:
    """The first chunk_count chunks of the stream and the shared query set."""
    blocks = range(-(-chunk_count // BLOCK_CHUNKS))
    entries = itertools.chain.from_iterable(block_entries(block)[0] for block in blocks)
    return Corpus(
        entries=tuple(itertools.islice(entries, chunk_count)),
        queries=build_queries(query_count),
    )


def block_entries(block: int) -> tuple[list[Entry], list[list[str]]]:
    """Chunks block*BLOCK_CHUNKS onwards and each one's words, drawn seeded by (SEED, block).

    Words and separators are drawn for the whole block at once and glued by numpy's
    object arithmetic: the 1M corpus is 125M words, too many for a Python loop each.
    """
    rng = np.random.default_rng([SEED, block])
    counts = rng.integers(MIN_WORDS, MAX_WORDS + 1, size=BLOCK_CHUNKS)
    total = int(counts.sum())
    cumulative = _word_weights()
    picks = np.searchsorted(cumulative, rng.random(total) * cumulative[-1], side="right")
    words = _word_array()[picks]
    separator_draws = rng.random(total)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    first = block * BLOCK_CHUNKS
    style_of_word = np.repeat((first + np.arange(BLOCK_CHUNKS)) % len(STYLES), counts)
    separators = np.empty(total, dtype=object)
    for number, style in enumerate(STYLES):
        options = np.array(SEPARATORS[style], dtype=object)
        of_style = style_of_word == number
        separators[of_style] = options[(separator_draws[of_style] * len(options)).astype(int)]
    # Position of each word inside its chunk: the last word of a line ends it.
    place = np.arange(total) - np.repeat(starts, counts)
    line_end = (place % WORDS_PER_LINE == WORDS_PER_LINE - 1) | (
        place == np.repeat(counts, counts) - 1
    )
    separators[line_end] = "\n"
    glued = (words + separators).tolist()
    entries: list[Entry] = []
    chunk_words: list[list[str]] = []
    for slot, (start, count) in enumerate(zip(starts.tolist(), counts.tolist(), strict=True)):
        index = first + slot
        text = "".join(glued[start : start + count]).rstrip()
        entries.append(compound_entry(index, STYLES[index % len(STYLES)], text))
        chunk_words.append(words[start : start + count].tolist())
    return entries, chunk_words


def compound_entry(index: int, style: str, text: str) -> Entry:
    return Entry(
        id=f"compound_{index:07d}",
        content_type="plaintext",
        haystack=text,
        source_label=f"compound-{style}-{index:07d}",
        source_kind=SOURCE_KINDS[index % len(SOURCE_KINDS)],
        cases=(),
        path="<synthetic>",
        line=index + 1,
    )


def build_queries(count: int = QUERY_COUNT) -> tuple[Query, ...]:
    """`count` queries of 2-4 distinct words of a chunk of the first block; a quarter
    drop one letter (past the first) of their longest word."""
    rng = random.Random(f"{SEED}:queries")
    entries, chunk_words = block_entries(0)
    queries: list[Query] = []
    while len(queries) < count:
        slot = rng.randrange(len(entries))
        terms = rng.sample(sorted(set(chunk_words[slot])), rng.randint(2, 4))
        has_typo = rng.random() < TYPO_SHARE
        if has_typo:
            longest = max(range(len(terms)), key=lambda i: (len(terms[i]), -i))
            word = terms[longest]
            position = rng.randrange(1, len(word) - 1)
            terms[longest] = word[:position] + word[position + 1 :]
        queries.append(
            Query(text=" ".join(terms), source_entry_id=entries[slot].id, has_typo=has_typo)
        )
    return tuple(queries)
