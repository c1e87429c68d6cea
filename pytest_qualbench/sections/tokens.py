"""Token cost: prompt tokens of a targeted retrieval against pasting the whole corpus.

Per positive case, the tokens of the engine's top-k chunk texts are compared
with the tokens of every haystack of the case's content type (what a
"paste everything into the prompt" approach sends on each call). Counts are
exact cl100k_base when the optional `bpe-openai` package is installed (extra
`[tokens]`; its vocabulary ships inside the wheel, nothing is downloaded);
without it they are an approximation, and the report says which.

This measures input context only: not output tokens, not a bill.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import importlib.util
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pytest_qualbench.engine.types import IndexState
from pytest_qualbench.fixtures.schema import Case, Entry
from pytest_qualbench.index_cache import IndexCache

DEFAULT_TOKENS_K = 3
EXACT_ENCODING = "cl100k_base"
CHARS_PER_TOKEN = 4
APPROXIMATE_METHOD = f"approximate: ceil(characters / {CHARS_PER_TOKEN})"
TOKENS_FORMAT = "pytest_qualbench.sections.tokens 1"
# Under the tokens cache, counts of texts by digest (`KeptCounts`): of the texts runs
# retrieved (counted where the cases ran), and of the haystacks (the whole corpus).
RETRIEVED_NAME = "retrieved"
HAYSTACKS_NAME = "haystacks"
DIGEST_BYTES = 16
# 24 bytes a text: about 24 MB at most.
KEPT_TEXTS = 1_000_000


@dataclass(frozen=True)
class TokenCounter:
    """How texts are counted, and whether the count is exact."""

    method: str
    exact: bool
    count: Callable[[str], int]


def approximate_tokens(text: str) -> int:
    """OpenAI's rule of thumb for English: about 4 characters per token, rounded up."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@functools.cache
def cl100k_encoding() -> Any:
    """bpe-openai's cl100k_base encoding, imported on first use.

    Importing bpe_openai builds every encoding it ships (1.6 s on the project's
    machine), so it waits for a text no cache holds a count of.
    """
    with warnings.catch_warnings():
        # bpe-openai 0.1.4 reads its bundled vocabularies through a deprecated
        # importlib.resources call; the warning is theirs, not the user's to act on.
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        return bpe_openai.get_encoding(EXACT_ENCODING)


# Memoised per text: the same chunks come back for case after case, and
# encoding costs about 70 ns per character.
@functools.cache
def exact_tokens(text: str) -> int:
    """cl100k_base tokens of the text; encode_ordinary, so a user's text that happens
    to spell "<|endoftext|>" is just text."""
    return len(cl100k_encoding().encode_ordinary(text))


@functools.cache
def token_counter() -> TokenCounter:
    """Exact cl100k_base through bpe-openai when installed, else the labeled approximation.

    Whether it is installed is asked of the import system, not by importing it
    (see `cl100k_encoding`); an installed copy that then fails to import fails
    the count, which the token_cost section reports, rather than mislabel it.
    """
    if importlib.util.find_spec("bpe_openai") is None:
        return TokenCounter(APPROXIMATE_METHOD, False, approximate_tokens)
    version = importlib.metadata.version("bpe-openai")
    return TokenCounter(f"{EXACT_ENCODING} (bpe-openai {version})", True, exact_tokens)


class KeptCounts:
    """Token counts of texts by digest, kept in the cache's file `name` across runs for
    one counter method.

    A run that finds every text it counts already counted (unchanged fixtures
    and engine) neither imports the tokenizer nor encodes anything, and a run
    after an edit counts only the texts the edit changed. Stored are this run's
    texts first, then earlier runs' others, up to KEPT_TEXTS: a `-k` run does not
    evict what a full run counted, and the file stays bounded.
    """

    def __init__(self, counter: TokenCounter, cache: IndexCache | None, name: str) -> None:
        self.counter = counter
        self.cache = cache
        self.name = name
        self.key = f"{TOKENS_FORMAT} {name}\0{counter.method}"
        self.kept = {} if cache is None else _kept_counts(cache, name, self.key)
        # This run's texts: by the text itself (a str caches its hash, and the same
        # chunk comes back case after case), each digested once, on first sight.
        self.used: dict[str, tuple[bytes, int]] = {}
        self.counted_any = False

    def count(self, text: str) -> int:
        known = self.used.get(text)
        if known is not None:
            return known[1]
        digest = _digest(text)
        tokens = self.kept.get(digest)
        if tokens is None:
            tokens = self.counter.count(text)
            self.counted_any = True
        self.used[text] = (digest, tokens)
        return tokens

    def store(self) -> None:
        """Keep this run's counts (and earlier ones) for the next run; nothing when all were kept."""
        if self.cache is None or not self.counted_any:
            return
        this_run = dict(self.used.values())
        merged = {**this_run, **{d: n for d, n in self.kept.items() if d not in this_run}}
        digests = list(merged)[:KEPT_TEXTS]
        arrays = {
            "digests": np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(-1, DIGEST_BYTES),
            "counts": np.fromiter(map(merged.__getitem__, digests), np.int64, len(digests)),
        }
        with contextlib.suppress(OSError):
            self.cache.store_state(self.name, self.key, IndexState(arrays, {}))


