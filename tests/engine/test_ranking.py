"""The ranking of scored candidates: best score first, ties in doc-id order."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from pytest_qualbench.engine.ranking import top


def test_ties_keep_doc_order_across_the_depth_cut() -> None:
    candidates = np.array([9, 2, 7, 4, 5], dtype=np.int64)
    scores = np.array([1.0, 0.5, 0.5, 2.0, 0.5])
    assert top(candidates, scores, 3).tolist() == [4, 9, 2]
    assert top(candidates, scores, 4).tolist() == [4, 9, 2, 5]
    assert top(candidates, scores, 9).tolist() == [4, 9, 2, 5, 7]


@given(
    st.lists(st.tuples(st.integers(0, 60), st.sampled_from([0.0, 0.25, 1.0, 1.5])), max_size=40),
    st.integers(1, 45),
)
def test_top_equals_sorting_every_candidate(scored: list[tuple[int, float]], depth: int) -> None:
    # Few distinct scores: most candidates tie, many of them across the depth cut.
    by_doc = dict(scored)
    candidates = np.array(list(by_doc), dtype=np.int64)
    scores = np.array(list(by_doc.values()), dtype=np.float64)
    expected = sorted(by_doc, key=lambda doc: (-by_doc[doc], doc))[:depth]
    assert top(candidates, scores, depth).tolist() == expected
