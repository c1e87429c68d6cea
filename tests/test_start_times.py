"""Cold versus seeded start: the measuring process, its cache handling, the rows."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_qualbench.sections import start_times
from pytest_qualbench.sections.start_times import measure, speedup, start_row
from tests.conftest import entry

ENGINE = "pytest_qualbench.engine:Engine"


@pytest.fixture
def request_for(tmp_path: Path) -> dict[str, Any]:
    fixture = tmp_path / "bench_fixtures" / "markdown.jsonl"
    fixture.parent.mkdir()
    lines = [
        entry("md_001", "# Pool\n\n## Connection Pool Settings\nmaxIdleConns defaults to 10"),
        entry("md_002", "# Retry\n\nexponential backoff with jitter"),
    ]
    fixture.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return {
        "engine": ENGINE,
        "engine_options": {},
        "fixture_paths": [str(fixture)],
        "root": str(tmp_path),
        "content_type": "markdown",
        "query": "connection pool",
        "cache_dir": str(tmp_path / ".qualbench" / "index-cache"),
        "sys_path": sys.path,
    }


def test_speedup_is_cold_over_seeded() -> None:
    assert speedup(120.0, 30.0) == 120.0 / 30.0
    assert speedup(120.0, None) is None
    assert speedup(None, 30.0) is None
    assert speedup(120.0, 0.0) is None


def test_cold_writes_the_cache_and_seeded_answers_the_same(request_for: dict[str, Any]) -> None:
    first = measure({**request_for, "mode": "cold"})
    assert first["cache_before"] == "missing" and first["ms"] > 0
    seeded = measure({**request_for, "mode": "seeded"})
    assert seeded["ms"] > 0
    assert seeded["results"] == first["results"]
    again = measure({**request_for, "mode": "cold"})
    assert again["cache_before"] == "hit"
    assert again["results"] == first["results"]


def test_engine_options_reach_the_measuring_process(request_for: dict[str, Any]) -> None:
    measure({**request_for, "mode": "cold"})
    tuned = {**request_for, "engine_options": {"k1": "1.5", "fuzzy": "fallback"}}
    # Another config is another cache key: the default engine's index is not reused.
    assert measure({**tuned, "mode": "cold"})["cache_before"] == "stale"
    assert measure({**tuned, "mode": "cold"})["cache_before"] == "hit"
    assert "ms" in measure({**tuned, "mode": "seeded"})


def test_a_changed_fixture_byte_makes_the_cache_stale(request_for: dict[str, Any]) -> None:
    measure({**request_for, "mode": "cold"})
    fixture = Path(request_for["fixture_paths"][0])
    fixture.write_bytes(fixture.read_bytes().replace(b"jitter", b"jittery"))
    assert measure({**request_for, "mode": "cold"})["cache_before"] == "stale"


def test_a_truncated_cache_is_rebuilt(request_for: dict[str, Any]) -> None:
    measure({**request_for, "mode": "cold"})
    path = Path(request_for["cache_dir"]) / "markdown.idx"
    path.write_bytes(path.read_bytes()[:100])
    assert measure({**request_for, "mode": "seeded"}) == {
        "error": "cache corrupt right after the cold run wrote it"
    }
    assert measure({**request_for, "mode": "cold"})["cache_before"] == "corrupt"
    assert "ms" in measure({**request_for, "mode": "seeded"})


def test_row_and_summary_flag_differing_results_and_errors() -> None:
    row = start_row(
        "q", {"ms": 90.0, "cache_before": "hit", "results": "a"}, {"ms": 30.0, "results": "b"}
    )
    assert row == {
        "query": "q",
        "cold_ms": 90.0,
        "seeded_ms": 30.0,
        "ratio": 3.0,
        "cache_before": "hit",
        "same_results": False,
    }
    failed = start_row("q", {"error": "measuring process exited 1: PicklingError: nope"}, {})
    assert failed["cold_ms"] is None and failed["same_results"] is None
    section = {
        "by_content_type": {"json": failed, "markdown": row},
        "overall": {"cold_ms": None, "seeded_ms": None, "ratio": None},
    }
    lines = start_times.summary_lines(section)
    assert lines[2].split()[:4] == ["json", "-", "-", "-"]
    assert "PicklingError: nope" in lines[2]
    assert lines[3].split()[:4] == ["markdown", "90.0", "30.0", "3.0x"]
    assert lines[3].endswith("hit, seeded results DIFFER")
