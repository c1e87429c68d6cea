"""Turning scored candidates into a ranking with the stable (source, position) tie-break."""

from __future__ import annotations

import numpy as np

from pytest_qualbench.engine.bm25 import DocIds, Floats


def top(candidates: DocIds, scores: Floats, depth: int) -> DocIds:
    """The `depth` best candidates by score; equal scores keep doc-id (source, position) order."""
    order = np.lexsort((candidates, -scores))[:depth]
    ranked: DocIds = candidates[order]
    return ranked
