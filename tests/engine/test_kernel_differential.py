"""The compiled kernel against its reference in Python, function by function, on generated input.

Each exported function of `_postings` is called through both kernels with the same
arguments, and the results must be equal to the bit (ids, scores as bytes, labels).
The postings are built the way the engine builds them (`SegmentedIds.of`, dense sets
included), over corpora from no doc to more than one 2**16-doc segment, with empty,
single-doc, duplicated and corpus-long postings and ids at a segment's edges.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_qualbench.engine import reference_kernel
from pytest_qualbench.engine.bm25 import length_norms
from pytest_qualbench.engine.kernel import COMPILED_MODULE
from pytest_qualbench.engine.segmented_ids import SEGMENT_DOCS, SegmentedIds, Walked
from pytest_qualbench.engine.trigram_postings import trigram_postings
from tests.kernels import NOT_BUILT

_postings = pytest.importorskip(COMPILED_MODULE, reason=NOT_BUILT)

KERNELS = (_postings, reference_kernel)
EXPORTED = sorted(name for name in dir(_postings) if not name.startswith("_"))
# Generated corpora: sizes at the edges of a set's word and of a segment, and past one.
DOC_COUNTS = st.sampled_from([0, 1, 2, 3, 63, 64, 65, 200, 1500, 5000, SEGMENT_DOCS + 70])
WEIGHT_TYPES: tuple[type[np.generic], ...] = (np.uint8, np.uint16, np.float32, np.float64)
EXAMPLES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@dataclass(frozen=True)
class Index:
    """Generated postings with BM25 weights and norms, as a compiled walk takes them."""

    ids: SegmentedIds
    weights: npt.NDArray[Any]
    norms: npt.NDArray[np.float64]
    rng: np.random.Generator

    @property
    def walked(self) -> Walked:
        return self.ids.walked()

    @property
    def doc_count(self) -> int:
        return self.ids.size

    def docs(self, share: float) -> npt.NDArray[np.int64]:
        """About `share` of the docs, ascending, with the first and last always among the
        candidates drawn when any is."""
        picked = self.rng.random(self.doc_count) < share
        if picked.any():
            picked[[0, -1]] = True
        return np.flatnonzero(picked).astype(np.int64)

    def terms(self, count: int) -> npt.NDArray[np.int64]:
        """`count` keys, duplicates allowed."""
        keys = self.ids.key_count
        return self.rng.integers(0, keys, count).astype(np.int64) if keys else np.zeros(0, np.int64)


def posting_docs(rng: np.random.Generator, doc_count: int, kind: int) -> npt.NDArray[np.int64]:
    """One key's ascending docs: empty, one doc, every doc, the docs at a segment's edges,
    or a random share of sparse to dense."""
    if doc_count == 0 or kind == 0:
        return np.zeros(0, dtype=np.int64)
    if kind == 1:
        return np.array([rng.integers(doc_count)], dtype=np.int64)
    if kind == 2:
        return np.arange(doc_count, dtype=np.int64)
    if kind == 3:
        edges = [0, SEGMENT_DOCS - 1, SEGMENT_DOCS, doc_count - 1]
        return np.unique(np.array([edge for edge in edges if edge < doc_count], dtype=np.int64))
    share = [0.001, 0.01, 0.08, 0.3, 0.7][kind % 5]
    return np.flatnonzero(rng.random(doc_count) < share).astype(np.int64)


def built_index(
    doc_count: int, key_count: int, seed: int, weight_type: type[np.generic], k1: float, b: float
) -> Index:
    """Postings of `key_count` keys over `doc_count` docs, as the engine builds them."""
    rng = np.random.default_rng(seed)
    postings = [posting_docs(rng, doc_count, int(rng.integers(0, 9))) for _ in range(key_count)]
    offsets = np.concatenate(([0], np.cumsum([len(docs) for docs in postings]))).astype(np.int64)
    docs = np.concatenate(postings) if postings else np.zeros(0, dtype=np.int64)
    ids = SegmentedIds.of(offsets, docs.astype(np.int64), doc_count)
    if np.dtype(weight_type).kind == "u":
        weights = rng.integers(1, 40, len(docs)).astype(weight_type)
    else:
        weights = (rng.random(len(docs)) * 5 + 0.01).astype(weight_type)
    doc_len = rng.integers(0, 300, doc_count).astype(np.float64)
    avgdl = float(doc_len.mean()) if doc_count and doc_len.sum() else 1.0
    return Index(ids, weights, length_norms(doc_len, avgdl, k1, b), rng)


@st.composite
def indexes(draw: st.DrawFn) -> Index:
    k1, b = draw(st.sampled_from([(1.2, 0.75), (0.9, 0.4), (2.0, 1.0), (1.5, 0.0)]))
    return built_index(
        draw(DOC_COUNTS),
        draw(st.integers(1, 12)),
        draw(st.integers(0, 2**32 - 1)),
        draw(st.sampled_from(WEIGHT_TYPES)),
        k1,
        b,
    )


def scoring(index: Index, terms: npt.NDArray[np.int64]) -> tuple[Any, ...]:
    """The scoring arguments after the postings: weights, norms, terms, idfs, query weights, k1."""
    idfs = index.rng.random(len(terms)) * 4 + 0.05
    query_weights = index.rng.choice([1.0, 0.5, 1.3333333333333333, 2.0], len(terms))
    return (index.weights, index.norms, terms, idfs, query_weights, 1.2)


def both(name: str, *args: Any) -> Any:
    """What function `name` of each kernel returns for `args`; the two must be equal."""
    compiled, reference = (getattr(kernel, name)(*args) for kernel in KERNELS)
    assert compiled == reference
    return compiled


def test_the_reference_exports_every_function_of_the_extension() -> None:
    exported = sorted(
        name
        for name in dir(reference_kernel)
        if not name.startswith("_")
        and callable(getattr(reference_kernel, name))
        and getattr(getattr(reference_kernel, name), "__module__", "") == reference_kernel.__name__
    )
    assert exported == EXPORTED


def assert_added_alike(
    index: Index,
    args: tuple[Any, ...],
    candidates: npt.NDArray[np.int64],
    start: npt.NDArray[np.float64],
) -> None:
    """add_scores of each kernel, from the same totals `start`, leaves the same bits."""
    totals = [start.copy() for _ in KERNELS]
    for kernel, total in zip(KERNELS, totals, strict=True):
        kernel.add_scores(*index.walked, *args, candidates, total)
    assert totals[0].tobytes() == totals[1].tobytes()


@EXAMPLES
@given(indexes(), st.sampled_from([0.0, 0.001, 0.05, 0.5, 1.0]), st.integers(0, 6))
def test_add_scores(index: Index, share: float, term_count: int) -> None:
    candidates = index.docs(share)
    args = scoring(index, index.terms(term_count))
    assert_added_alike(index, args, candidates, index.rng.random(len(candidates)))


@EXAMPLES
@given(
    indexes(),
    st.sampled_from([0.0, 0.001, 0.05, 0.5, 1.0]),
    st.integers(0, 6),
    st.sampled_from([0, 1, 3, 10, 100, 10**6]),
    st.booleans(),
)
def test_best_of(index: Index, share: float, term_count: int, depth: int, bounded: bool) -> None:
    candidates = index.docs(share)
    args = scoring(index, index.terms(term_count))
    both("best_of", *index.walked, *args, candidates, depth, bounded)


@EXAMPLES
@given(
    indexes(),
    st.integers(0, 5),
    st.sampled_from([0, 1, 10, 100, 10**6]),
    st.sampled_from([0, 1, 10, 10**6]),
    st.booleans(),
    st.sampled_from([0.0, 0.5, 1.0]),
)
def test_every_then_any(
    index: Index, term_count: int, depth: int, fill_below: int, bounded: bool, hidden: float
) -> None:
    terms = index.terms(term_count)
    keys = terms.copy()
    if term_count and index.rng.random() < 0.2:
        keys[0] = -1  # a term the corpus does not hold
    args = scoring(index, terms)
    visible = index.rng.random(index.doc_count) >= hidden
    both("every_then_any", *index.walked, *args, keys, visible, depth, fill_below, bounded)


@EXAMPLES
@given(indexes(), st.lists(st.integers(0, 4), max_size=5), st.sampled_from([0.0, 0.3, 1.0]))
def test_chunks_holding(index: Index, group_sizes: list[int], hidden: float) -> None:
    words = index.terms(sum(group_sizes))
    ends = np.cumsum(group_sizes, dtype=np.int64)
    visible = index.rng.random(index.doc_count) >= hidden
    both("chunks_holding", *index.walked, words, ends, visible)


@EXAMPLES
@given(indexes(), st.integers(0, 3), st.sampled_from([0.0, 0.01, 0.3, 1.0]))
def test_words_first(index: Index, word_count: int, share: float) -> None:
    docs = index.docs(share)
    index.rng.shuffle(docs)
    scores = index.rng.random(len(docs))
    words = index.terms(word_count)
    both("words_first", *index.walked, words, docs, scores)


@st.composite
def rankings(
    draw: st.DrawFn,
) -> list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], float, int]]:
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    layers = []
    for _ in range(draw(st.integers(0, 4))):
        length = draw(st.sampled_from([0, 1, 2, 7, 8, 9, 100, 128, 129, 1000]))
        docs = rng.choice(max(length * 2, 1) + 10, length, replace=False).astype(np.int64)
        scores = np.sort(rng.random(length) * draw(st.sampled_from([0.0, 1.0, 30.0])))[::-1].copy()
        if length and draw(st.booleans()):
            scores[:] = scores[0]  # a spread of 0: no gaps
        weight = draw(st.sampled_from([1.0, 0.5, 0.0, 2.5]))
        layers.append((docs, scores, weight, draw(st.integers(0, length + 1))))
    return layers


@EXAMPLES
@given(
    rankings(),
    st.sampled_from([0, 1, 60]),
    st.sampled_from([0.0, 0.3, 1.0]),
    st.sampled_from([-1, 0, 1, 10, 10**6]),
)
def test_fused(
    layers: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], float, int]],
    k: int,
    gap_weight: float,
    limit: int,
) -> None:
    both("fused", layers, k, gap_weight, limit)


# NUL, a lone surrogate and a code point past the BMP among plain letters.
WORDS = st.text(alphabet=st.sampled_from("abc\u00e9\x00\ud800\U0001d518z"), max_size=8)


@EXAMPLES
@given(st.lists(WORDS, max_size=30), WORDS)
def test_trigram_ids_and_words_containing(texts: list[str], word: str) -> None:
    words = list(dict.fromkeys(texts))
    trigrams = trigram_postings(words, word_only=False)
    keys, word_ids = trigrams.keys, trigrams.ids
    both("trigram_ids", keys, word)
    for few in (-1, 0, 1, 32):
        found, own = both("words_containing", keys, *word_ids.walked(), words, word, few)
        if len(word) >= 3:
            holding = [at for at, text in enumerate(words) if word in text]
            assert np.frombuffer(found, dtype=np.int64).tolist() == holding
            assert own == (words.index(word) if word in words else -1)


@EXAMPLES
@given(indexes(), st.lists(st.integers(-2, 14), max_size=8), st.integers(0, 10**6))
def test_known_terms(index: Index, terms: list[int], size: int) -> None:
    keys = index.ids.key_count
    terms = [term for term in terms if term < keys]
    weights = [1.0 + at / 7 for at in range(len(terms))]
    both("known_terms", index.ids.bounds, index.ids.segments, terms, weights, size)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("doc_count", [20_000, SEGMENT_DOCS * 2 + 5])
def test_many_candidates_take_the_compiled_shortcuts_to_the_same_result(
    seed: int, doc_count: int
) -> None:
    # Thousands of candidates: the compiled kernel bounds scores (MaxScore), keeps a slot
    # per doc and finds rows by dense sets; every shortcut must rank as scoring all does.
    index = built_index(doc_count, 10, seed, WEIGHT_TYPES[seed % 4], 1.2, 0.75)
    terms = index.terms(6)
    args = scoring(index, terms)
    for share in (0.1, 0.6, 1.0):
        candidates = index.docs(share)
        assert len(candidates) > 1024
        for depth in (1, 10, 100):
            both("best_of", *index.walked, *args, candidates, depth, True)
        assert_added_alike(index, args, candidates, np.zeros(len(candidates)))
    visible = index.rng.random(doc_count) < 0.9
    for depth, fill_below in ((10, 10), (100, 100), (1000, 0)):
        both("every_then_any", *index.walked, *args, terms[:2], visible, depth, fill_below, True)


@pytest.mark.parametrize("name", EXPORTED)
def test_both_kernels_refuse_a_call_with_no_arguments(name: str) -> None:
    for kernel in KERNELS:
        with pytest.raises(TypeError):
            getattr(kernel, name)()
