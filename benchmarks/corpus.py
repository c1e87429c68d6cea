"""Deterministic synthetic corpus for the performance benchmarks.

Chunks are software documentation, log excerpts and JSON records drawn from a
Zipfian vocabulary, 50-300 tokens each. Chunk i depends only on (SEED, i // BLOCK_CHUNKS), so
the 1k corpus is a prefix of the 10k corpus, which is a prefix of the 100k one,
and generating the 1k smoke corpus never pays for the larger ones.

Every chunk is one plaintext entry of at most `MAX_LINES` lines and no blank
line: the plaintext chunker keeps such an entry whole, so one entry is one
chunk and the FTS5 reference can index the very same texts.

Queries are drawn from the chunks of the 1k prefix, so every scale runs the
same 200 queries and query time can be compared across corpus sizes.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from pytest_qualbench.fixtures.schema import SOURCE_KINDS, Entry

SCALES = {"1k": 1_000, "10k": 10_000, "100k": 100_000}
# Opt-in (`--scale=1M`), never a default: only test_million runs at it, and generating
# and building 1M chunks of one corpus takes about ten minutes on a 2-core machine.
MILLION = "1M"
MILLION_CHUNKS = 1_000_000
QUERY_COUNT = 200
SEED = 20261130
MIN_TOKENS = 50
MAX_TOKENS = 300
# The plaintext chunker windows text longer than 20 lines; stay well inside one window.
MAX_LINES = 18
ZIPF_EXPONENT = 1.07
GENERATED_WORDS = 60_000
IDENTIFIER_COUNT = 6_000
IDENTIFIER_PART_WORDS = 2_000
TYPO_SHARE = 0.25
# Word tokens a log line spends on timestamp, level, component and key=value.
LOG_LINE_OVERHEAD = 9
# Word tokens a JSON record spends on its "id": "rec-N-M" member.
JSON_LINE_OVERHEAD = 4
# Chunks drawn per vectorised batch; every scale is a multiple, so scales nest.
BLOCK_CHUNKS = 1_000

STOPWORDS = [
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "for",
    "that",
    "on",
    "with",
    "as",
    "by",
    "it",
    "be",
    "this",
    "are",
    "from",
    "or",
    "at",
    "an",
    "not",
    "can",
    "if",
    "when",
    "all",
    "was",
    "will",
    "each",
    "which",
    "their",
    "has",
    "but",
    "into",
    "more",
    "than",
    "then",
    "only",
]

DOMAIN_WORDS = [
    "connection",
    "pool",
    "timeout",
    "request",
    "response",
    "server",
    "client",
    "cache",
    "index",
    "query",
    "token",
    "error",
    "retry",
    "config",
    "database",
    "table",
    "column",
    "user",
    "session",
    "auth",
    "key",
    "value",
    "file",
    "path",
    "stream",
    "buffer",
    "worker",
    "thread",
    "process",
    "memory",
    "disk",
    "network",
    "socket",
    "port",
    "host",
    "service",
    "deploy",
    "build",
    "release",
    "version",
    "update",
    "install",
    "package",
    "module",
    "function",
    "method",
    "class",
    "object",
    "string",
    "number",
    "list",
    "map",
    "queue",
    "event",
    "handler",
    "log",
    "level",
    "debug",
    "warning",
    "trace",
    "metric",
    "latency",
    "throughput",
    "batch",
    "job",
    "schedule",
    "task",
    "node",
    "cluster",
    "shard",
    "replica",
    "leader",
    "follower",
    "commit",
    "rollback",
    "transaction",
    "lock",
    "write",
    "read",
    "scan",
    "filter",
    "sort",
    "merge",
    "join",
    "split",
    "parse",
    "encode",
    "decode",
    "compress",
    "hash",
    "sign",
    "verify",
    "encrypt",
    "certificate",
    "proxy",
    "route",
    "gateway",
    "endpoint",
    "payload",
    "header",
    "body",
    "status",
    "code",
    "limit",
    "rate",
    "window",
    "backoff",
    "policy",
    "rule",
    "role",
    "permission",
    "account",
    "tenant",
    "region",
    "zone",
    "bucket",
    "snapshot",
    "backup",
    "restore",
    "migrate",
    "schema",
    "field",
    "record",
    "document",
    "chunk",
    "search",
    "rank",
    "score",
    "vector",
    "embedding",
    "model",
    "train",
    "predict",
    "evaluate",
    "feature",
    "dataset",
    "pipeline",
    "stage",
    "artifact",
    "container",
    "image",
    "volume",
    "mount",
    "namespace",
    "secret",
    "variable",
    "environment",
    "flag",
    "option",
    "default",
    "interval",
    "threshold",
    "capacity",
    "quota",
    "usage",
    "billing",
    "invoice",
    "payment",
    "order",
    "customer",
    "product",
    "inventory",
    "shipment",
    "notification",
    "email",
    "message",
    "channel",
    "topic",
    "subscriber",
    "publisher",
    "consumer",
    "producer",
    "offset",
    "partition",
    "running",
    "started",
    "stopped",
    "failed",
    "completed",
    "connected",
    "disconnected",
    "allocated",
    "released",
    "expired",
    "refreshed",
    "rejected",
    "accepted",
    "configured",
    "enabled",
    "disabled",
    "requests",
    "responses",
    "errors",
    "retries",
    "connections",
    "workers",
]

_ONSETS = (
    "b",
    "c",
    "d",
    "f",
    "g",
    "h",
    "j",
    "k",
    "l",
    "m",
    "n",
    "p",
    "qu",
    "r",
    "s",
    "t",
    "v",
    "w",
    "y",
    "z",
    "bl",
    "br",
    "ch",
    "cl",
    "cr",
    "dr",
    "fl",
    "fr",
    "gl",
    "gr",
    "kr",
    "ph",
    "pl",
    "pr",
    "sc",
    "sh",
    "sk",
    "sl",
    "sm",
    "sn",
    "sp",
    "st",
    "sw",
    "th",
    "tr",
    "wh",
    "wr",
)
_NUCLEI = (
    "a",
    "e",
    "i",
    "o",
    "u",
    "y",
    "ai",
    "au",
    "ea",
    "ee",
    "ei",
    "ie",
    "io",
    "oa",
    "oi",
    "oo",
    "ou",
    "ue",
)
_CODAS = (
    "",
    "",
    "b",
    "ck",
    "d",
    "ft",
    "g",
    "k",
    "l",
    "ld",
    "lf",
    "lt",
    "m",
    "mp",
    "n",
    "nd",
    "ng",
    "nt",
    "p",
    "r",
    "rk",
    "s",
    "sk",
    "sp",
    "st",
    "t",
    "x",
    "z",
)
_SUFFIXES = ("", "", "", "s", "ing", "ed", "er", "tion", "ness", "able", "ly")
_LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR")
_STYLES = ("docs", "logs", "json")
_WORD = re.compile(r"[A-Za-z][A-Za-z_]*")


@dataclass(frozen=True)
class Query:
    """One benchmark query and the chunk it was drawn from."""

    text: str
    source_entry_id: str
    has_typo: bool


@dataclass(frozen=True)
class Corpus:
    """Entries to index (one chunk each) and the queries to run against them."""

    entries: tuple[Entry, ...]
    queries: tuple[Query, ...]

    def texts(self) -> list[str]:
        return [entry.haystack for entry in self.entries]

    def source_recall(self, found: Sequence[Sequence[int]]) -> float:
        """The share of the queries whose source chunk is among the rows found for it."""
        row_of = {entry.id: row for row, entry in enumerate(self.entries)}
        hits = sum(
            row_of[query.source_entry_id] in rows
            for query, rows in zip(self.queries, found, strict=True)
        )
        return hits / len(self.queries)


@dataclass(frozen=True)
class Vocabulary:
    """Words and identifiers in Zipf rank order, with cumulative weights for sampling."""

    words: tuple[str, ...]
    word_weights: np.ndarray
    identifiers: tuple[str, ...]
    identifier_weights: np.ndarray


def zipf_cumulative_weights(count: int, exponent: float = ZIPF_EXPONENT) -> np.ndarray:
    """Cumulative 1/rank^s weights: Zipf's law (Zipf 1949) over ranks 1..count."""
    return np.cumsum(1.0 / np.arange(1, count + 1, dtype=np.float64) ** exponent)


