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


WRONG_RETURN_ENGINE = """
from pytest_qualbench.engine.types import Result

class Wrong:
    def index(self, entries):
        self.texts = [entry.haystack for entry in entries]

    def search(self, query, *, limit=10, kinds=()):
        return RETURNS
"""


@pytest.mark.parametrize(
    ("returns", "message"),
    [
        ("'alpha beta'", "engine wrong:Wrong returned str, expected a list of Result"),
        ("{'text': 'alpha'}", "engine wrong:Wrong returned dict, expected a list of Result"),
        ("b'alpha'", "engine wrong:Wrong returned bytes, expected a list of Result"),
        ("None", "engine wrong:Wrong returned None, expected a list of Result"),
        ("7", "engine wrong:Wrong returned int, expected a list of Result"),
        (
            "['alpha beta']",
            "engine wrong:Wrong returned a list holding str (result 1), expected a list of Result",
        ),
        (
            "[Result('x'), {'text': 'alpha'}]",
            "engine wrong:Wrong returned a list holding dict (result 2), expected a list of Result",
        ),
        (
            "[Result(None)]",
            "engine wrong:Wrong returned a Result whose text is None (result 1), expected str",
        ),
        (
            "[Result('alpha', source=['a'])]",
            "engine wrong:Wrong returned a Result whose source is list (result 1), expected str",
        ),
    ],
)
def test_a_wrong_return_type_is_one_line_naming_the_engine(
    project: pytest.Pytester, returns: str, message: str
) -> None:
    project.makepyfile(wrong=WRONG_RETURN_ENGINE.replace("RETURNS", returns))
    result = project.runpytest("--qualbench", "--qualbench-engine=wrong:Wrong")
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert message in output
    result.stdout.fnmatch_lines(["FAILED *md_001_q1 - engine wrong:Wrong returned*"])
    assert "Traceback" not in output and "AttributeError" not in output
    assert len(result.stdout.lines) <= 40, output
    assert project.path.joinpath(".qualbench/report.json").exists()


def test_a_generator_of_results_is_still_a_list_of_results(project: pytest.Pytester) -> None:
    returns = "(Result(text) for text in self.texts if query in text)"
    project.makepyfile(wrong=WRONG_RETURN_ENGINE.replace("RETURNS", returns))
    project.runpytest("--qualbench", "--qualbench-engine=wrong:Wrong").assert_outcomes(passed=1)
