"""The ratio targets at 100k chunks, checked against measurements of this same run."""

from __future__ import annotations

import pytest

from benchmarks.ledger import RATIO_TARGETS, TARGET_SCALE, Ledger


@pytest.mark.parametrize("metric", list(RATIO_TARGETS))
def test_ratio_target(ledger: Ledger, scale: str, metric: str) -> None:
    if scale != TARGET_SCALE:
        pytest.skip(f"ratio targets apply at {TARGET_SCALE} chunks")
    ratio = ledger.ratio(scale, metric)
    if ratio is None:
        pytest.skip(f"{metric} was not measured for both sides in this run")
    assert ratio <= RATIO_TARGETS[metric], f"engine/FTS5 {metric} = {ratio:.3f}"
