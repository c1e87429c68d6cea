"""Turning scored candidates into a ranking with the stable (source, position) tie-break."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pytest_qualbench.engine.bm25 import DocIds, Floats


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


def top(candidates: DocIds, scores: Floats, depth: int) -> DocIds:
    """The `depth` best candidates by score (see `top_positions`)."""
    ranked: DocIds = candidates[top_positions(candidates, scores, depth)]
    return ranked


def top_positions(candidates: DocIds, scores: Floats, depth: int) -> DocIds:
    """Where the `depth` best candidates are, best first; equal scores keep doc-id order.

    Only candidates scoring above the depth-th best score, and the lowest doc ids
    of those scoring it, can be among the best `depth`, so linear partitions leave
    those few to sort: an any-term fallback ranks tens of thousands of candidates
    for a layer of 100, and thousands of them can tie (same terms, same length).
    """
    positions = np.arange(len(candidates))
    if 0 < depth < len(candidates):
        threshold = np.partition(scores, len(scores) - depth)[len(scores) - depth]
        above = np.flatnonzero(scores > threshold)
        tied = np.flatnonzero(scores == threshold)
        wanted = depth - len(above)
        if wanted < len(tied):
            tied = tied[np.argpartition(candidates[tied], wanted - 1)[:wanted]]
        positions = np.concatenate((above, tied))
        candidates, scores = candidates[positions], scores[positions]
    order = np.lexsort((candidates, -scores))[:depth]
    ranked: DocIds = positions[order]
    return ranked