def _digest(text: str) -> bytes:
    """A text's key in the kept counts: 16 bytes of BLAKE2b over its UTF-8."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=DIGEST_BYTES).digest()


def _kept_counts(cache: IndexCache, name: str, key: str) -> dict[bytes, int]:
    """What `KeptCounts.store` left in `name` under `key`; nothing when it is missing or
    not its shape."""
    state, _ = cache.load_state(name, key)
    if state is None:
        return {}
    digests, counts = state.arrays.get("digests"), state.arrays.get("counts")
    if not isinstance(digests, np.ndarray) or not isinstance(counts, np.ndarray):
        return {}
    if digests.dtype != np.uint8 or digests.ndim != 2 or digests.shape[1] != DIGEST_BYTES:
        return {}
    if counts.dtype != np.int64 or counts.shape != (len(digests),) or np.any(counts < 0):
        return {}
    blob = digests.tobytes()
    keys = [blob[start : start + DIGEST_BYTES] for start in range(0, len(blob), DIGEST_BYTES)]
    return dict(zip(keys, counts.tolist(), strict=True))


def reduction_percent(retrieved: float, whole: float) -> float | None:
    """Context-token reduction: 100 * (1 - retrieved / whole); None for an empty corpus."""
    return None if whole == 0 else 100.0 * (1.0 - retrieved / whole)


def token_cost(
    cases: Sequence[Case],
    entries_of: Callable[[str], Sequence[Entry]],
    retrieved: Mapping[str, int],
    *,
    k: int,
    counter: TokenCounter,
    cache: IndexCache | None = None,
) -> dict[str, Any]:
    """The report's `token_cost` section over the positive cases.

    `retrieved[case_id]` is the token count of the engine's first k result
    texts for that case, counted with the same `counter`. With a `cache`, each
    haystack's count is kept there (`KeptCounts`): counting a corpus of 50k
    entries took 7 s, and an edit to one entry made a run count them all again
    when the kept figure was each content type's total.
    """
    positives = sorted((case for case in cases if not case.is_negative), key=lambda c: c.case_id)
    haystacks = KeptCounts(counter, cache, HAYSTACKS_NAME)
    corpus_tokens = {
        content_type: sum(haystacks.count(entry.haystack) for entry in entries_of(content_type))
        for content_type in sorted({case.content_type for case in positives})
    }
    haystacks.store()
    by_type = {
        content_type: cost_row(
            [retrieved[case.case_id] for case in positives if case.content_type == content_type],
            [tokens for case in positives if case.content_type == content_type],
        )
        for content_type, tokens in corpus_tokens.items()
    }
    overall = cost_row(
        [retrieved[case.case_id] for case in positives],
        [corpus_tokens[case.content_type] for case in positives],
    )
    return {
        "k": k,
        "method": counter.method,
        "exact": counter.exact,
        "overall": overall,
        "by_content_type": by_type,
    }


def cost_row(retrieved: Sequence[int], whole: Sequence[int]) -> dict[str, Any]:
    """Mean tokens per call, retrieved and pasted whole, and the reduction, over cases."""
    cases = len(retrieved)
    retrieved_mean = sum(retrieved) / cases if cases else 0.0
    whole_mean = sum(whole) / cases if cases else 0.0
    return {
        "cases": cases,
        "retrieved_tokens_per_call": retrieved_mean,
        "corpus_tokens_per_call": whole_mean,
        "reduction_pct": reduction_percent(retrieved_mean, whole_mean),
    }


def summary_lines(section: Mapping[str, Any]) -> list[str]:
    """Token cost for the terminal: one row per content type and overall."""
    label = section["method"] if section["exact"] else f"{section['method']} (NOT exact)"
    lines = [
        f"token cost, top-{section['k']} retrieval vs whole corpus per call ({label})",
        f"{'content type':<14}{'cases':>6}{'top-k':>10}{'corpus':>10}{'saved':>9}",
    ]
    rows = [*section["by_content_type"].items(), ("overall", section["overall"])]
    for name, row in rows:
        saved = row["reduction_pct"]
        lines.append(
            f"{name:<14}{row['cases']:>6}{row['retrieved_tokens_per_call']:>10.1f}"
            f"{row['corpus_tokens_per_call']:>10.1f}"
            + (f"{saved:>8.1f}%" if saved is not None else f"{'-':>9}")
        )
    return lines
