"""Turning scored candidates into a ranking with the stable (source, position) tie-break."""

from __future__ import annotations

import numpy as np

from pytest_qualbench.engine.bm25 import DocIds, Floats


def top(candidates: DocIds, scores: Floats, depth: int) -> DocIds:
    """The `depth` best candidates by score; equal scores keep doc-id (source, position) order.

    Only candidates scoring at least the depth-th best score can be among the
    best `depth`, so a linear partition leaves those few to sort: an any-term
    fallback ranks tens of thousands of candidates for a layer of 100.
    """
    if 0 < depth < len(candidates):
        threshold = np.partition(scores, len(scores) - depth)[len(scores) - depth]
        contenders = scores >= threshold
        candidates, scores = candidates[contenders], scores[contenders]
    order = np.lexsort((candidates, -scores))[:depth]
    ranked: DocIds = candidates[order]
    return ranked
