"""Reciprocal Rank Fusion of the layers' rankings (Cormack, Clarke and Buettcher, 2009),
optionally with each layer's score gaps added."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from pytest_qualbench.engine.kernel import walks

RRF_K = 60
# The scores of a ranking fused without score gaps: never read.
NO_SCORES = np.empty(0, dtype=np.float64)


def rrf_contribution(rank: int, k: int = RRF_K) -> float:
    """One ranking's RRF share 1 / (k + rank), rank counted from 1 (Cormack et al. 2009)."""
    return 1.0 / (k + rank)


def trigram_weight(words: int, full_weight_words: int) -> float:
    """The trigram ranking's RRF weight: 1 up to `full_weight_words` words, then falling as 1/words.

    A long query's trigrams match nearly every chunk somewhere, so that ranking says
    little more than the porter one; weighing it fully drowns the porter ranking.
    """
    return 1.0 if words <= full_weight_words else full_weight_words / words


def layer_label(layers: Sequence[str]) -> str:
    """`porter`, `trigram`, or `rrf(porter+trigram)` when several layers found the result."""
    return layers[0] if len(layers) == 1 else f"rrf({'+'.join(layers)})"


class Fused(NamedTuple):
    """A document's fused score and its label: the layers that found it, in layer order
    (`layer_label`). A named tuple, not a frozen dataclass: a search makes ten, and a
    frozen dataclass's `__init__` costs 2.5 times as much.

    A layer found a doc when it matched the doc in full (`fuse`'s `matched_in_full`);
    a doc no layer matched in full came from the layers' any-term fill, and was
    found by every layer that ranked it.
    """

    doc: int
    score: float
    label: str


def fuse(
    rankings: Sequence[tuple[str, Sequence[int] | npt.NDArray[np.integer]]],
    k: int = RRF_K,
    weights: Sequence[float] = (),
    limit: int | None = None,
    matched_in_full: Sequence[int] = (),
    layer_scores: Sequence[npt.NDArray[np.float64]] = (),
    gap_weight: float = 0.0,
) -> list[Fused]:
    """Sum each doc's RRF shares over the layers; ties keep doc-id (source, position) order.

    A ranking lists each doc once. `weights` scales each ranking's shares (weighted
    RRF; all 1 when not given); `limit` keeps only the best that many. The shares
    are added layer by layer from 0.0, as `rrf_contribution` sums them one at a
    time, so every score is that sum to the last bit.

    `matched_in_full` says how many of each ranking's first docs match the query in
    full (every term); the rest are its any-term fill. A doc is then labeled with
    the layers that match it in full, and only a doc none does with every layer
    that ranked it: a layer whose fill reaches a doc through one shared word has not
    found what the query asks for (the fixture guide's "single-layer values are
    correct when the other layer genuinely cannot match"). Not given, every ranked
    doc counts as a full match.

    With `gap_weight` > 0, each ranking's share at a doc also gets `gap_weight` times
    the doc's score gap: its score in `layer_scores[ranking]` less the list's lowest,
    over the list's spread (no gap when that is 0). The spread is the scores' population
    standard deviation, computed as numpy's `std` computes it, to the bit: z-score
    normalisation (Montague and Aslam 2001) shifted so that the lowest listed doc, like
    every doc the list does not hold, counts 0. RRF alone keeps only the ranks, so a doc
    far ahead of the next in a layer's scores counts no more than one barely ahead. At 0
    the shares are RRF's, bit for bit.

    The spreads, the sums, the ranking and the labels are computed in compiled code
    (`walks.fused`): with numpy they were a sixth of a median query.
    """
    gapped = bool(gap_weight)
    docs, scores, found = walks.fused(
        [
            (
                np.ascontiguousarray(ranking, dtype=np.int64),
                layer_scores[position] if gapped else NO_SCORES,
                weights[position] if weights else 1.0,
                matched_in_full[position] if matched_in_full else len(ranking),
            )
            for position, (_, ranking) in enumerate(rankings)
        ],
        k,
        gap_weight,
        -1 if limit is None else limit,
    )
    names = [layer for layer, _ in rankings]
    # Two layers make at most three labels: each is made once.
    label_of = {
        bits: layer_label([name for position, name in enumerate(names) if bits >> position & 1])
        for bits in set(found)
    }
    return [
        Fused(doc, score, label_of[bits])
        for doc, score, bits in zip(docs, scores, found, strict=True)
    ]
