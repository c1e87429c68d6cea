"""Hook specifications that a project's conftest.py may implement."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_qualbench.engine.types import SearchEngine


@pytest.hookspec(firstresult=True)
def pytest_qualbench_make_engine(config: pytest.Config, content_type: str) -> SearchEngine | None:
    """Return the engine that will index and search `content_type`, or None for the default.

    Called once per content type per session (per xdist worker). The returned
    engine has `index(entries)` and `search(query, *, limit, kinds)`; see
    `pytest_qualbench.engine.types.SearchEngine`.
    """
