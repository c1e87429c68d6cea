"""Index builds as their own step: before the first case, one terminal line per content type.

Built inside the first case, an index's build time was charged to that case (it
showed in `--durations`) and a long build gave no sign of life. Now every content
type with a selected case is indexed before the cases run, each build is reported
(`indexing markdown: 14 entries -> 82 chunks, built in 35 ms`, or `cached (3 ms)`
when the index came from the on-disk index cache), and a build past a couple
of seconds ticks with its elapsed time. An xdist worker, which has no terminal,
indexes a content type when its first case of it arrives, before that case's
timed phases, so each worker builds only what it runs.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_qualbench.authoring.probe import counted
from pytest_qualbench.evaluation.runner import BenchRun, EngineStartupError, IndexedCorpus
from pytest_qualbench.plugin.items import CaseItem
from pytest_qualbench.plugin.progress import ticking

# A build longer than this shows progress: its elapsed time, every second on a
# terminal, else (CI logs) one line every LOG_TICK_S.
PROGRESS_AFTER_S = 2.0
LOG_TICK_S = 10.0


def build_indexes(session: pytest.Session, bench_run: BenchRun) -> EngineStartupError | None:
    """Index each content type the selected cases need, reporting each build.

    Stops at the first content type the engine cannot start for, and returns why:
    no case can run, and the next type would most likely fail the same way.
    """
    config = session.config
    needed = sorted(
        {item.case.content_type for item in session.items if isinstance(item, CaseItem)}
    )
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    for content_type in needed:
        if content_type in bench_run.corpora:
            continue  # an earlier step of the session (--qualbench-lint) indexed it
        label = (
            f"indexing {content_type}: "
            f"{counted(len(bench_run.fixture_set.entries(content_type)), 'entry')}"
        )
        ticker = _Ticker(reporter, label)
        every = 1.0 if ticker.rewrites else LOG_TICK_S
        with ticking(ticker.tick, after=PROGRESS_AFTER_S, every=every):
            bench_run.prepare(content_type)
        failed = bench_run.startup_error(content_type)
        if failed is not None:
            ticker.done("", verbose=False)  # the usage error says it, once
            return failed
        ticker.done(
            _built_line(label, bench_run.corpora[content_type]), verbose=config.option.verbose >= 0
        )
    return None


def is_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _built_line(label: str, outcome: IndexedCorpus) -> str:
    texts = outcome.chunk_texts
    chunks = "" if texts is None else f" -> {counted(texts.chunk_count, 'chunk')}"
    if outcome.cached:
        return f"{label}{chunks}, cached ({outcome.index_ms:.0f} ms)"
    return f"{label}{chunks}, built in {outcome.index_ms:.0f} ms"


class _Ticker:
    """Writes the elapsed time of one build: rewriting one line on a terminal, else a line."""

    def __init__(self, reporter: Any, label: str) -> None:
        self.reporter = reporter
        self.label = label
        self.rewrites = reporter is not None and bool(reporter.isatty)
        self.ticked = False

    def tick(self, elapsed_s: float) -> None:
        if self.reporter is None:
            return
        text = f"{self.label} ... {elapsed_s:.0f} s"
        if self.rewrites:
            self.reporter.rewrite(text, erase=True)
        else:
            self.reporter.write_line(text)
        self.ticked = True

    def done(self, text: str, *, verbose: bool) -> None:
        """The build's line (shown unless -q), in place of its elapsed-time ticks."""
        if self.reporter is None:
            return
        if self.ticked and self.rewrites:
            self.reporter.rewrite(text if verbose else "", erase=True)
            if verbose and text:
                self.reporter.write("\n")
        elif verbose and text:
            self.reporter.write_line(text)
