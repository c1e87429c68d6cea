"""The head-to-head, token cost and start-time sections through real pytest sessions."""

from __future__ import annotations

import hashlib
import json
import pickle

import pytest

from pytest_qualbench.index_cache import MAGIC
from pytest_qualbench.report.build import without_timings
from tests.conftest import WriteFixture, case
from tests.test_index_cache import Plant
from tests.test_plugin import JSON_ENTRIES, MARKDOWN, read_report
from tests.test_rankers import LESSONS

REVERSED_RANKER = """
from pytest_qualbench.sections.rankers import register_ranker

class Reversed:
    def rank(self, query, chunks):
        return list(reversed(range(len(chunks))))

def make_reversed(engine, chunks):
    return Reversed()

register_ranker("reversed", make_reversed)
"""


@pytest.fixture
def bench(write_fixture: WriteFixture, word_engine: None) -> None:
    write_fixture("markdown.jsonl", MARKDOWN)
    write_fixture("json.jsonl", JSON_ENTRIES)


@pytest.mark.usefixtures("bench")
def test_rankers_table_prints_and_lands_in_the_report(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--qualbench", "--qualbench-rankers=flatfile,bm25,engine")
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(
        [
            "head-to-head over 4 positive cases (top 10 chunks each)",
            "metric*flatfile*bm25*engine",
            "precision@1*",
            "hit@3*",
            "recall@5*",
            "mrr*",
            "ndcg@10*",
            "engine lift*precision@1*hit@3*recall@5*mrr*ndcg@10",
            "vs flatfile *+0.000 (+0.0%)*",
            "vs bm25 *",
        ]
    )
    report = read_report(pytester)
    section = report["rankers"]
    assert section["rankers"] == ["flatfile", "bm25", "engine"]
    assert section["cases"] == 4
    assert sorted(section["metrics"]) == ["hit@3", "mrr", "ndcg@10", "precision@1", "recall@5"]
    assert sorted(section["lift"]) == ["bm25", "flatfile"]
    # The engine column is the benchmarked engine: it agrees with the main tables.
    for metric in section["metrics"]:
        assert section["metrics"][metric]["engine"] == pytest.approx(report["overall"][metric])
    # "unrelated pool words" outranks the settings chunk for the flat file (chunk order).
    assert section["metrics"]["precision@1"]["flatfile"] == 1.0


@pytest.mark.usefixtures("bench")
def test_rankers_from_a_conftest_registry_and_a_module_factory(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(REVERSED_RANKER)
    result = pytester.runpytest(
        "--qualbench", "--qualbench-rankers=reversed,conftest:make_reversed"
    )
    result.assert_outcomes(passed=5)
    section = read_report(pytester)["rankers"]
    assert section["rankers"] == ["reversed", "conftest:make_reversed"]
    assert (
        section["metrics"]["mrr"]["reversed"] == section["metrics"]["mrr"]["conftest:make_reversed"]
    )
    assert section["lift"] == {}


@pytest.mark.usefixtures("bench")
def test_unknown_ranker_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--qualbench", "--qualbench-rankers=engine,bm52")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*qualbench: unknown ranker 'bm52'; registered: bm25, engine, flatfile, quality*"]
    )


