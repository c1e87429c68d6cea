"""Token cost: exact counts when bpe-openai is there, a labeled approximation otherwise."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from pytest_qualbench.engine.types import IndexState, Result
from pytest_qualbench.evaluation.runner import BenchRun
from pytest_qualbench.fixtures.schema import Case, Entry, FixtureSet
from pytest_qualbench.index_cache import IndexCache
from pytest_qualbench.sections import extra as sections
from pytest_qualbench.sections import tokens
from pytest_qualbench.sections.extra import retrieved_tokens
from pytest_qualbench.sections.tokens import (
    APPROXIMATE_METHOD,
    HAYSTACKS_NAME,
    RETRIEVED_NAME,
    KeptCounts,
    TokenCounter,
    approximate_tokens,
    reduction_percent,
    token_cost,
    token_counter,
)

# One token per whitespace-separated word: arithmetic a reader can check.
WORDS = TokenCounter("words (test)", True, lambda text: len(text.split()))


def make_entry(entry_id: str, content_type: str, haystack: str) -> Entry:
    return Entry(entry_id, content_type, haystack, entry_id, "durable", (), "t", 1)


def make_case(case_id: str, content_type: str, needles: tuple[str, ...] = ("x",)) -> Case:
    layer = "porter" if needles else "none"
    return Case(case_id, case_id, needles, layer, 0, "", content_type, "t", 1)


ENTRIES = {
    "markdown": [
        make_entry("m1", "markdown", "one two three four"),
        make_entry("m2", "markdown", "five six"),
    ],
    "json": [make_entry("j1", "json", "a b c d e f g h i j")],
}
RETRIEVED = {"md_q1": 6, "md_q2": 1, "js_q1": 0}


class FixedEngine:
    """Returns the same four texts for every query, and ignores `limit`."""

    def index(self, entries: Sequence[Entry]) -> None:
        pass

    def search(self, query: str, *, limit: int = 10, kinds: Iterable[str] = ()) -> list[Result]:
        return [Result(text) for text in ("one two", "five six", "three four", "never counted")]


@pytest.fixture
def no_token_counter_cache() -> Iterator[None]:
    token_counter.cache_clear()
    yield
    token_counter.cache_clear()


def test_approximation_is_characters_over_four_rounded_up() -> None:
    assert approximate_tokens("") == 0
    assert approximate_tokens("abcd") == 1
    assert approximate_tokens("abcde") == 2


def test_reduction_percent() -> None:
    assert reduction_percent(25.0, 1000.0) == pytest.approx(100 * (1 - 25 / 1000))
    assert reduction_percent(0.0, 0.0) is None


def test_retrieved_tokens_count_the_top_k_of_each_positive_case_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sections, "token_counter", lambda: WORDS)
    bench_run = BenchRun(FixtureSet((), "sha256:"), lambda content_type: FixedEngine(), limit=10)
    assert retrieved_tokens(bench_run, 3).counts == {}  # nothing ran yet: nothing to count
    bench_run.run_case(make_case("md_q1", "markdown"))
    bench_run.run_case(make_case("neg", "markdown", needles=()))
    # Top 3 of the four texts, even from an engine that returns more: 2 + 2 + 2.
    assert retrieved_tokens(bench_run, 3).counts == {"md_q1": 6}
    assert retrieved_tokens(bench_run, 1).counts == {"md_q1": 2}
    assert retrieved_tokens(bench_run, 0).counts == {}


def test_token_cost_arithmetic() -> None:
    cases = [
        make_case("md_q1", "markdown"),
        make_case("md_q2", "markdown"),
        make_case("js_q1", "json"),
        make_case("md_q_neg", "markdown", needles=()),
    ]
    section = token_cost(
        cases, lambda content_type: ENTRIES[content_type], RETRIEVED, k=3, counter=WORDS
    )
    assert section["k"] == 3 and section["method"] == "words (test)" and section["exact"] is True
    # markdown corpus: 4 + 2 = 6 tokens per call; the calls retrieved 6 and 1.
    markdown = section["by_content_type"]["markdown"]
    assert markdown == {
        "cases": 2,
        "retrieved_tokens_per_call": (6 + 1) / 2,
        "corpus_tokens_per_call": 6.0,
        "reduction_pct": pytest.approx(100 * (1 - 3.5 / 6)),
    }
    assert section["by_content_type"]["json"]["retrieved_tokens_per_call"] == 0.0
    assert section["by_content_type"]["json"]["reduction_pct"] == 100.0
    overall = section["overall"]
    assert overall["cases"] == 3  # the negative case is no retrieval call
    assert overall["retrieved_tokens_per_call"] == pytest.approx((6 + 1 + 0) / 3)
    assert overall["corpus_tokens_per_call"] == pytest.approx((6 + 6 + 10) / 3)
    assert overall["reduction_pct"] == pytest.approx(100 * (1 - (7 / 3) / (22 / 3)))


def test_without_bpe_openai_the_count_is_labeled_approximate(
    monkeypatch: pytest.MonkeyPatch, no_token_counter_cache: None
) -> None:
    monkeypatch.setitem(sys.modules, "bpe_openai", None)  # import raises ImportError
    counter = token_counter()
    assert counter.exact is False
    assert counter.method == APPROXIMATE_METHOD == "approximate: ceil(characters / 4)"
    assert counter.count("hello world") == 3
    section = token_cost(
        [make_case("md_q2", "markdown")], ENTRIES.__getitem__, RETRIEVED, k=3, counter=counter
    )
    lines = tokens.summary_lines(section)
    assert "(NOT exact)" in lines[0]


def test_exact_cl100k_base_counts_offline(no_token_counter_cache: None) -> None:
    pytest.importorskip("bpe_openai")
    counter = token_counter()
    assert counter.exact is True
    assert counter.method.startswith("cl100k_base (bpe-openai ")
    # Known cl100k_base encodings: [15339, 1917] and [83, 1609, 5963, 374, 2294, 0].
    assert counter.count("hello world") == 2
    assert counter.count("tiktoken is great!") == 6
    # A special token's spelling in user text is ordinary text, never an error.
    assert counter.count("<|endoftext|>") > 1


def corpus_tokens(
    entries: dict[str, list[Entry]], counter: TokenCounter, cache: IndexCache
) -> dict[str, float]:
    """token_cost's whole-corpus tokens per content type, one positive case of each."""
    cases = [make_case(f"{content_type}_q1", content_type) for content_type in entries]
    retrieved = {case.case_id: 0 for case in cases}
    section = token_cost(cases, entries.__getitem__, retrieved, k=3, counter=counter, cache=cache)
    return {
        content_type: row["corpus_tokens_per_call"]
        for content_type, row in section["by_content_type"].items()
    }


