"""The report's optional sections, computed on the controller once the cases ran.

`rankers` (head-to-head table) and `start_times` reuse the session's
`BenchRun`: the engine it indexed per content type (built here on an xdist
controller, which indexes nothing while the workers run) and the chunks that
engine made. The token cost of a case is counted in the process that ran the
case (see `retrieved_tokens`), so a default run never indexes on the
controller. The plugin only decides which sections are wanted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_qualbench.engine import capabilities
from pytest_qualbench.engine.types import Chunk, SearchEngine
from pytest_qualbench.evaluation.runner import BenchRun
from pytest_qualbench.fixtures.schema import Case
from pytest_qualbench.index_cache import IndexCache
from pytest_qualbench.report.model import Section, Sections
from pytest_qualbench.sections.head_to_head import Grading, head_to_head
from pytest_qualbench.sections.rankers import RankerFactory
from pytest_qualbench.sections.start_times import start_times
from pytest_qualbench.sections.tokens import (
    RETRIEVED_NAME,
    KeptCounts,
    token_cost,
    token_counter,
)

# Under the index cache: the token counts of the haystacks and of the texts runs
# retrieved.
TOKENS_DIR = "tokens"


@dataclass(frozen=True)
class SectionOptions:
    """What the command line asked for beyond the main report."""

    rankers: tuple[tuple[str, RankerFactory], ...]
    tokens_k: int
    start_times: bool
    # None when a conftest hook makes the engines: a fresh process cannot rebuild those.
    engine_spec: str | None
    # KEY=VALUE text of --qualbench-engine-option, typed again where the engine is made.
    engine_options: Mapping[str, str]
    cache_dir: Path
    root: Path


def extra_sections(
    bench_run: BenchRun,
    cases: Sequence[Case],
    options: SectionOptions,
    retrieved: Mapping[str, int],
    tokens_error: str | None = None,
) -> Sections:
    """The wanted sections over the cases that ran, keyed by their report name.

    `retrieved` holds `retrieved_tokens` per case id, from every process that ran
    cases; `tokens_error` is why one of them could not count its texts.
    """
    positives = sorted((case for case in cases if not case.is_negative), key=lambda c: c.case_id)
    sections: Sections = {}
    if not positives:
        return sections
    if options.rankers:
        names = [name for name, _ in options.rankers]
        sections["rankers"] = guarded(
            lambda: rankers_section(bench_run, positives, options.rankers),
            {"rankers": names, "metrics": {}, "lift": {}},
        )
    if options.tokens_k > 0 and tokens_error is not None:
        sections["token_cost"] = {"skipped": f"a result could not be counted: {tokens_error}"}
    elif options.tokens_k > 0:
        counted = [case for case in positives if case.case_id in retrieved]
        sections["token_cost"] = guarded(
            lambda: token_cost(
                counted,
                bench_run.fixture_set.entries,
                retrieved,
                k=options.tokens_k,
                counter=token_counter(),
                cache=IndexCache(options.cache_dir / TOKENS_DIR),
            ),
            {},
        )
    if options.start_times:
        sections["start_times"] = guarded(
            lambda: start_times_section(bench_run, positives, options), {}
        )
    return sections


def guarded(compute: Callable[[], Section], empty: Section) -> Section:
    """The section, or its `empty` shape plus {"skipped": the exception} when computing it raised."""
    # An engine or ranker that raises must not cost the run its report; the
    # engine's own cases already failed with its traceback.
    try:
        return compute()
    except Exception as exc:
        return {**empty, "skipped": f"{type(exc).__name__}: {exc}"}


@dataclass(frozen=True)
class RetrievedTokens:
    """Token counts per positive case id, and why counting stopped, if it did."""

    counts: dict[str, int]
    error: str | None = None


def retrieved_tokens(bench_run: BenchRun, k: int) -> RetrievedTokens:
    """Tokens of the top k result texts of each positive case this process searched.

    The texts are those the case's own search returned (at most the run's
    limit); a case whose search raised has none. Counted together once the
    cases ran, not case by case: between two searches the tokenizer's tables
    fall out of the CPU caches, and encoding then took 1.7x as long. A text
    the tokenizer refuses (not a str, past its length limit) ends the count
    with an error for the token_cost section; the report keeps everything else.
    Counts are kept in the index cache for the next run (`KeptCounts`).
    """
    if k <= 0:
        return RetrievedTokens({})
    cache = bench_run.index_cache
    kept = KeptCounts(
        token_counter(),
        None if cache is None else IndexCache(cache.directory / TOKENS_DIR),
        RETRIEVED_NAME,
    )
    counts: dict[str, int] = {}
    for case_id, texts in sorted(bench_run.retrieved.items()):
        try:
            counts[case_id] = sum(kept.count(text) for text in texts[:k])
        except Exception as exc:
            return RetrievedTokens(counts, f"case {case_id}: {type(exc).__name__}: {exc}")
    kept.store()
    return RetrievedTokens(counts)


def rankers_section(
    bench_run: BenchRun, positives: Sequence[Case], rankers: Sequence[tuple[str, RankerFactory]]
) -> Section:
    """The head-to-head table, or why it could not be made."""
    names = [name for name, _ in rankers]

    def corpus_of(content_type: str) -> tuple[SearchEngine, tuple[Chunk, ...]]:
        engine = bench_run.corpus(content_type).engine
        chunks = capabilities.listed_chunks(engine)
        assert chunks is not None, "checked below before any ranker runs"
        return engine, chunks

    if not all(
        capabilities.lists_chunks(bench_run.corpus(case.content_type).engine) for case in positives
    ):
        return {
            "rankers": names,
            "metrics": {},
            "lift": {},
            "skipped": "the engine cannot list its chunks (no chunks())",
        }
    grading = Grading(bench_run.attribution, bench_run.min_grade, bench_run.gain)
    return head_to_head(positives, corpus_of, rankers, grading)


def start_times_section(
    bench_run: BenchRun, positives: Sequence[Case], options: SectionOptions
) -> Section:
    """Cold and seeded start per content type, first positive case's query (by case_id)."""
    if options.engine_spec is None:
        return {"skipped": "engines come from the pytest_qualbench_make_engine hook"}
    first_queries: dict[str, str] = {}
    for case in positives:
        first_queries.setdefault(case.content_type, case.query)
    return start_times(
        first_queries,
        engine_spec=options.engine_spec,
        engine_options=options.engine_options,
        fixture_paths=[fixture_file.path for fixture_file in bench_run.fixture_set.files],
        root=options.root,
        cache_dir=options.cache_dir,
    )
