"""A layer's ranking, as fusion reads it: the docs, how many match in full, their scores."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_qualbench.engine.arrays import DocIds, Floats


@dataclass(frozen=True)
class LayerRanking:
    """A layer's ranked doc ids and their scores; the first `matched_in_full` match every term.

    The docs after those are the layer's any-term fill: each shares only some of the
    query's words with it. Fusion labels a result by the layers that match it in full.
    """

    docs: DocIds
    matched_in_full: int
    # The layer's BM25 score of each doc of `docs`: fusion weighs the gaps between them.
    scores: Floats
