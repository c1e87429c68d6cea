"""Figures that README.md, docs/ and pyproject.toml quote, against what the code gives now.

A quoted number goes stale silently: the dataset hash after a fixture edit, the
metrics after an engine change. Each quote is listed below as a pattern whose
named groups are figures; the tests compute every figure from bench_fixtures/
(the counts and the hash from the fixture set, the metrics from running every
case through the default engine, as `pytest --qualbench` does) and fail with
the file, the line and the value to write. A sentence reworded so that its
pattern no longer matches fails too: update its pattern in QUOTES.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_qualbench.adapters.registry import resolve_engine
from pytest_qualbench.evaluation.case_record import CaseRecord
from pytest_qualbench.evaluation.metrics import mean_metrics
from pytest_qualbench.evaluation.runner import DEFAULT_ENGINE, BenchRun
from pytest_qualbench.fixtures.discovery import discover_fixture_files
from pytest_qualbench.fixtures.loading import load_fixture_set
from pytest_qualbench.fixtures.schema import Case, FixtureSet
from pytest_qualbench.sections.extra import rankers_section
from pytest_qualbench.sections.rankers import resolve_ranker
from tests.test_bench_fixtures import BENCH_DIR, ROOT, is_question

# Where figures of the shipped benchmark may be quoted (CHANGELOG.md is history).
QUOTING_FILES = ("README.md", "pyproject.toml", *sorted(
    str(path.relative_to(ROOT)) for path in (ROOT / "docs").glob("*.md")
))  # fmt: skip
HASH_QUOTE = re.compile(r"sha256:([0-9a-f]{8,64})")
# A space in a pattern stands for any run of whitespace, a line break included
# (and a `#` for the comment lines of pyproject.toml).
GAP = r"[\s#]+"


@dataclass(frozen=True)
class Quote:
    """A sentence of `path` quoting figures: each named group of `pattern` is one figure."""

    path: str
    pattern: str

    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern.replace(" ", GAP), re.DOTALL)


FIGURE = r"[0-9]+(?:\.[0-9]+)?"


def figure(name: str) -> str:
    return f"(?P<{name}>{FIGURE})"


QUOTES = (
    # The counts of the shipped benchmark.
    Quote(
        "README.md",
        rf"holds {figure('entries')} original entries \(.*?\) with {figure('cases')} labeled "
        rf"cases: {figure('keyword_cases')} keyword queries .*? {figure('question_cases')} "
        r"natural-language questions",
    ),
    Quote(
        "pyproject.toml",
        rf"{figure('keyword_cases')} keyword \+ {figure('question_cases')} question cases",
    ),
    Quote("docs/head-to-head.md", rf"head-to-head over {figure('positive_cases')} positive cases"),
    Quote("docs/head-to-head.md", rf"\*\*bench_fixtures\*\* \({figure('positive_cases')} positive"),
    Quote("docs/engine.md", rf"hit@1 over its {figure('positive_cases')} positive cases"),
    # The gate's metrics on it, with the default engine.
    Quote(
        "README.md",
        rf"With the built-in engine \(dataset `sha256:[0-9a-f]+`\): hit@1 {figure('hit1')}, "
        rf"MRR {figure('mrr')}, nDCG@10 {figure('ndcg10')}, every negative empty; the keyword "
        rf"cases alone score hit@1 {figure('keyword_hit1')}, MRR {figure('keyword_mrr')}, "
        rf"nDCG@10 {figure('keyword_ndcg10')}\. The engine fails {figure('failing')} of the "
        rf"questions \({figure('failing_not_found')} miss the top 10, "
        rf"{figure('failing_ceiling')} their ceiling, {figure('failing_layer')} only the layer",
    ),
    Quote(
        "README.md",
        rf"engine precision@1 {figure('hit1')} against {figure('bm25_hit1')} for BM25 .*? on "
        rf"its {figure('question_cases')} question cases alone MRR {figure('question_mrr')} "
        rf"against BM25's {figure('bm25_question_mrr')}",
    ),
    Quote(
        "pyproject.toml",
        rf"hit@1 {figure('hit1')}, mrr {figure('mrr')}, ndcg@10 {figure('ndcg10')}, "
        rf"context_recall {figure('context_recall')}, layer_accuracy {figure('layer_accuracy')}, "
        rf"rank_ceiling_pass {figure('rank_ceiling_pass')}, negative_pass "
        rf"{figure('negative_pass')}; mrr markdown {figure('markdown_mrr')}, json "
        rf"{figure('json_mrr')}, plaintext {figure('plaintext_mrr')}, transcript "
        rf"{figure('transcript_mrr')}, curated {figure('curated_mrr')}\.",
    ),
    Quote("pyproject.toml", rf"The {figure('failing')} cases still failing"),
    Quote(
        "docs/writing-fixtures.md",
        rf"The built-in engine fails {figure('failing')} of the {figure('question_cases')}",
    ),
    # The `bm25` and `engine` columns of the head-to-head table (flatfile, bm25, engine,
    # quality).
    Quote(
        "docs/head-to-head.md",
        rf"\nprecision@1 {FIGURE} {figure('bm25_hit1')} {figure('hit1')} ",
    ),
    Quote("docs/head-to-head.md", rf"\nmrr {FIGURE} {figure('bm25_mrr')} {figure('mrr')} "),
    Quote(
        "docs/head-to-head.md",
        rf"\nndcg@10 {FIGURE} {figure('bm25_ndcg10')} {figure('ndcg10')} ",
    ),
    Quote(
        "docs/head-to-head.md",
        rf"Over its {figure('question_cases')} question cases alone .*? MRR "
        rf"{figure('question_mrr')} against {figure('bm25_question_mrr')}, nDCG@10 "
        rf"{figure('question_ndcg10')} against {figure('bm25_question_ndcg10')} ",
    ),
)
# The figures of QUOTES that need a run of every case (the others come from the files).
RUN_FIGURES = {
    "hit1", "mrr", "ndcg10", "context_recall", "layer_accuracy", "rank_ceiling_pass",
    "negative_pass", "markdown_mrr", "json_mrr", "plaintext_mrr", "transcript_mrr",
    "curated_mrr", "keyword_hit1", "keyword_mrr", "keyword_ndcg10", "question_mrr",
    "failing", "failing_not_found", "failing_ceiling", "failing_layer", "question_ndcg10",
    "bm25_hit1", "bm25_mrr", "bm25_ndcg10", "bm25_question_mrr", "bm25_question_ndcg10",
}  # fmt: skip


@pytest.fixture(scope="module")
def fixture_set() -> FixtureSet:
    return load_fixture_set(discover_fixture_files([BENCH_DIR]), ROOT)


def count_figures(fixture_set: FixtureSet) -> dict[str, str]:
    cases = list(fixture_set.cases())
    positives = [case for case in cases if not case.is_negative]
    questions = [case for case in positives if is_question(case)]
    return {
        "entries": str(len(fixture_set.entries())),
        "cases": str(len(cases)),
        "positive_cases": str(len(positives)),
        "keyword_cases": str(len(positives) - len(questions)),
        "question_cases": str(len(questions)),
    }


def run_figures(fixture_set: FixtureSet) -> dict[str, str]:
    """The gate's figures: every case through the default engine, as `pytest --qualbench`."""
    bench_run = BenchRun(fixture_set, lambda _content_type: resolve_engine(DEFAULT_ENGINE)(), 10)
    try:
        records = [bench_run.run_case(case) for case in fixture_set.cases()]
        bm25 = bm25_figures(bench_run, list(fixture_set.cases()))
    finally:
        bench_run.close()
    cases = {case.case_id: case for case in fixture_set.cases()}
    positives = [record for record in records if not record.negative]
    keyword = [record for record in positives if not is_question(cases[record.case_id])]
    questions = [record for record in positives if is_question(cases[record.case_id])]
    failing = [record for record in records if record.failures]
    overall = means(positives)
    figures = {
        "hit1": overall["hit@1"],
        "mrr": overall["mrr"],
        "ndcg10": overall["ndcg@10"],
        "context_recall": overall["context_recall"],
        "layer_accuracy": overall["layer_accuracy"],
        "rank_ceiling_pass": overall["rank_ceiling_pass"],
        "negative_pass": means([record for record in records if record.negative])["negative_pass"],
        "keyword_hit1": means(keyword)["hit@1"],
        "keyword_mrr": means(keyword)["mrr"],
        "keyword_ndcg10": means(keyword)["ndcg@10"],
        "question_mrr": means(questions)["mrr"],
        "question_ndcg10": means(questions)["ndcg@10"],
        **bm25,
    }
    for content_type in ("markdown", "json", "plaintext", "transcript", "curated"):
        typed = [record for record in positives if record.content_type == content_type]
        figures[f"{content_type}_mrr"] = means(typed)["mrr"]
    shown = {name: f"{value:.3f}" for name, value in figures.items()}
    not_found = [record for record in failing if record.rank is None]
    ceiling = [
        record
        for record in failing
        if record.rank is not None and record.rank > cases[record.case_id].expected_rank_ceiling
    ]
    return {
        **shown,
        "failing": str(len(failing)),
        "failing_not_found": str(len(not_found)),
        "failing_ceiling": str(len(ceiling)),
        "failing_layer": str(len(failing) - len(not_found) - len(ceiling)),
    }


