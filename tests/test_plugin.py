"""The plugin end to end: real pytest sessions over small fixture files."""

from __future__ import annotations

import json

import pytest

from benchmarks.pytest_runs import LEAN_PYTEST_ARGS
from pytest_qualbench.fixtures.discovery import dataset_hash
from pytest_qualbench.report.build import without_timings
from pytest_qualbench.report.model import Report
from tests.conftest import WriteFixture, case, entry

pytestmark = pytest.mark.usefixtures("word_engine")

MARKDOWN = [
    entry(
        "md_001",
        "# Pool\n\n## Connection Pool Settings\nmaxIdleConns defaults to 10\n\nunrelated pool words",
        [
            case("md_001_q1", "connection pool settings", ["## Connection Pool Settings"]),
            case("md_001_q2", "maxidleconns", ["maxIdleConns defaults to 10"]),
            case("md_001_q_neg", "hallucigenia", []),
        ],
    ),
    entry(
        "md_002",
        "# Retry\n\nexponential backoff with jitter",
        [
            case("md_002_q1", "backoff jitter", ["exponential backoff"]),
        ],
    ),
    entry("md_003", "a distractor about pool sizing", []),
]
JSON_ENTRIES = [
    entry(
        "json_001",
        '{"metrics": {"p99_latency_ms": 250}}',
        [case("json_001_q1", "p99_latency_ms", ["p99_latency_ms"], ceiling=5)],
        content_type="json",
    ),
]


# A case whose needle is in the second chunk of its entry, asked to rank first.
RANKED_SECOND = [
    entry(
        "txt_001",
        "cache miss in front\n\nthe cache eviction policy is LRU",
        [case("txt_001_q1", "cache", ["eviction policy is LRU"], ceiling=1)],
        content_type="plaintext",
    )
]


@pytest.fixture
def bench(write_fixture: WriteFixture) -> None:
    write_fixture("markdown.jsonl", MARKDOWN)
    write_fixture("json.jsonl", JSON_ENTRIES)


def read_report(pytester: pytest.Pytester, name: str = ".qualbench/report.json") -> Report:
    report: Report = json.loads((pytester.path / name).read_text(encoding="utf-8"))
    return report


@pytest.mark.usefixtures("bench")
def test_every_case_is_an_item(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--qualbench", "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "bench_fixtures/json.jsonl::json_001_q1",
            "bench_fixtures/markdown.jsonl::md_001_q1",
            "bench_fixtures/markdown.jsonl::md_001_q2",
            "bench_fixtures/markdown.jsonl::md_001_q_neg",
            "bench_fixtures/markdown.jsonl::md_002_q1",
            "5 tests collected*",
        ]
    )


