"""Bring your own engine: by ini, by option, by hook; failures stay local to a case."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import WORD_ENGINE, WriteFixture, case, entry

ENTRIES = [
    entry(
        "txt_001",
        "alpha beta",
        [case("txt_001_q1", "alpha", ["alpha beta"])],
        content_type="plaintext",
    ),
    entry(
        "txt_002",
        "gamma delta",
        [case("txt_002_q1", "gamma", ["gamma delta"])],
        content_type="plaintext",
    ),
]

# No layers and no chunks(): layer checks are skipped and IDCG falls back.
LAYERLESS_ENGINE = """
from pytest_qualbench.engine.types import Result

class Layerless:
    def index(self, entries):
        self.texts = [entry.haystack for entry in entries]

    def search(self, query, *, limit=10, kinds=()):
        return [Result(text) for text in self.texts if query in text][:limit]
"""


@pytest.fixture
def project(pytester: pytest.Pytester, write_fixture: WriteFixture) -> pytest.Pytester:
    write_fixture("plaintext.jsonl", ENTRIES)
    pytester.makepyfile(wordengine=WORD_ENGINE, layerless=LAYERLESS_ENGINE)
    pytester.syspathinsert()
    return pytester


def report(pytester: pytest.Pytester) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((pytester.path / ".qualbench/report.json").read_text())
    return data


def test_engine_by_ini(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nqualbench_engine = wordengine:WordEngine\n")
    project.runpytest("--qualbench").assert_outcomes(passed=2)
    assert report(project)["metadata"]["engine"]["name"] == "wordengine:WordEngine"


def test_engine_by_option_overrides_ini(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nqualbench_engine = nowhere:Nothing\n")
    result = project.runpytest("--qualbench", "--qualbench-engine=layerless:Layerless")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["layer: not checked — the engine labels no layers (2 positive cases)"]
    )
    metadata = report(project)["metadata"]
    assert metadata["relevant_set"] == "returned"
    assert report(project)["overall"]["layer_accuracy"] is None


def test_engine_by_hook(project: pytest.Pytester) -> None:
    project.makeconftest(
        """
        import wordengine

        def pytest_qualbench_make_engine(config, content_type):
            assert content_type == "plaintext"
            engine = wordengine.WordEngine()
            engine.config = {"from": "hook"}
            return engine
        """
    )
    project.runpytest("--qualbench").assert_outcomes(passed=2)
    assert report(project)["metadata"]["engine"]["config"] == {"from": "hook"}


def test_raising_engine_fails_its_cases_with_its_traceback(project: pytest.Pytester) -> None:
    project.makepyfile(
        broken="""
        class Broken:
            def index(self, entries):
                pass

            def search(self, query, *, limit=10, kinds=()):
                if query == "gamma":
                    raise RuntimeError("index shard offline")
                return []
        """
    )
    result = project.runpytest("--qualbench", "--qualbench-engine=broken:Broken")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        ['*raise RuntimeError("index shard offline")', "E*RuntimeError: index shard offline"]
    )
    failures = report(project)["failures"]
    assert {"case_id": "txt_002_q1", "type": "error", "expected": None,
            "actual": "RuntimeError: index shard offline"} in failures  # fmt: skip


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nowhere:Engine", "*engine 'nowhere:Engine': cannot import 'nowhere'*"),
        (
            "wordengine:Missing",
            "*engine 'wordengine:Missing': 'wordengine' has no attribute 'Missing'*",
        ),
        ("wordengine", "*unknown engine 'wordengine'; registered: bm25s, builtin, *"),
    ],
)
def test_bad_engine_path_is_a_usage_error(
    project: pytest.Pytester, spec: str, message: str
) -> None:
    result = project.runpytest("--qualbench", f"--qualbench-engine={spec}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_failed_index_is_not_retried_for_every_case(project: pytest.Pytester) -> None:
    project.makepyfile(
        unindexable="""
        CALLS = []

        class Unindexable:
            def index(self, entries):
                CALLS.append(1)
                raise OSError(f"cannot open index (attempt {len(CALLS)})")

            def search(self, query, *, limit=10, kinds=()):
                return []
        """
    )
    result = project.runpytest("--qualbench", "--qualbench-engine=unindexable:Unindexable")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: qualbench: engine unindexable:Unindexable could not start for *: "
         "OSError: cannot open index (attempt 1)"]
    )  # fmt: skip
    assert "attempt 2" not in result.stdout.str() + result.stderr.str()


def test_layerless_engine_with_an_erroring_case_keeps_layer_accuracy_null(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        layerless_erroring="""
        from pytest_qualbench.engine.types import Result

        class LayerlessErroring:
            def index(self, entries):
                self.texts = [entry.haystack for entry in entries]

            def search(self, query, *, limit=10, kinds=()):
                if query == "gamma":
                    raise RuntimeError("shard offline")
                return [Result(text) for text in self.texts if query in text][:limit]
        """
    )
    result = project.runpytest(
        "--qualbench",
        "--qualbench-engine=layerless_erroring:LayerlessErroring",
        "--qualbench-floor=layer_accuracy:0.5",
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["layer: not checked — the engine labels no layers (1 positive case)"]
    )
    assert report(project)["overall"]["layer_accuracy"] is None
    assert not [line for line in result.outlines if "qualbench FAILED" in line]


def test_duplicate_results_count_once_and_are_named(project: pytest.Pytester) -> None:
    project.makepyfile(
        repeating="""
        from pytest_qualbench.engine.types import Result

        class Repeating:
            def index(self, entries):
                self.texts = [entry.haystack for entry in entries]

            def search(self, query, *, limit=10, kinds=()):
                hits = [Result(text, "porter") for text in self.texts if query in text]
                noise = [Result(text, "porter") for text in self.texts if query not in text]
                return (noise[:1] + hits * 3)[:limit]
        """
    )
    result = project.runpytest("--qualbench", "--qualbench-engine=repeating:Repeating")
    result.assert_outcomes(failed=2)  # rank 2 > ceiling 1: the repeats do not lift it
    result.stdout.fnmatch_lines(
        [
            "duplicate results: txt_001_q1: 2 repeated chunk(s) counted once",
            "duplicate results: txt_002_q1: 2 repeated chunk(s) counted once",
        ]
    )
    data = report(project)
    # [noise, rel]: nDCG@10 = 1/log2(3) with |R| = 1 (the engine lists no chunks).
    assert data["overall"]["ndcg@10"] == pytest.approx(0.6309, abs=1e-4)
    assert [case["duplicate_results"] for case in data["cases"]] == [2, 2]


def test_one_engine_object_for_two_content_types_is_refused(
    project: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write_fixture(
        "markdown.jsonl",
        [entry("md_001", "omega kappa", [case("md_001_q1", "omega", ["omega kappa"])])],
    )
    project.makeconftest(
        """
        import wordengine

        ONE = wordengine.WordEngine()

        def pytest_qualbench_make_engine(config, content_type):
            return ONE
        """
    )
    result = project.runpytest("--qualbench", "-p", "no:randomly")
    # markdown is indexed first (sorted); plaintext then gets the same object back: the
    # engine could not start for plaintext, so the run stops before any case.
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.assert_outcomes()
    message = (
        "the engine factory returned the same WordEngine object for markdown and plaintext: "
        "each content type is indexed on its own engine, so return a new one on every call "
        "(e.g. from pytest_qualbench_make_engine)"
    )
    result.stderr.fnmatch_lines(
        [f"ERROR: qualbench: engine from the conftest hook * could not start for plaintext: "
         f"SharedEngine: {message}"]
    )  # fmt: skip
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert not project.path.joinpath(".qualbench/report.json").exists()
