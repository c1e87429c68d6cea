"""`qualbench case` writes lose nothing (issue 25, findings 2, 11 and 20).

The command reads the fixture file, probes the engine (seconds, on a real corpus),
then writes. These run it as real processes with an engine that holds its search
until the test lets it go, so the file can change during the probe at a known point.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import entry, jsonl

REPOSITORY = Path(__file__).resolve().parent.parent
# An engine whose search announces itself, then waits for the test's go-ahead.
GATED_ENGINE = """
import os, time
from pathlib import Path
from pytest_qualbench.engine.types import Result

class Gated:
    def index(self, entries):
        self.texts = [entry.haystack for entry in entries]

    def search(self, query, *, limit=10, kinds=()):
        gate = Path(os.environ["GATE_DIR"])
        (gate / f"searching-{os.getpid()}").touch()
        deadline = time.monotonic() + 120
        while not (gate / "go").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        layer = os.environ.get("GATED_LAYER") or None
        return [Result(text, layer) for text in self.texts if query.split()[0] in text][:limit]
"""
WAIT_S = 120


def fixture_lines() -> str:
    return jsonl(
        [
            entry("md_001", "# Pool\n\nThe pool holds thirty connections.", []),
            entry("md_002", "# Replicas\n\nReplica lag above 30 s pages the owner.", []),
        ]
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nqualbench_paths = bench\nqualbench_engine = gated:Gated\n"
    )
    (tmp_path / "gated.py").write_text(GATED_ENGINE)
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "markdown.jsonl").write_text(fixture_lines())
    (tmp_path / "gate").mkdir()
    return tmp_path


def start_case(project: Path, *arguments: str, layer: str = "porter") -> subprocess.Popen[str]:
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(project), str(REPOSITORY)]),
        "GATE_DIR": str(project / "gate"),
        "GATED_LAYER": layer,
    }
    command = (
        "import sys; from pytest_qualbench.cli.qualbench import main; sys.exit(main(sys.argv[1:]))"
    )
    return subprocess.Popen(
        [sys.executable, "-c", command, "case", "bench/markdown.jsonl", *arguments],
        cwd=project,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def wait_for_searches(project: Path, count: int) -> None:
    deadline = time.monotonic() + WAIT_S
    while len(list((project / "gate").glob("searching-*"))) < count:
        assert time.monotonic() < deadline, "the engine's search never started"
        time.sleep(0.02)


def finish(process: subprocess.Popen[str]) -> str:
    output, _ = process.communicate(timeout=WAIT_S)
    assert process.returncode == 0, output
    return output


def cases_of(path: Path) -> dict[str, list[dict[str, object]]]:
    entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {str(item["id"]): list(item["cases"]) for item in entries}


def test_two_case_commands_at_once_both_land(project: Path) -> None:
    first = start_case(project, "md_001", "pool connections", "--needle", "thirty connections")
    second = start_case(project, "md_002", "Replica lag", "--needle", "Replica lag above 30 s")
    # Both have read the file and are probing: the old code wrote back two stale copies.
    wait_for_searches(project, 2)
    (project / "gate" / "go").touch()
    assert "added md_001_q1" in finish(first)
    assert "added md_002_q1" in finish(second)
    written = cases_of(project / "bench" / "markdown.jsonl")
    assert [c["case_id"] for c in written["md_001"]] == ["md_001_q1"]
    assert [c["case_id"] for c in written["md_002"]] == ["md_002_q1"]


def test_an_edit_saved_during_the_probe_is_kept(project: Path) -> None:
    target = project / "bench" / "markdown.jsonl"
    running = start_case(project, "md_001", "pool connections", "--needle", "thirty connections")
    wait_for_searches(project, 1)
    # The author saves the file meanwhile, the way an editor does: a new file renamed over it.
    added = jsonl([entry("md_003", "# Backups\n\nNightly backups keep 14 days.", [])])
    saved = target.with_name(".markdown.jsonl.swp")
    saved.write_text(target.read_text() + added)
    os.replace(saved, target)
    (project / "gate" / "go").touch()
    assert "added md_001_q1" in finish(running)
    written = cases_of(target)
    assert list(written) == ["md_001", "md_002", "md_003"]
    assert [c["case_id"] for c in written["md_001"]] == ["md_001_q1"]


def test_an_entry_changed_during_the_probe_is_not_written_over(project: Path) -> None:
    target = project / "bench" / "markdown.jsonl"
    running = start_case(project, "md_001", "pool connections", "--needle", "thirty connections")
    wait_for_searches(project, 1)
    edited = target.read_text().replace("thirty connections", "sixty connections")
    target.write_text(edited)
    (project / "gate" / "go").touch()
    output, _ = running.communicate(timeout=WAIT_S)
    assert running.returncode == 2, output
    assert "entry 'md_001' changed while the engine was probing the case; nothing written" in output
    assert target.read_text() == edited


def test_a_symlinked_fixture_is_written_through_its_link(project: Path) -> None:
    shared = project / "shared" / "markdown.jsonl"
    shared.parent.mkdir()
    link = project / "bench" / "markdown.jsonl"
    os.replace(link, shared)
    link.symlink_to(os.path.relpath(shared, link.parent))
    (project / "gate" / "go").touch()
    finish(start_case(project, "md_001", "pool connections", "--needle", "thirty connections"))
    assert link.is_symlink()
    assert [c["case_id"] for c in cases_of(shared)["md_001"]] == ["md_001_q1"]
    assert not list(link.parent.glob(".markdown.jsonl.*"))


def test_an_engine_that_labels_no_layers_gets_no_layer_it_never_measured(project: Path) -> None:
    (project / "gate" / "go").touch()
    output = finish(
        start_case(
            project, "md_001", "pool connections", "--needle", "thirty connections", layer=""
        )
    )
    assert "added md_001_q1 to bench/markdown.jsonl (layer any, ceiling 3)" in output
    (written,) = cases_of(project / "bench" / "markdown.jsonl")["md_001"]
    assert written["expected_layer"] == "any"
    # With labels, the layer the engine was seen to use is what is written.
    finish(start_case(project, "md_002", "Replica lag", "--needle", "Replica lag above 30 s"))
    (labelled,) = cases_of(project / "bench" / "markdown.jsonl")["md_002"]
    assert labelled["expected_layer"] == "porter"