def test_quality_ranker_lifts_precision_at_1_through_the_plugin(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    lessons = [dict(raw) for raw in LESSONS]
    lessons[0]["cases"] = [
        case(
            "ci_q1",
            "flaky CI timeout",
            ["mocked the slow network call"],
            layer="rrf(porter+trigram)",
            ceiling=2,
        )
    ]
    lessons[2]["cases"] = [
        case(
            "db_q1", "migration deadlock", ["advisory lock"], layer="rrf(porter+trigram)", ceiling=2
        )
    ]
    write_fixture("lessons.jsonl", lessons)
    result = pytester.runpytest("--qualbench", "--qualbench-rankers=engine,quality")
    result.assert_outcomes(passed=2)
    section = read_report(pytester)["rankers"]
    assert section["metrics"]["precision@1"] == {"engine": 0.0, "quality": 1.0}
    assert section["lift"]["quality"]["precision@1"] == {"absolute": -1.0, "relative": -1.0}


@pytest.mark.usefixtures("bench")
def test_token_cost_by_default_and_skipped_at_k_0(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--qualbench")
    result.stdout.fnmatch_lines(
        ["token cost, top-3 retrieval vs whole corpus per call (*", "overall*4*%"]
    )
    section = read_report(pytester)["token_cost"]
    assert section["k"] == 3
    assert section["overall"]["cases"] == 4
    assert 0 < section["overall"]["reduction_pct"] < 100
    pytester.runpytest("--qualbench", "--qualbench-tokens-k=0")
    assert "token_cost" not in read_report(pytester)
    refused = pytester.runpytest("--qualbench", "--qualbench-tokens-k=-1")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*--qualbench-tokens-k: -1 is not >= 0*"])


TOKENIZER_PROBE = """
import sys

def pytest_unconfigure(config):
    with open("tokenizer-imported.txt", "a") as log:
        log.write(f"{'bpe_openai' in sys.modules}\\n")
"""


@pytest.mark.usefixtures("bench")
def test_a_second_run_takes_its_token_counts_from_the_cache_without_the_tokenizer(
    pytester: pytest.Pytester,
) -> None:
    pytest.importorskip("bpe_openai")
    pytester.makeconftest(TOKENIZER_PROBE)
    # Fresh processes: this one may have imported bpe_openai in another test.
    first = pytester.runpytest_subprocess("--qualbench")
    first.assert_outcomes(passed=5)
    first_section = read_report(pytester)["token_cost"]
    second = pytester.runpytest_subprocess("--qualbench")
    second.assert_outcomes(passed=5)
    assert read_report(pytester)["token_cost"] == first_section
    assert first_section["exact"] is True
    assert (pytester.path / "tokenizer-imported.txt").read_text().split() == ["True", "False"]


def test_start_times_cold_then_seeded_from_the_cache(
    pytester: pytest.Pytester, write_fixture: WriteFixture, word_engine: None
) -> None:
    write_fixture("markdown.jsonl", MARKDOWN)
    result = pytester.runpytest("--qualbench", "--qualbench-start-times")
    result.stdout.fnmatch_lines(
        [
            "start to first answer, cold (index build) vs seeded (index cache), fresh process each",
            "content type*cold ms*seeded ms*ratio*cache",
            # The run itself stored the index before the start times were measured.
            "markdown*x  hit",
            "overall*x",
        ]
    )
    report = read_report(pytester)
    markdown = report["start_times"]["by_content_type"]["markdown"]
    assert markdown["query"] == "connection pool settings"
    assert markdown["same_results"] is True
    assert markdown["ratio"] == pytest.approx(markdown["cold_ms"] / markdown["seeded_ms"])
    assert report["start_times"]["engine"] == "wordengine:WordEngine"
    cache = pytester.path / ".qualbench" / "index-cache"
    # The engine's index (and the lock its build held), the relevant sets' substring
    # index and the corpus token count.
    names = sorted(path.name for path in cache.iterdir())
    assert [name for name in names if not name.endswith(".arrays")] == [
        ".markdown.lock",
        "markdown.idx",
        "substrings",
        "tokens",
    ]
    assert len([name for name in names if name.endswith(".arrays")]) == 1
    substrings = sorted(path.name for path in (cache / "substrings").iterdir())
    assert [name for name in substrings if not name.endswith(".arrays")] == ["markdown.idx"]
    # Timings are machine facts, left out when two reports are checked for equality.
    assert "start_times" not in without_timings(report)


def test_a_planted_pickle_in_the_index_cache_is_rebuilt_not_run(
    pytester: pytest.Pytester, write_fixture: WriteFixture, word_engine: None
) -> None:
    write_fixture("markdown.jsonl", MARKDOWN)
    marker = pytester.path / "pwned"
    cache = pytester.path / ".qualbench" / "index-cache"
    cache.mkdir(parents=True)
    planted = pickle.dumps(Plant(marker))
    header = {"key": "any", "bytes": len(planted), "sha256": hashlib.sha256(planted).hexdigest()}
    (cache / "markdown.idx").write_bytes(
        b"qualbench-index-cache 1\n" + json.dumps(header).encode() + b"\n" + planted
    )
    result = pytester.runpytest("--qualbench")
    result.stdout.fnmatch_lines(["indexing markdown: *, built in * ms"])
    assert not marker.exists()
    assert (cache / "markdown.idx").read_bytes().startswith(MAGIC)
    second = pytester.runpytest("--qualbench")
    second.stdout.fnmatch_lines(["indexing markdown: *, cached (* ms)"])
    assert not marker.exists()


@pytest.mark.usefixtures("bench")
def test_start_times_skip_engines_made_by_the_hook(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
import wordengine

def pytest_qualbench_make_engine(config, content_type):
    return wordengine.WordEngine()
"""
    )
    result = pytester.runpytest("--qualbench", "--qualbench-start-times")
    result.stdout.fnmatch_lines(
        ["start_times skipped: engines come from the pytest_qualbench_make_engine hook"]
    )


@pytest.mark.usefixtures("bench")
def test_an_engine_without_chunks_skips_the_head_to_head(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        chunkless="""
from wordengine import WordEngine

class Chunkless:
    def __init__(self):
        self._inner = WordEngine()

    def index(self, entries):
        self._inner.index(entries)

    def search(self, query, *, limit=10, kinds=("durable",)):
        return self._inner.search(query, limit=limit, kinds=kinds)
"""
    )
    result = pytester.runpytest(
        "--qualbench", "--qualbench-engine=chunkless:Chunkless", "--qualbench-rankers=bm25"
    )
    result.stdout.fnmatch_lines(
        ["rankers skipped: the engine cannot list its chunks (no chunks())"]
    )
    assert read_report(pytester)["rankers"] == {
        "rankers": ["bm25"],
        "metrics": {},
        "lift": {},
        "skipped": "the engine cannot list its chunks (no chunks())",
    }


@pytest.mark.usefixtures("bench")
def test_a_ranker_that_raises_costs_its_section_not_the_report(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        boom="def make(engine, chunks):\n    raise RuntimeError('no ranker today')\n"
    )
    result = pytester.runpytest("--qualbench", "--qualbench-rankers=boom:make")
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(["rankers skipped: RuntimeError: no ranker today"])
    assert read_report(pytester)["rankers"]["skipped"] == "RuntimeError: no ranker today"