def test_each_haystacks_count_is_kept_and_an_edit_counts_only_what_it_changed(
    tmp_path: Path,
) -> None:
    cache = IndexCache(tmp_path)
    first: list[str] = []
    assert corpus_tokens(ENTRIES, counting(first), cache) == {"markdown": 6.0, "json": 10.0}
    assert sorted(first) == ["a b c d e f g h i j", "five six", "one two three four"]
    # The same haystacks are not counted again: a counter that would say otherwise
    # still gets the kept counts.
    liar = TokenCounter(WORDS.method, True, lambda text: 1000)
    assert corpus_tokens(ENTRIES, liar, cache) == {"markdown": 6.0, "json": 10.0}
    # One entry edited: only its haystack is counted.
    edited = {**ENTRIES, "markdown": [*ENTRIES["markdown"][:1], make_entry("m2", "markdown", "x")]}
    second: list[str] = []
    assert corpus_tokens(edited, counting(second), cache)["markdown"] == 5.0
    assert second == ["x"]
    # Another counter method takes nothing kept for this one.
    other = TokenCounter("characters (test)", True, len)
    assert corpus_tokens(ENTRIES, other, cache)["markdown"] == len("one two three four") + 8


def test_haystack_and_retrieved_counts_are_kept_apart(tmp_path: Path) -> None:
    cache = IndexCache(tmp_path)
    corpus_tokens(ENTRIES, WORDS, cache)
    retrieved = KeptCounts(WORDS, cache, RETRIEVED_NAME)
    retrieved.count("q r")
    retrieved.store()
    # Storing the retrieved texts' counts leaves the haystacks' alone, and the other way round.
    tally: list[str] = []
    assert corpus_tokens(ENTRIES, counting(tally), cache) == {"markdown": 6.0, "json": 10.0}
    assert tally == []
    assert KeptCounts(counting(tally), cache, RETRIEVED_NAME).count("q r") == 2
    assert tally == []
    assert cache.path(HAYSTACKS_NAME).exists() and cache.path(RETRIEVED_NAME).exists()


