"""`--qualbench-compare`: gate a run against a baseline report inside pytest."""

from __future__ import annotations

import pytest

from tests.conftest import WriteFixture, case, entry

# Same fixtures, a worse engine: it returns the matching chunks last-first.
REVERSED_ENGINE = """
import wordengine

class Reversed(wordengine.WordEngine):
    def search(self, query, *, limit=10, kinds=("durable", "session")):
        return list(reversed(super().search(query, limit=limit, kinds=kinds)))
"""


@pytest.fixture
def bench(pytester: pytest.Pytester, write_fixture: WriteFixture, word_engine: None) -> None:
    write_fixture(
        "plaintext.jsonl",
        [
            entry(
                "txt_001",
                "cache hit\n\ncache eviction is LRU",
                [case("txt_001_q1", "cache", ["cache hit"], ceiling=0)],
                content_type="plaintext",
            ),
            entry(
                "txt_002",
                "pool size\n\npool idle",
                [case("txt_002_q1", "pool", ["pool size"], ceiling=0)],
                content_type="plaintext",
            ),
        ],
    )
    pytester.makepyfile(reversedengine=REVERSED_ENGINE)
    pytester.runpytest("--qualbench", "--qualbench-report=base.json").assert_outcomes(passed=2)


@pytest.mark.usefixtures("bench")
def test_same_run_is_clean(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--qualbench", "--qualbench-compare=base.json")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*- qualbench compare -*"])


@pytest.mark.usefixtures("bench")
def test_regression_fails_the_run(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        "--qualbench",
        "--qualbench-engine=reversedengine:Reversed",
        "--qualbench-checks=needles",
        "--qualbench-compare=base.json",
    )
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*- qualbench compare -*", "*mrr*"])


@pytest.mark.usefixtures("bench")
def test_changed_fixtures_are_refused(pytester: pytest.Pytester) -> None:
    path = pytester.path / "bench_fixtures" / "plaintext.jsonl"
    path.write_text(path.read_text().replace("LRU", "LFU"))
    result = pytester.runpytest("--qualbench", "--qualbench-compare=base.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["cannot compare with *base.json: dataset_hash differs*"])


@pytest.mark.usefixtures("bench")
def test_missing_baseline_warns_by_default_and_fails_on_request(pytester: pytest.Pytester) -> None:
    warned = pytester.runpytest("--qualbench", "--qualbench-compare=nope.json")
    assert warned.ret == pytest.ExitCode.OK
    warned.stdout.fnmatch_lines(["baseline not used: *nope.json* (warning only)"])
    failed = pytester.runpytest(
        "--qualbench", "--qualbench-compare=nope.json", "--qualbench-compare-missing=fail"
    )
    assert failed.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.usefixtures("bench")
def test_html_report_with_and_without_baseline(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pygal")
    single = pytester.runpytest("--qualbench", "--qualbench-html=out/single.html")
    single.stdout.fnmatch_lines(["html report: *single.html"])
    page = (pytester.path / "out/single.html").read_text()
    assert "txt_001_q1" in page or "plaintext" in page
    pytester.runpytest(
        "--qualbench", "--qualbench-html=pair.html", "--qualbench-compare=base.json"
    ).assert_outcomes(passed=2)
    assert "comparison" in (pytester.path / "pair.html").read_text()


@pytest.mark.usefixtures("bench")
def test_quiet_shows_the_comparison_and_the_lint_as_one_verdict_line_each(
    pytester: pytest.Pytester,
) -> None:
    options = [
        "--qualbench",
        "--qualbench-engine=reversedengine:Reversed",
        "--qualbench-checks=needles",
        "--qualbench-compare=base.json",
        "--qualbench-lint",
    ]
    full = pytester.runpytest(*options)
    quiet = pytester.runpytest(*options, "-q")
    assert quiet.ret == full.ret == pytest.ExitCode.TESTS_FAILED
    full.stdout.fnmatch_lines(["*- qualbench lint -*", "*- qualbench compare -*"])
    assert "- qualbench compare -" not in quiet.stdout.str()
    assert "- qualbench lint -" not in quiet.stdout.str()
    quiet.stdout.fnmatch_lines(
        ["lint: *", "compare with *base.json: * beyond * rule*, the run fails"]
    )
    section = quiet.stdout.str().split("= qualbench =")[1]
    assert len(section.splitlines()) <= 10, section