@pytest.mark.usefixtures("bench")
def test_whole_benchmark_passes_and_writes_report(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--qualbench")
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(
        [
            "*= qualbench =*",
            "content type*cases*hit@1*mrr*",
            "json*1*1.000*",
            "markdown*3*1.000*",
            "overall*4*1.000*",
            "negatives: 1 of 1 returned nothing",
            "dataset: sha256:*",
            "report: *report.json",
        ]
    )
    report = read_report(pytester)
    assert report["overall"]["cases"] == 4
    assert report["overall"]["mrr"] == 1.0
    assert report["negatives"]["negative_pass"] == 1.0
    assert report["metadata"]["selection"] == {
        "cases_in_fixture_set": 5,
        "cases_run": 5,
        "subset": False,
        "selected_by": [],
    }


@pytest.mark.usefixtures("bench")
def test_keyword_selects_one_entry(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--qualbench", "-k", "md_001")
    result.assert_outcomes(passed=3, deselected=2)
    # No floor is configured: the summary says so rather than "not enforced".
    result.stdout.fnmatch_lines(
        ["floors: none configured (ini qualbench_floors, --qualbench-floor)"]
    )
    assert "not enforced" not in result.stdout.str()
    assert [
        c["case_id"] for c in read_report(pytester, ".qualbench/report.subset.json")["cases"]
    ] == [
        "md_001_q1",
        "md_001_q2",
        "md_001_q_neg",
    ]


@pytest.mark.usefixtures("bench")
def test_keyword_and_marker_by_content_type(pytester: pytest.Pytester) -> None:
    pytester.runpytest("--qualbench", "-k", "json and not neg").assert_outcomes(
        passed=1, deselected=4
    )
    pytester.runpytest("--qualbench", "-m", "markdown", "-k", "neg").assert_outcomes(
        passed=1, deselected=4
    )


def test_selection_does_not_change_the_corpus(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    """md_002 is a distractor for md_001's query: it must outrank it even when deselected."""
    write_fixture(
        "markdown.jsonl",
        [
            entry(
                "md_001", "pool settings", [case("md_001_q1", "pool", ["pool settings"], ceiling=1)]
            ),
            entry("md_002", "pool sizing", [case("md_002_q1", "sizing", ["pool sizing"])]),
        ],
    )
    # The stand-in engine returns chunks in corpus order, so md_001's chunk is first
    # only if md_002 is absent; reversing the file order makes md_002 come first.
    path = pytester.path / "bench_fixtures" / "markdown.jsonl"
    lines = path.read_text().splitlines()
    path.write_text(lines[1] + "\n" + lines[0] + "\n")
    full = pytester.runpytest("--qualbench")
    selected = pytester.runpytest("--qualbench", "-k", "md_001")
    full.assert_outcomes(passed=1, failed=1)
    selected.assert_outcomes(failed=1, deselected=1)


@pytest.mark.usefixtures("bench")
def test_failure_shows_query_expected_actual_and_top_results(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write_fixture("plaintext.jsonl", RANKED_SECOND)
    result = pytester.runpytest("--qualbench", "-k", "txt_001")
    result.assert_outcomes(failed=1, deselected=5)
    result.stdout.fnmatch_lines(
        [
            "rank 2 > ceiling 1",
            "case:      txt_001_q1 [[]plaintext[]] bench_fixtures/plaintext.jsonl:1",
            "query:     'cache'",
            "checks:",
            "  needles  pass  1 of 1 needles found",
            "  rank     FAIL  rank 2 > ceiling 1",
            "  layer    pass  layer porter",
            "top results (2 returned):",
            "   1. [[]porter[]] bench-txt_001 | cache miss in front",
            "   2. [[]porter[]] bench-txt_001 | the cache >>>eviction policy is LRU<<<",
        ]
    )
    result.stdout.fnmatch_lines(
        ["FAILED bench_fixtures/plaintext.jsonl::txt_001_q1 - rank 2 > ceiling 1"]
    )
    assert "None" not in result.stdout.str()
    failures = read_report(pytester, ".qualbench/report.subset.json")["failures"]
    assert failures == [{"case_id": "txt_001_q1", "type": "rank", "expected": 1, "actual": 2}]


@pytest.mark.usefixtures("bench")
def test_negative_case_fails_when_anything_returns(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write_fixture(
        "curated.jsonl",
        [
            entry(
                "cur_001",
                "adr about pool",
                [case("cur_001_q_neg", "pool", [])],
                content_type="curated",
            )
        ],
    )
    result = pytester.runpytest("--qualbench", "-k", "cur_001")
    result.assert_outcomes(failed=1, deselected=5)
    result.stdout.fnmatch_lines(["1 result for a negative case, expected none"])


@pytest.mark.usefixtures("bench")
def test_checks_option_limits_what_fails_an_item(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write_fixture(
        "curated.jsonl",
        [
            entry(
                "cur_001", "adr about pool", [case("cur_001_q1", "pool", ["adr"], layer="trigram")]
            )
        ],
    )
    pytester.runpytest("--qualbench", "-k", "cur_001").assert_outcomes(failed=1, deselected=5)
    pytester.runpytest(
        "--qualbench", "-k", "cur_001", "--qualbench-checks=needles,rank"
    ).assert_outcomes(passed=1, deselected=5)


@pytest.mark.usefixtures("bench")
def test_broken_line_is_an_error_and_the_rest_still_runs(pytester: pytest.Pytester) -> None:
    path = pytester.path / "bench_fixtures" / "markdown.jsonl"
    lines = path.read_text().splitlines()
    broken = json.loads(lines[1])
    broken["cases"][0]["neeldes"] = broken["cases"][0].pop("needles")
    path.write_text("\n".join([lines[0], json.dumps(broken), "{not json", lines[2]]) + "\n")
    result = pytester.runpytest("--qualbench")
    result.assert_outcomes(passed=4, errors=3)
    result.stdout.fnmatch_lines(
        [
            "*invalid fixture line: bench_fixtures/markdown.jsonl:2: cases[[]0[]].neeldes: unknown field (did you mean 'needles'?)",
            "*invalid fixture line: bench_fixtures/markdown.jsonl:2: cases[[]0[]]: a case needs needles*",
            "*invalid fixture line: bench_fixtures/markdown.jsonl:3: json: line contains invalid json*",
        ]
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.usefixtures("bench")
def test_floors_met_and_missed(pytester: pytest.Pytester) -> None:
    floors = ("--qualbench-floor=mrr:1.0", "--qualbench-floor=json.hit@1:1")
    met = pytester.runpytest("--qualbench", *floors)
    assert met.ret == pytest.ExitCode.OK
    met.stdout.fnmatch_lines(["floors: all 2 met"])
    assert "json.hit@1" not in met.stdout.str()
    verbose = pytester.runpytest("--qualbench", "-v", *floors)
    verbose.stdout.fnmatch_lines(
        ["floors: all 2 met", "  mrr 1.000 >= floor 1.000", "  json.hit@1 1.000 >= floor 1.000"]
    )
    assert [f["ok"] for f in read_report(pytester)["floors"]] == [True, True]

    pytester.makeini(
        "[pytest]\nqualbench_engine = wordengine:WordEngine\nqualbench_floors = markdown.mrr:0.9\n"
    )
    path = pytester.path / "bench_fixtures" / "markdown.jsonl"
    path.write_text(path.read_text().replace('"connection pool settings"', '"pool"'))
    missed = pytester.runpytest("--qualbench", "--qualbench-checks=needles")
    missed.assert_outcomes(passed=5)
    assert missed.ret == pytest.ExitCode.TESTS_FAILED
    missed.stdout.fnmatch_lines(["floors: 1 of 1 not met", "  markdown.mrr 0.833 < floor 0.900"])


@pytest.mark.usefixtures("bench")
def test_floors_are_not_enforced_on_a_partial_run(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        "--qualbench", "-v", "-k", "md_002", "--qualbench-floor=negative_pass:1"
    )
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        ["floors not enforced: 1 of 5 cases ran", "  negative_pass n/a (floor 1.000 not enforced)"]
    )


@pytest.mark.parametrize(
    ("floor", "message"),
    [
        ("mmr:0.9", "*unknown metric 'mmr'*"),
        ("xml.mrr:0.9", "*unknown content type 'xml'*"),
        ("mrr", "*expected METRIC:VALUE*"),
        ("mrr:high", "*'high' is not a number*"),
    ],
)
@pytest.mark.usefixtures("bench")
def test_bad_floor_is_a_usage_error(pytester: pytest.Pytester, floor: str, message: str) -> None:
    result = pytester.runpytest("--qualbench", f"--qualbench-floor={floor}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


@pytest.mark.usefixtures("bench")
def test_bad_ini_floor_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\nqualbench_engine = wordengine:WordEngine\nqualbench_floors = mmr:0.9\n"
    )
    result = pytester.runpytest("--qualbench")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini qualbench_floors*unknown metric 'mmr'*"])


@pytest.mark.usefixtures("bench")
def test_several_floors_on_one_ini_line_ask_for_one_per_line(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\nqualbench_engine = wordengine:WordEngine\nqualbench_floors = mmr:0.9 mrr:0.7\n"
    )
    result = pytester.runpytest("--qualbench")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: qualbench: ini qualbench_floors: 'mmr:0.9 mrr:0.7' holds 2 floors: give one "
         "METRIC:VALUE per line (ini qualbench_floors) or per --qualbench-floor; floor "
         "'mmr:0.9': unknown metric 'mmr' (did you mean 'mrr'?)*"]
    )  # fmt: skip
    assert "'9 mrr'" not in result.stderr.str()


@pytest.mark.usefixtures("bench")
def test_report_schema(pytester: pytest.Pytester) -> None:
    pytester.runpytest("--qualbench", "--qualbench-report=out/r.json")
    report = read_report(pytester, "out/r.json")
    assert sorted(report) == [
        "by_content_type", "by_layer", "cases", "complete", "dataset_files", "dataset_hash",
        "failures", "floors", "latency", "metadata", "metric_version", "negatives", "overall",
        "schema_version", "token_cost",
    ]  # fmt: skip
    assert report["schema_version"] == 3
    assert report["complete"] is True
    assert report["metric_version"] == 1
    assert report["dataset_hash"].startswith("sha256:") and len(report["dataset_hash"]) == 71
    assert sorted(report["metadata"]) == [
        "checks", "engine", "git", "libraries", "limit", "platform", "plugin_version", "python",
        "relevant_set", "selection", "timestamp",
    ]  # fmt: skip
    assert report["metadata"]["limit"] == 10
    assert report["metadata"]["checks"] == ["needles", "rank", "layer", "negative"]
    # The plugin's own dependencies; the word engine is a module of the project.
    assert {"numpy", "rank-bm25", "rapidfuzz"} <= set(report["metadata"]["libraries"])
    assert report["metadata"]["engine"] == {
        "name": "wordengine:WordEngine",
        "config": {"kind": "word"},
        "options": {},
        "warnings": [],
    }
    assert report["metadata"]["relevant_set"] == "chunks"
    assert sorted(report["overall"]) == sorted(
        ["cases", "hit@1", "hit@3", "hit@5", "hit@10", "precision@1", "recall@5", "recall@10", "mrr",
         "ndcg@10", "context_recall", "rank_ceiling_pass", "layer_accuracy"]
    )  # fmt: skip
    assert sorted(report["by_content_type"]) == ["json", "markdown"]
    assert sorted(report["by_layer"]) == ["porter"]
    assert report["negatives"]["by_content_type"] == {
        "markdown": {"cases": 1, "negative_pass": 1.0}
    }
    assert sorted(report["latency"]["markdown"]) == [
        "index",
        "index_ms",
        "p50_ms",
        "p95_ms",
        "warmup_ms",
    ]
    first = report["cases"][0]
    assert first["case_id"] == "json_001_q1"
    assert sorted(first) == sorted(
        ["case_id", "entry_id", "content_type", "definition", "query", "corrected_query", "expected_layer",
         "expected_rank_ceiling", "negative", "result_count", "rank", "layer", "needles_found",
         "needles_total", "metrics", "passed", "latency_ms", "duplicate_results",
         "layer_not_checked"]
    )  # fmt: skip
    assert report["cases"][3]["metrics"] == {"negative_pass": 1.0}
    raw = (pytester.path / "out/r.json").read_text()
    lines = raw.splitlines()
    first_case = lines.index('  "cases": [') + 1
    case_lines = lines[first_case : lines.index("  ],", first_case)]
    assert [json.loads(line.rstrip(",")) for line in case_lines] == report["cases"]


@pytest.mark.usefixtures("bench")
def test_two_runs_give_the_same_report_apart_from_timings(pytester: pytest.Pytester) -> None:
    pytester.runpytest("--qualbench", "--qualbench-report=a.json")
    pytester.runpytest("--qualbench", "--qualbench-report=b.json", "-p", "no:randomly")
    first, second = read_report(pytester, "a.json"), read_report(pytester, "b.json")
    assert without_timings(first) == without_timings(second)


@pytest.mark.usefixtures("bench")
def test_hash_changes_with_one_byte(pytester: pytest.Pytester) -> None:
    pytester.runpytest("--qualbench", "--qualbench-report=a.json")
    path = pytester.path / "bench_fixtures" / "json.jsonl"
    path.write_text(path.read_text().replace("250", "251"))
    pytester.runpytest("--qualbench", "--qualbench-report=b.json")
    assert (
        read_report(pytester, "a.json")["dataset_hash"]
        != read_report(pytester, "b.json")["dataset_hash"]
    )


@pytest.mark.usefixtures("bench")
def test_unrelated_jsonl_under_testpaths_stays_out_of_the_fixture_set(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nqualbench_engine = wordengine:WordEngine\ntestpaths = tests\n")
    data = pytester.path / "tests" / "data"
    data.mkdir(parents=True)
    (data / "queries.jsonl").write_text('{"_id": "q1", "text": "not a fixture"}\n')
    pytester.runpytest("--qualbench").assert_outcomes(passed=5)
    fixture_files = sorted((pytester.path / "bench_fixtures").glob("*.jsonl"))
    assert read_report(pytester)["dataset_hash"] == dataset_hash(fixture_files, pytester.path)


@pytest.mark.usefixtures("bench")
def test_junit_xml_carries_per_case_properties(pytester: pytest.Pytester) -> None:
    pytester.runpytest("--qualbench", "--junitxml=out.xml", "-k", "md_001_q2")
    xml = (pytester.path / "out.xml").read_text()
    for expected in (
        '<property name="qualbench.content_type" value="markdown" />',
        '<property name="qualbench.rank" value="1" />',
        '<property name="qualbench.layer" value="porter" />',
        '<property name="qualbench.hit@1" value="1.0" />',
        '<property name="qualbench.mrr" value="1.0" />',
        '<property name="qualbench.recall@10" value="1.0" />',
    ):
        assert expected in xml


@pytest.mark.usefixtures("bench")
def test_ordinary_run_is_untouched(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_ok():\n    pass\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert "= qualbench =" not in result.stdout.str()
    assert not (pytester.path / ".qualbench").exists()


@pytest.mark.usefixtures("bench")
def test_named_jsonl_file_runs_without_the_flag(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("bench_fixtures/json.jsonl")
    result.assert_outcomes(passed=1)
    report = read_report(pytester, ".qualbench/report.subset.json")
    # The whole fixture set is still the corpus and the hash, though one file ran.
    assert report["metadata"]["selection"] == {
        "cases_in_fixture_set": 5,
        "cases_run": 1,
        "subset": True,
        "selected_by": ["bench_fixtures/json.jsonl"],
    }


@pytest.mark.usefixtures("bench")
def test_ini_switch_collects_the_benchmark_with_plain_pytest(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\nqualbench_engine = wordengine:WordEngine\nqualbench_enabled = true\n"
    )
    pytester.makepyfile(test_plain="def test_ok():\n    pass\n")
    pytester.runpytest().assert_outcomes(passed=6)
    pytester.runpytest("-k", "md_001").assert_outcomes(passed=3, deselected=3)


def test_missing_fixture_dir_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--qualbench")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*no .jsonl fixture files found in*bench_fixtures*"])


def test_empty_cases_entry_is_indexed_but_asks_nothing(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write_fixture(
        "plaintext.jsonl",
        [
            entry(
                "txt_001",
                "alpha beta",
                [case("txt_001_q1", "alpha", ["alpha beta"], ceiling=0)],
                content_type="plaintext",
            ),
            entry("txt_002", "alpha gamma", [], content_type="plaintext"),
        ],
    )
    pytester.runpytest("--qualbench").assert_outcomes(passed=1)
    record = read_report(pytester)["cases"][0]
    assert record["result_count"] == 2


def test_lint_at_collection_time(pytester: pytest.Pytester, write_fixture: WriteFixture) -> None:
    write_fixture(
        "plaintext.jsonl",
        [
            entry(
                "txt_001",
                "alpha beta",
                [case("txt_001_q1", "alpha", ["gamma"]), case("txt_001_q_neg", "alpha", [])],
                content_type="plaintext",
            )
        ],
    )
    result = pytester.runpytest("--qualbench", "--qualbench-lint")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*- qualbench lint -*",
            "bench_fixtures/plaintext.jsonl:1: error: *gamma*",
            "bench_fixtures/plaintext.jsonl:1: warning: *txt_001_q_neg*",
        ]
    )


@pytest.mark.usefixtures("bench")
def test_runs_without_xdist(pytester: pytest.Pytester) -> None:
    """xdist's hooks are optional: the plugin must load where xdist is absent."""
    pytester.runpytest("--qualbench", "-p", "no:xdist").assert_outcomes(passed=5)


@pytest.mark.usefixtures("bench")
def test_runs_with_pytests_per_test_work_switched_off(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    """What README ("Tens of thousands of cases") suggests switching off in a large run
    (pytest's failure summary, log and output capture, the fault, thread and unraisable
    exception checks): the plugin leans on none of it. Outcomes, the failure and the
    report stay."""
    write_fixture("plaintext.jsonl", RANKED_SECOND)
    result = pytester.runpytest("--qualbench", *LEAN_PYTEST_ARGS)
    result.assert_outcomes(passed=5, failed=1)
    # --tb=line's one line for the failure, where its account would have been.
    result.stdout.fnmatch_lines(["bench_fixtures/plaintext.jsonl:1: rank 2 > ceiling 1"])
    report = read_report(pytester)
    assert len(report["cases"]) == 6
    assert report["failures"] == [
        {"case_id": "txt_001_q1", "type": "rank", "expected": 1, "actual": 2}
    ]