def generated_words(rng: random.Random) -> Iterator[str]:
    """Endless pronounceable pseudo-words: one or two syllables and an optional suffix."""
    while True:
        syllables = (
            rng.choice(_ONSETS) + rng.choice(_NUCLEI) + rng.choice(_CODAS)
            for _ in range(rng.randint(1, 2))
        )
        yield "".join(syllables) + rng.choice(_SUFFIXES)


@cache
def vocabulary() -> Vocabulary:
    """Stopwords, then domain words, then pseudo-words; identifiers joined from them."""
    size = len(STOPWORDS) + len(DOMAIN_WORDS) + GENERATED_WORDS
    rng = random.Random(f"{SEED}:vocabulary")
    candidates = itertools.chain(STOPWORDS, DOMAIN_WORDS, generated_words(rng))
    words = tuple(itertools.islice(unique(candidates), size))
    content = words[len(STOPWORDS) :]
    identifiers: list[str] = []
    known: set[str] = set()
    while len(identifiers) < IDENTIFIER_COUNT:
        # Identifier parts come from the frequent head, as real code reuses domain words;
        # the identifiers' own Zipf ranks then make some of them common.
        first, second = (content[rng.randrange(IDENTIFIER_PART_WORDS)] for _ in range(2))
        identifier = (
            f"{first}_{second}" if rng.random() < 0.6 else first + second[:1].upper() + second[1:]
        )
        if first != second and identifier not in known:
            known.add(identifier)
            identifiers.append(identifier)
    return Vocabulary(
        words=words,
        word_weights=zipf_cumulative_weights(len(words)),
        identifiers=tuple(identifiers),
        identifier_weights=zipf_cumulative_weights(len(identifiers)),
    )