def bm25_figures(bench_run: BenchRun, cases: Sequence[Case]) -> dict[str, float]:
    """The `bm25` ranker's head-to-head figures, over every positive case and the questions."""
    positives = [case for case in cases if not case.is_negative]
    bm25 = [("bm25", resolve_ranker("bm25"))]
    overall = rankers_section(bench_run, positives, bm25)["metrics"]
    questions = rankers_section(bench_run, [c for c in positives if is_question(c)], bm25)
    return {
        "bm25_hit1": overall["precision@1"]["bm25"],
        "bm25_mrr": overall["mrr"]["bm25"],
        "bm25_ndcg10": overall["ndcg@10"]["bm25"],
        "bm25_question_mrr": questions["metrics"]["mrr"]["bm25"],
        "bm25_question_ndcg10": questions["metrics"]["ndcg@10"]["bm25"],
    }


def means(records: Sequence[CaseRecord]) -> dict[str, float]:
    table = mean_metrics([record.metrics for record in records], METRIC_KEYS)
    return {name: value for name, value in table.items() if value is not None}


METRIC_KEYS = (
    "hit@1", "mrr", "ndcg@10", "context_recall", "layer_accuracy", "rank_ceiling_pass",
    "negative_pass",
)  # fmt: skip


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def stale_quotes(
    figures: dict[str, str],
    wanted: Callable[[str], bool],
    quotes: Sequence[Quote] = QUOTES,
    root: Path = ROOT,
) -> Iterator[str]:
    """One line per quote that no longer matches: file:line, the figure, what to write."""
    for quote in quotes:
        text = (root / quote.path).read_text(encoding="utf-8")
        matches = list(quote.regex().finditer(text))
        names = [name for name in quote.regex().groupindex if wanted(name)]
        if not names:
            continue
        if not matches:
            yield (
                f"{quote.path}: no sentence matches the quote pattern {quote.pattern!r}; "
                "reword it back, or update its pattern in tests/test_docs_figures.py QUOTES"
            )
        for match in matches:
            for name in names:
                if match[name] != figures[name]:
                    yield (
                        f"{quote.path}:{line_of(text, match.start(name))}: {name} is quoted as "
                        f"{match[name]}, the code gives {figures[name]}: write {figures[name]}"
                    )


