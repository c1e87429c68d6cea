"""Issue 18's targets at 100k chunks of each corpus, checked against measurements of this same run."""

from __future__ import annotations

import pytest

from benchmarks.ledger import TARGET_SCALE, TARGETS, Ledger, Target


@pytest.mark.parametrize("target", TARGETS, ids=[target.name for target in TARGETS])
def test_ratio_target(ledger: Ledger, corpus_name: str, scale: str, target: Target) -> None:
    if scale != TARGET_SCALE:
        pytest.skip(f"ratio targets apply at {TARGET_SCALE} chunks")
    value = target.value(ledger, corpus_name, scale)
    if value is None:
        pytest.skip(f"{target.name}: not every figure was measured in this run")
    assert target.met(value), f"{target.name} = {value:.3f}, bound {target.bound}"