def unique(items: Iterable[str]) -> Iterator[str]:
    """Items in order, each first occurrence only."""
    seen: set[str] = set()
    for item in items:
        if item not in seen:
            seen.add(item)
            yield item


def build_corpus(chunk_count: int, query_count: int = QUERY_COUNT) -> Corpus:
    """The first chunk_count chunks of the stream and the shared query set."""
    blocks = range(-(-chunk_count // BLOCK_CHUNKS))
    entries = itertools.chain.from_iterable(map(block_entries, blocks))
    return Corpus(
        entries=tuple(itertools.islice(entries, chunk_count)),
        queries=build_queries(query_count),
    )


class ChunkDraws:
    """The random draws of one chunk, taken from its own slices of its block's batches."""

    def __init__(
        self, token_budget: int, words: list[str], identifiers: list[str], uniforms: list[float]
    ) -> None:
        self.token_budget = token_budget
        self._words = iter(words)
        self._identifiers = iter(identifiers)
        self._uniforms = iter(uniforms)

    def words(self, count: int) -> list[str]:
        return list(itertools.islice(self._words, count))

    def identifier(self) -> str:
        return next(self._identifiers)

    def chance(self, probability: float) -> bool:
        return next(self._uniforms) < probability

    def integer(self, low: int, high: int) -> int:
        """Uniform in [low, high], both ends included, like random.randint."""
        return low + int(next(self._uniforms) * (high - low + 1))

    def choice(self, options: Sequence[str]) -> str:
        return options[self.integer(0, len(options) - 1)]


@cache
def _vocabulary_arrays() -> tuple[np.ndarray, np.ndarray]:
    vocab = vocabulary()
    return np.array(vocab.words, dtype=object), np.array(vocab.identifiers, dtype=object)


def zipf_draw(items: np.ndarray, cumulative: np.ndarray, uniforms: np.ndarray) -> list[str]:
    """Inverse-CDF sampling: each uniform in [0, 1) picks the item its cumulative weight covers."""
    picks = np.searchsorted(cumulative, uniforms * cumulative[-1], side="right")
    return list(items[picks].tolist())


def block_entries(block: int) -> list[Entry]:
    """Chunks block*BLOCK_CHUNKS onwards, drawn in vectorised batches seeded by (SEED, block).

    Each chunk spends at most its token budget on words, on identifiers and on
    structure draws (a structure draw always precedes at least one token), so
    slicing every batch by the budgets gives each chunk draws of its own.
    """
    rng = np.random.default_rng([SEED, block])
    budgets = rng.integers(MIN_TOKENS, MAX_TOKENS + 1, size=BLOCK_CHUNKS).tolist()
    total = sum(budgets)
    vocab = vocabulary()
    word_items, identifier_items = _vocabulary_arrays()
    words = zipf_draw(word_items, vocab.word_weights, rng.random(total))
    identifiers = zipf_draw(identifier_items, vocab.identifier_weights, rng.random(total))
    uniforms = rng.random(2 * total).tolist()
    entries = []
    offset = 0
    for slot, budget in enumerate(budgets):
        index = block * BLOCK_CHUNKS + slot
        draws = ChunkDraws(
            budget,
            words[offset : offset + budget],
            identifiers[offset : offset + budget],
            uniforms[2 * offset : 2 * (offset + budget)],
        )
        entries.append(synthetic_entry(index, draws))
        offset += budget
    return entries


def synthetic_entry(index: int, draws: ChunkDraws) -> Entry:
    """Chunk number `index` of the stream as a plaintext entry, in the style its index picks."""
    style = _STYLES[index % len(_STYLES)]
    render = {"docs": docs_text, "logs": logs_text, "json": json_text}[style]
    return Entry(
        id=f"perf_{index:06d}",
        content_type="plaintext",
        haystack=render(draws, index),
        source_label=f"perf-{style}-{index:06d}",
        source_kind=SOURCE_KINDS[index % len(SOURCE_KINDS)],
        cases=(),
        path="<synthetic>",
        line=index + 1,
    )


def line_budgets(token_budget: int, tokens_per_line: int) -> list[int]:
    """Split a token budget into at most MAX_LINES lines of about tokens_per_line each."""
    lines = max(1, min(MAX_LINES, round(token_budget / tokens_per_line)))
    base, extra = divmod(token_budget, lines)
    return [base + (1 if line < extra else 0) for line in range(lines)]


def docs_text(draws: ChunkDraws, index: int) -> str:
    """A titled documentation paragraph with inline `identifiers`."""
    title_words = draws.words(3)
    title = " ".join(word.capitalize() for word in title_words)
    sentences: list[str] = []
    remaining = draws.token_budget - len(title_words)
    while remaining > 0:
        length = min(remaining, draws.integer(6, 20))
        words = draws.words(length)
        if draws.chance(0.3):
            words[draws.integer(0, length - 1)] = f"`{draws.identifier()}`"
        sentences.append(" ".join(words).capitalize() + ".")
        remaining -= length
    return f"{title}\n{' '.join(sentences)}"


def logs_text(draws: ChunkDraws, index: int) -> str:
    """Log lines: timestamp, level, component, message words and a key=value pair."""
    lines = []
    for line_number, budget in enumerate(line_budgets(draws.token_budget, 16)):
        second = (index * 97 + line_number * 13) % 86_400
        stamp = (
            f"2026-11-{1 + index % 28:02d}T"
            f"{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}Z"
        )
        message = " ".join(draws.words(max(1, budget - LOG_LINE_OVERHEAD)))
        lines.append(
            f"{stamp} {draws.choice(_LEVELS)} {draws.identifier()}: {message} "
            f"{draws.identifier()}={draws.integer(0, 9_999)}"
        )
    return "\n".join(lines)


def json_text(draws: ChunkDraws, index: int) -> str:
    """JSON records, one per line, keyed by identifiers with text and number values."""
    lines = []
    for line_number, budget in enumerate(line_budgets(draws.token_budget, 14)):
        # Keys and values are plain words, so members are written directly (no escaping needed).
        members = [f'"id": "rec-{index}-{line_number}"']
        keys: set[str] = set()
        remaining = budget - JSON_LINE_OVERHEAD
        while remaining > 0:
            key = draws.identifier()
            # Zipf repeats frequent keys; a record keeps each key once, as JSON objects do.
            key = f"{key}_{len(members)}" if key in keys else key
            keys.add(key)
            if draws.chance(0.3):
                members.append(f'"{key}": {draws.integer(0, 100_000)}')
                remaining -= 2
            else:
                length = min(remaining, draws.integer(2, 8))
                members.append(f'"{key}": "{" ".join(draws.words(length))}"')
                remaining -= length + 1
        lines.append("{" + ", ".join(members) + "}")
    return "\n".join(lines)


def build_queries(count: int = QUERY_COUNT) -> tuple[Query, ...]:
    """`count` queries of 2-4 words from chunks of the 1k prefix; a quarter carry a typo."""
    rng = random.Random(f"{SEED}:queries")
    stopwords = set(STOPWORDS)
    # The first block is a prefix of every scale, so every scale can answer every query.
    sources = block_entries(0)
    queries: list[Query] = []
    while len(queries) < count:
        entry = sources[rng.randrange(len(sources))]
        candidates = sorted(
            {word.lower() for word in _WORD.findall(entry.haystack)} - stopwords - {"id", "rec"}
        )
        candidates = [word for word in candidates if len(word) >= 3]
        size = rng.randint(2, 4)
        if len(candidates) < size:
            continue
        terms = rng.sample(candidates, size)
        has_typo = rng.random() < TYPO_SHARE
        if has_typo:
            longest = max(range(size), key=lambda i: (len(terms[i]), -i))
            terms[longest] = with_typo(rng, terms[longest])
        queries.append(Query(text=" ".join(terms), source_entry_id=entry.id, has_typo=has_typo))
    return tuple(queries)


def with_typo(rng: random.Random, word: str) -> str:
    """One edit (drop, swap, replace or insert) past the first letter, as a typist makes."""
    position = rng.randrange(1, len(word) - 1)
    letter = rng.choice("aeioustrnl")
    edits: Sequence[str] = (
        word[:position] + word[position + 1 :],
        word[:position] + word[position + 1] + word[position] + word[position + 2 :],
        word[:position] + letter + word[position + 1 :],
        word[:position] + letter + word[position:],
    )
    typo = edits[rng.randrange(len(edits))]
    return typo if typo != word else word[:position] + word[position + 1 :]