def test_every_quoted_dataset_hash_is_the_shipped_benchmarks(fixture_set: FixtureSet) -> None:
    current = fixture_set.dataset_hash.removeprefix("sha256:")
    stale = []
    for path in QUOTING_FILES:
        text = (ROOT / path).read_text(encoding="utf-8")
        for match in HASH_QUOTE.finditer(text):
            if not current.startswith(match[1]):
                stale.append(
                    f"{path}:{line_of(text, match.start())}: sha256:{match[1]} is not the "
                    f"dataset hash of bench_fixtures/: write sha256:{current[: len(match[1])]}"
                )
    assert not stale, "\n".join(["quoted dataset hashes to update:", *stale])


def test_quoted_case_counts_are_the_fixture_sets(fixture_set: FixtureSet) -> None:
    stale = list(stale_quotes(count_figures(fixture_set), lambda name: name not in RUN_FIGURES))
    assert not stale, "\n".join(["quoted case counts to update:", *stale])


def test_quoted_metrics_and_failures_are_the_default_engines(fixture_set: FixtureSet) -> None:
    figures = run_figures(fixture_set)
    stale = list(stale_quotes(figures, lambda name: name in RUN_FIGURES))
    assert not stale, "\n".join(
        ["quoted figures of `pytest --qualbench` (default engine) to update:", *stale]
    )


def test_every_quote_pattern_names_only_figures_the_tests_compute(
    fixture_set: FixtureSet,
) -> None:
    known = set(count_figures(fixture_set)) | RUN_FIGURES
    for quote in QUOTES:
        assert set(quote.regex().groupindex) <= known, quote.pattern


def test_a_stale_quote_names_its_file_line_and_the_value_to_write(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(
        "# Title\n\n`bench_fixtures/` holds 66 original entries (runbooks) with 387\n"
        "labeled cases: 255 keyword queries (a typo case), 66 natural-language questions.\n"
    )
    figures = {"entries": "66", "cases": "390", "keyword_cases": "258", "question_cases": "66"}
    messages = list(stale_quotes(figures, lambda name: True, QUOTES[:1], tmp_path))
    assert messages == [
        "README.md:3: cases is quoted as 387, the code gives 390: write 390",
        "README.md:4: keyword_cases is quoted as 255, the code gives 258: write 258",
    ]


def test_a_reworded_sentence_is_named_with_its_pattern(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("`bench_fixtures/` has 66 entries and 387 cases.\n")
    [message] = stale_quotes({}, lambda name: True, QUOTES[:1], tmp_path)
    assert message.startswith("README.md: no sentence matches the quote pattern")
    assert "tests/test_docs_figures.py QUOTES" in message
