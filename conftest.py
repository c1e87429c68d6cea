"""Root conftest: pytester for the plugin's own tests; the shipped benchmark's known failures."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

BENCH_DIR = Path(__file__).resolve().parent / "bench_fixtures"
KNOWN_FAILURES = BENCH_DIR / "known_failures.txt"


def known_failures(path: Path = KNOWN_FAILURES) -> dict[str, str]:
    """case_id -> what failed and why, from the list's lines that are not comments."""
    failures = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            case_id, _, why = line.partition(" ")
            failures[case_id] = " ".join(why.split())
    return failures


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the built-in engine's known failures on the shipped benchmark as xfail.

    They still run and count in every metric and floor; only the item outcome changes.
    The list describes the built-in engine with every check, so another engine gets no
    marks, and narrowed checks get non-strict ones (a layer-only failure then passes).
    """
    if config.getoption("qualbench_engine", None) or config.getini("qualbench_engine"):
        return
    strict = not config.getoption("qualbench_checks", None) and not config.getini(
        "qualbench_checks"
    )
    failures = known_failures()
    for item in items:
        why = failures.get(item.name)
        if why is not None and item.path.resolve().parent == BENCH_DIR:
            item.add_marker(pytest.mark.xfail(reason=f"known failure: {why}", strict=strict))
