"""Reciprocal Rank Fusion of the layers' rankings (Cormack, Clarke and Buettcher, 2009)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

RRF_K = 60


def rrf_contribution(rank: int, k: int = RRF_K) -> float:
    """One ranking's RRF share 1 / (k + rank), rank counted from 1 (Cormack et al. 2009)."""
    return 1.0 / (k + rank)


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


def fuse(rankings: Sequence[tuple[str, Sequence[int]]], k: int = RRF_K) -> list[Fused]:
    """Sum each doc's RRF shares over the layers; ties keep doc-id (source, position) order."""
    scores: dict[int, float] = {}
    layers: dict[int, list[str]] = {}
    for layer, ranking in rankings:
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + rrf_contribution(rank, k)
            layers.setdefault(doc, []).append(layer)
    fused = [Fused(doc, scores[doc], tuple(layers[doc])) for doc in scores]
    fused.sort(key=lambda item: (-item.score, item.doc))
    return fused
