"""Reciprocal Rank Fusion of the layers' rankings (Cormack, Clarke and Buettcher, 2009)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

RRF_K = 60


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


@dataclass(frozen=True)
class Fused:
    """A document's fused score and the layers that ranked it, in layer order."""

    doc: int
    score: float
    layers: tuple[str, ...]

    @property
    def label(self) -> str:
        return layer_label(self.layers)


def fuse(
    rankings: Sequence[tuple[str, Sequence[int]]],
    k: int = RRF_K,
    weights: Sequence[float] = (),
) -> list[Fused]:
    """Sum each doc's RRF shares over the layers; ties keep doc-id (source, position) order.

    `weights` scales each ranking's shares (weighted RRF; all 1 when not given).
    """
    scores: dict[int, float] = {}
    layers: dict[int, list[str]] = {}
    for position, (layer, ranking) in enumerate(rankings):
        weight = weights[position] if weights else 1.0
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + weight * rrf_contribution(rank, k)
            layers.setdefault(doc, []).append(layer)
    fused = [Fused(doc, scores[doc], tuple(layers[doc])) for doc in scores]
    fused.sort(key=lambda item: (-item.score, item.doc))
    return fused
