"""Types of the compiled posting walks (`_postings.c`)."""

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

def add_scores(
    local: npt.NDArray[np.uint16],
    bounds: npt.NDArray[np.int64],
    segments: int,
    dense_at: npt.NDArray[np.int64],
    dense_bits: npt.NDArray[np.uint64],
    dense_ranks: npt.NDArray[np.uint16],
    weights: npt.NDArray[np.generic],
    norms: npt.NDArray[np.float64],
    terms: npt.NDArray[np.int64],
    idfs: npt.NDArray[np.float64],
    query_weights: npt.NDArray[np.float64],
    k1: float,
    candidates: npt.NDArray[np.int64],
    totals: npt.NDArray[np.float64],
    /,
) -> None: ...
def best_of(
    local: npt.NDArray[np.uint16],
    bounds: npt.NDArray[np.int64],
    segments: int,
    dense_at: npt.NDArray[np.int64],
    dense_bits: npt.NDArray[np.uint64],
    dense_ranks: npt.NDArray[np.uint16],
    weights: npt.NDArray[np.generic],
    norms: npt.NDArray[np.float64],
    terms: npt.NDArray[np.int64],
    idfs: npt.NDArray[np.float64],
    query_weights: npt.NDArray[np.float64],
    k1: float,
    candidates: npt.NDArray[np.int64],
    depth: int,
    bounded: bool,
    /,
) -> tuple[bytearray, bytearray]: ...
def every_then_any(
    local: npt.NDArray[np.uint16],
    bounds: npt.NDArray[np.int64],
    segments: int,
    dense_at: npt.NDArray[np.int64],
    dense_bits: npt.NDArray[np.uint64],
    dense_ranks: npt.NDArray[np.uint16],
    weights: npt.NDArray[np.generic],
    norms: npt.NDArray[np.float64],
    terms: npt.NDArray[np.int64],
    idfs: npt.NDArray[np.float64],
    query_weights: npt.NDArray[np.float64],
    k1: float,
    keys: npt.NDArray[np.int64],
    visible: npt.NDArray[np.bool_],
    depth: int,
    fill_below: int,
    bounded: bool,
    /,
) -> tuple[bytearray, bytearray, int]: ...
def chunks_holding(
    local: npt.NDArray[np.uint16],
    bounds: npt.NDArray[np.int64],
    segments: int,
    dense_at: npt.NDArray[np.int64],
    dense_bits: npt.NDArray[np.uint64],
    dense_ranks: npt.NDArray[np.uint16],
    words: npt.NDArray[np.int64],
    group_ends: npt.NDArray[np.int64],
    visible: npt.NDArray[np.bool_],
    /,
) -> tuple[bytearray, bytearray]: ...
def fused(
    rankings: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], float, int]],
    k: int,
    gap_weight: float,
    limit: int,
    /,
) -> tuple[list[int], list[float], list[int]]: ...
def words_first(
    local: npt.NDArray[np.uint16],
    bounds: npt.NDArray[np.int64],
    segments: int,
    dense_at: npt.NDArray[np.int64],
    dense_bits: npt.NDArray[np.uint64],
    dense_ranks: npt.NDArray[np.uint16],
    words: npt.NDArray[np.int64],
    docs: npt.NDArray[np.int64],
    scores: npt.NDArray[np.float64],
    /,
) -> tuple[bytearray, bytearray]: ...
def trigram_ids(keys: npt.NDArray[np.int64], word: str, /) -> list[int]: ...
def words_containing(
    keys: npt.NDArray[np.int64],
    local: npt.NDArray[np.uint16],
    bounds: npt.NDArray[np.int64],
    segments: int,
    dense_at: npt.NDArray[np.int64],
    dense_bits: npt.NDArray[np.uint64],
    dense_ranks: npt.NDArray[np.uint16],
    words: list[str],
    word: str,
    few: int,
    /,
) -> tuple[bytearray, int]: ...
def known_terms(
    bounds: npt.NDArray[np.int64],
    segments: int,
    terms: Sequence[int],
    query_weights: Sequence[float],
    size: int,
    /,
) -> tuple[bytearray, bytearray, bytearray]: ...
