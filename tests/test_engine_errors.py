"""An exception in the user's engine: their frames, the case and the query, and little else."""

from __future__ import annotations

import pytest

from tests.conftest import case, entry, jsonl

BROKEN_ENGINE = """
class Broken:
    def index(self, entries):
        self.entries = list(entries)

    def search(self, query, *, limit=10, kinds=()):
        return self.rank(query)

    def rank(self, query):
        return {}["missing " + query]
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(broken=BROKEN_ENGINE)
    pytester.syspathinsert()
    pytester.makeini("[pytest]\nqualbench_engine = broken:Broken\n")
    fixture = entry("md_001", "# Alpha\n\nalpha beta", [case("md_001_q1", "alpha", ["alpha"])])
    (pytester.path / "bench_fixtures").mkdir()
    (pytester.path / "bench_fixtures" / "markdown.jsonl").write_text(jsonl([fixture]))
    return pytester


def test_one_wrong_line_gives_at_most_thirty_lines(project: pytest.Pytester) -> None:
    # The warning filter hides what pytester's in-process run adds, not the plugin.
    result = project.runpytest(
        "--qualbench", "-q", "-W", "ignore::pytest.PytestAssertRewriteWarning"
    )
    result.assert_outcomes(failed=1)
    output = result.stdout.lines
    assert len(output) <= 30, "\n".join(output)
    result.stdout.fnmatch_lines(
        [
            "the engine raised KeyError on case md_001_q1 [[]markdown[]] bench_fixtures/markdown.jsonl:1",
            "query: 'alpha'",
            "*return self.rank(query)",
            '*return {}[[]"missing " + query]',
            "E*KeyError: 'missing alpha'",
            "broken.py:9: KeyError",
        ]
    )
    assert not any("_pytest" in line or "pluggy" in line for line in output)
    assert not any("pytest_qualbench" in line for line in output)


def test_fulltrace_shows_every_frame(project: pytest.Pytester) -> None:
    result = project.runpytest("--qualbench", "-q", "--fulltrace")
    assert any("_pytest" in line for line in result.stdout.lines)


def test_a_failed_index_shows_its_traceback_once(project: pytest.Pytester) -> None:
    project.makepyfile(
        broken="""
        class Broken:
            def index(self, entries):
                raise OSError("cannot open index")

            def search(self, query, *, limit=10, kinds=()):
                return []
        """
    )
    second = entry("md_002", "gamma", [case("md_002_q1", "gamma", ["gamma"])])
    first = entry("md_001", "# Alpha\n\nalpha beta", [case("md_001_q1", "alpha", ["alpha"])])
    (project.path / "bench_fixtures" / "markdown.jsonl").write_text(jsonl([first, second]))
    result = project.runpytest("--qualbench", "-q")
    result.assert_outcomes(failed=2)
    assert result.stdout.str().count('raise OSError("cannot open index")') == 1
    result.stdout.fnmatch_lines(["*indexing markdown failed earlier*OSError*cannot open index*"])