def test_choosing_the_counter_does_not_import_the_tokenizer() -> None:
    pytest.importorskip("bpe_openai")
    # A fresh interpreter: this one may have imported bpe_openai in another test.
    probe = (
        "import sys\n"
        "from pytest_qualbench.sections.tokens import token_counter\n"
        "counter = token_counter()\n"
        "assert counter.exact and 'bpe_openai' not in sys.modules, sorted(sys.modules)\n"
        "assert counter.count('hello world') == 2 and 'bpe_openai' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True)


def counting(tally: list[str]) -> TokenCounter:
    """WORDS, noting each text it is asked to count."""

    def count(text: str) -> int:
        tally.append(text)
        return len(text.split())

    return TokenCounter(WORDS.method, True, count)


def test_kept_counts_are_taken_by_the_next_run_and_only_misses_are_counted(
    tmp_path: Path,
) -> None:
    cache = IndexCache(tmp_path)
    first: list[str] = []
    run = KeptCounts(counting(first), cache, RETRIEVED_NAME)
    assert [run.count(text) for text in ("a b", "c d e", "a b")] == [2, 3, 2]
    assert first == ["a b", "c d e"]
    run.store()
    second: list[str] = []
    rerun = KeptCounts(counting(second), cache, RETRIEVED_NAME)
    assert [rerun.count(text) for text in ("c d e", "f")] == [3, 1]
    assert second == ["f"]
    rerun.store()
    # Another counter method takes nothing kept for this one.
    other: list[str] = []
    assert (
        KeptCounts(TokenCounter("other", True, counting(other).count), cache, RETRIEVED_NAME).count(
            "a b"
        )
        == 2
    )
    assert other == ["a b"]


def test_a_run_that_counted_nothing_new_leaves_the_cache_alone(tmp_path: Path) -> None:
    cache = IndexCache(tmp_path)
    run = KeptCounts(WORDS, cache, RETRIEVED_NAME)
    run.count("a b")
    run.store()
    manifest = cache.path(RETRIEVED_NAME)
    before = manifest.stat().st_mtime_ns
    rerun = KeptCounts(WORDS, cache, RETRIEVED_NAME)
    rerun.count("a b")
    rerun.store()
    assert manifest.stat().st_mtime_ns == before


def test_this_runs_texts_are_kept_first_and_the_rest_up_to_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tokens, "KEPT_TEXTS", 3)
    cache = IndexCache(tmp_path)
    run = KeptCounts(WORDS, cache, RETRIEVED_NAME)
    for text in ("a", "b c", "d e f"):
        run.count(text)
    run.store()
    rerun = KeptCounts(WORDS, cache, RETRIEVED_NAME)
    rerun.count("g h i j")
    rerun.store()
    tally: list[str] = []
    last = KeptCounts(counting(tally), cache, RETRIEVED_NAME)
    # Kept: this run's one text, then the first run's in their order, up to the bound.
    assert [last.count(text) for text in ("g h i j", "a", "b c", "d e f")] == [4, 1, 2, 3]
    assert len(tally) == 1


@pytest.mark.parametrize(
    "arrays",
    [
        {"digests": np.zeros((1, 16), np.uint8), "counts": np.array([-1], np.int64)},
        {"digests": np.zeros((1, 8), np.uint8), "counts": np.array([1], np.int64)},
        {"digests": np.zeros((2, 16), np.uint8), "counts": np.array([1], np.int64)},
        {"digests": np.zeros((1, 16), np.int64), "counts": np.array([1], np.int64)},
        {"digests": np.zeros((1, 16), np.uint8), "counts": np.array([1.0])},
        {"counts": np.array([1], np.int64)},
    ],
    ids=["negative", "short digest", "lengths differ", "digest dtype", "count dtype", "missing"],
)
def test_kept_counts_not_of_their_shape_are_not_taken(
    tmp_path: Path, arrays: dict[str, npt.NDArray[Any]]
) -> None:
    cache = IndexCache(tmp_path)
    run = KeptCounts(WORDS, cache, RETRIEVED_NAME)
    # A planted entry under the right key: its digest is that of "a b".
    cache.store_state(RETRIEVED_NAME, run.key, IndexState(arrays, {}))
    tally: list[str] = []
    assert KeptCounts(counting(tally), cache, RETRIEVED_NAME).count("a b") == 2
    assert tally == ["a b"]
