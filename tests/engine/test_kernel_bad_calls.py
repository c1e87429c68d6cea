"""A bad call into either kernel raises a Python error: it never crashes the process.

Every argument of every exported function is swapped, one at a time, for values a
careless or hostile caller could pass (another type, dtype or shape, a strided or
misaligned view, ids past the ends, integers at their limits, NaN), and random arrays
stand in for the postings' own. Under the sanitizer stage of .ci/run the compiled
kernel runs these with AddressSanitizer and UBSan watching every read.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.kernels import BUILT_KERNELS, KERNEL_PARAMS

ERRORS = (TypeError, ValueError, OverflowError, BufferError)

# One key over one segment (docs 1 and 3 of 4), without a dense set.
LOCAL = np.array([1, 3], dtype=np.uint16)
BOUNDS = np.array([0, 2], dtype=np.int64)
NO_SET = (np.array([-1], dtype=np.int64), np.zeros(0, np.uint64), np.zeros(0, np.uint16))
POSTINGS = (LOCAL, BOUNDS, 1, *NO_SET)
SCORING = (
    np.array([2, 1], dtype=np.uint8),
    np.ones(4),
    np.array([0], dtype=np.int64),
    np.ones(1),
    np.ones(1),
    1.2,
)
IDS = np.array([1, 3], dtype=np.int64)
VISIBLE = np.ones(4, dtype=bool)


def valid_calls() -> dict[str, tuple[Any, ...]]:
    """A call of each exported function that works, to be spoiled one argument at a time."""
    keys = np.array([1 << 42 | 2 << 21 | 3], dtype=np.int64)
    word_postings = (np.array([0], np.uint16), np.array([0, 1], np.int64), 1, *NO_SET)
    return {
        "add_scores": (*POSTINGS, *SCORING, IDS, np.zeros(2)),
        "best_of": (*POSTINGS, *SCORING, IDS, 2, True),
        "every_then_any": (*POSTINGS, *SCORING, np.array([0]), VISIBLE, 2, 2, True),
        "chunks_holding": (*POSTINGS, np.array([0]), np.array([1]), VISIBLE),
        "words_first": (*POSTINGS, np.array([0]), np.array([3, 0]), np.ones(2)),
        "fused": ([(IDS, np.ones(2), 1.0, 2)], 60, 0.5, 10),
        "trigram_ids": (keys, "\x01\x02\x03"),
        "words_containing": (keys, *word_postings, ["\x01\x02\x03"], "\x01\x02\x03", 32),
        "known_terms": (BOUNDS, 1, [0, -1], [1.0, 2.0], 4),
    }


class Shrinking:
    """An int whose __index__ empties the list it sits in: reading it must not read past."""

    def __init__(self, holder: list[Any]) -> None:
        self.holder = holder

    def __index__(self) -> int:
        self.holder.clear()
        return 0

    def __float__(self) -> float:
        self.holder.clear()
        return 1.0


def spoiled(value: object) -> list[object]:
    """Values a bad caller might pass instead of `value`."""
    limits: list[object] = [-1, 2**62, -(2**62), 2**63, math.nan, "1", None]
    if isinstance(value, np.ndarray):
        wide = np.resize(value, len(value) * 2 + 1)
        unaligned = np.frombuffer(b"\0" + value.tobytes(), dtype=value.dtype, offset=1)
        edges = np.array([np.iinfo(np.int64).min, -1, np.iinfo(np.int64).max])
        return [
            value.tolist(),
            value.astype(np.float32 if value.dtype.kind != "f" else np.int64),
            np.stack([value, value]) if len(value) else value.reshape(0, 1),
            wide[::2],
            unaligned,
            value[:0],
            wide,
            value.astype(value.dtype.newbyteorder(">")) if value.dtype.itemsize > 1 else value,
            edges.astype(value.dtype) if value.dtype.kind in "iu" else np.full(len(value), np.nan),
            *limits,
        ]
    if isinstance(value, list):
        holder: list[Any] = list(value)
        holder.append(Shrinking(holder))
        return [tuple(value), value * 70, value[:0], [object()], holder, *limits]
    if isinstance(value, float):
        return [math.nan, math.inf, -1e308, *limits]
    return limits


def outcome(function: Callable[..., object], *args: object) -> None:
    """The call returns or raises one of ERRORS."""
    with contextlib.suppress(*ERRORS):
        function(*args)


@pytest.mark.parametrize("kernel", KERNEL_PARAMS)
@pytest.mark.parametrize("name", sorted(valid_calls()))
def test_every_spoiled_argument_raises_or_returns(kernel: Any, name: str) -> None:
    args = valid_calls()[name]
    getattr(kernel, name)(*args)
    for position, value in enumerate(args):
        for bad in spoiled(value):
            call = list(valid_calls()[name])
            call[position] = bad
            outcome(getattr(kernel, name), *call)


@pytest.mark.parametrize("kernel", KERNEL_PARAMS)
def test_fused_refuses_more_rankings_than_its_bits_and_bad_rankings(kernel: Any) -> None:
    ranking = (IDS, np.ones(2), 1.0, 2)
    with pytest.raises(ValueError, match="more than 63 rankings"):
        kernel.fused([ranking] * 64, 60, 0.0, 10)
    with pytest.raises(TypeError, match="a ranking"):
        kernel.fused([list(ranking)], 60, 0.0, 10)
    with pytest.raises(ValueError, match="lists a doc twice"):
        kernel.fused([(np.array([1, 1]), np.ones(2), 1.0, 2)], 60, 0.0, 10)
    with pytest.raises(ValueError, match="not finite"):
        kernel.fused([(IDS, np.array([1.0, math.nan]), 1.0, 2)], 60, 0.5, 10)
    with pytest.raises(ValueError, match="RRF constant"):
        kernel.fused([ranking], -1, 0.0, 10)


@pytest.mark.parametrize("kernel", KERNEL_PARAMS)
def test_scoring_refuses_keys_past_the_postings_and_candidates_out_of_order(kernel: Any) -> None:
    weights, norms, _, idfs, query_weights, k1 = SCORING
    with pytest.raises(ValueError, match="posting key 1 out of range"):
        kernel.best_of(
            *POSTINGS, weights, norms, np.array([1]), idfs, query_weights, k1, IDS, 2, True
        )
    for candidates in ([3, 1], [1, 1], [-1], [4]):
        with pytest.raises(ValueError):
            kernel.add_scores(*POSTINGS, *SCORING, np.array(candidates), np.zeros(len(candidates)))
    with pytest.raises(ValueError, match="k1 is not finite"):
        kernel.best_of(
            *POSTINGS, weights, norms, np.array([0]), idfs, query_weights, math.nan, IDS, 2, True
        )


@settings(max_examples=300, deadline=None)
@given(
    local=hnp.arrays(np.uint16, st.integers(0, 12)),
    bounds=hnp.arrays(np.int64, st.integers(0, 6), elements=st.integers(-3, 20)),
    segments=st.integers(-1, 3),
    dense_at=hnp.arrays(np.int64, st.integers(0, 4), elements=st.integers(-2, 40)),
    dense_bits=hnp.arrays(np.uint64, st.integers(0, 3)),
    dense_ranks=hnp.arrays(np.uint16, st.integers(0, 3)),
    ids=hnp.arrays(np.int64, st.integers(0, 5), elements=st.integers(-2, 70_000)),
    depth=st.integers(-1, 5),
)
def test_random_postings_arrays_raise_or_return(
    local: Any,
    bounds: Any,
    segments: int,
    dense_at: Any,
    dense_bits: Any,
    dense_ranks: Any,
    ids: Any,
    depth: int,
) -> None:
    postings = (local, bounds, segments, dense_at, dense_bits, dense_ranks)
    weights = np.ones(len(local), dtype=np.uint8)
    terms = np.array([0, 1], dtype=np.int64)
    scoring = (weights, np.ones(6), terms, np.ones(2), np.ones(2), 1.2)
    visible = np.ones(6, dtype=bool)
    for kernel in BUILT_KERNELS:
        outcome(kernel.add_scores, *postings, *scoring, ids, np.zeros(len(ids)))
        outcome(kernel.best_of, *postings, *scoring, ids, depth, True)
        outcome(kernel.every_then_any, *postings, *scoring, terms, visible, depth, 1, True)
        outcome(kernel.chunks_holding, *postings, terms, np.array([1, 2]), visible)
        outcome(kernel.words_first, *postings, terms, ids, np.ones(len(ids)))
        outcome(kernel.known_terms, bounds, segments, [0, 1, 2], [1.0, 1.0, 1.0], 5)
