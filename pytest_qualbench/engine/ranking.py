"""Turning scored candidates into a ranking with the stable (source, position) tie-break."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pytest_qualbench.engine.bm25 import DocIds, Floats


@dataclass(frozen=True)
class LayerRanking:
    """A layer's ranked doc ids; the first `matched_in_full` match every query term.

    The docs after those are the layer's any-term fill: each shares only some of the
    query's words with it. Fusion labels a result by the layers that match it in full.
    """

    docs: DocIds
    matched_in_full: int


def top(candidates: DocIds, scores: Floats, depth: int) -> DocIds:
    """The `depth` best candidates by score; equal scores keep doc-id (source, position) order.

    Only candidates scoring above the depth-th best score, and the lowest doc ids
    of those scoring it, can be among the best `depth`, so linear partitions leave
    those few to sort: an any-term fallback ranks tens of thousands of candidates
    for a layer of 100, and thousands of them can tie (same terms, same length).
    """
    if 0 < depth < len(candidates):
        threshold = np.partition(scores, len(scores) - depth)[len(scores) - depth]
        above = np.flatnonzero(scores > threshold)
        tied = np.flatnonzero(scores == threshold)
        wanted = depth - len(above)
        if wanted < len(tied):
            tied = tied[np.argpartition(candidates[tied], wanted - 1)[:wanted]]
        contenders = np.concatenate((above, tied))
        candidates, scores = candidates[contenders], scores[contenders]
    order = np.lexsort((candidates, -scores))[:depth]
    ranked: DocIds = candidates[order]
    return ranked
