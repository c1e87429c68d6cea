"""Figures of one benchmark run, read from its pytest-benchmark benchmarks; ratios; the closing table.

Times are the rounds pytest-benchmark timed (`benchmark.stats.stats.data`, in
seconds): a query benchmark's rounds are its queries, a build benchmark's its
fresh builds. Memory and recall are no timings: the tests put them in the
benchmark's `extra_info`, whence the ledger reads them and pytest-benchmark
writes them to its JSON. Figures are keyed by (corpus, scale, metric, system) and
kept with their samples (build rounds, say), so the table shows a median with
its spread. A ratio is always between numbers of the same run.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from benchmarks.corpora import CORPORA
from benchmarks.corpus import SCALES
from benchmarks.measure import loglog_slope, percentile
from benchmarks.systems import BM25S, ENGINE, PEERS, SYSTEMS, TANTIVY

# Query times: each query's first sight (what a benchmark run sees, typo corrections
# included), p50, p95 and p99 over all queries, then p50 over the typo and exact ones.
QUERY_P50_MS = "query_p50_ms"
QUERY_P95_MS = "query_p95_ms"
QUERY_P99_MS = "query_p99_ms"
TYPO_P50_MS = "typo_p50_ms"
EXACT_P50_MS = "exact_p50_ms"
# p50 over every search of the later passes over the queries.
REPEAT_P50_MS = "repeat_p50_ms"
BUILD_S = "build_s"
# RSS of a fresh process per system, above its RSS just before the build.
PEAK_MB = "peak_rss_mb"
RETAINED_MB = "retained_rss_mb"
# Share of queries whose source chunk is in the top 10: higher is better.
RECALL = "source_recall@10"
TABLE_METRICS = (
    QUERY_P50_MS,
    QUERY_P95_MS,
    QUERY_P99_MS,
    TYPO_P50_MS,
    EXACT_P50_MS,
    REPEAT_P50_MS,
    BUILD_S,
    PEAK_MB,
    RETAINED_MB,
    RECALL,
)
HIGHER_IS_BETTER = {RECALL}
SCALED_METRICS = (QUERY_P50_MS, QUERY_P95_MS, BUILD_S, RETAINED_MB)
TARGET_SCALE = "100k"
MS_PER_S = 1000.0


@dataclass
class Ledger:
    """Samples keyed by (corpus, scale, metric, system), read from each benchmark as it ends."""

    samples: dict[tuple[str, str, str, str], list[float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def record_queries(
        self,
        corpus: str,
        scale: str,
        system: str,
        rounds_s: Sequence[float],
        has_typo: Sequence[bool],
        recall: float,
    ) -> None:
        """A first-sight query benchmark: its rounds are the queries, in query order."""
        times_ms = [seconds * MS_PER_S for seconds in rounds_s]
        typo = [ms for ms, flag in zip(times_ms, has_typo, strict=True) if flag]
        exact = [ms for ms, flag in zip(times_ms, has_typo, strict=True) if not flag]
        self._record(corpus, scale, QUERY_P50_MS, system, statistics.median(times_ms))
        self._record(corpus, scale, QUERY_P95_MS, system, percentile(times_ms, 95))
        self._record(corpus, scale, QUERY_P99_MS, system, percentile(times_ms, 99))
        if typo:
            self._record(corpus, scale, TYPO_P50_MS, system, statistics.median(typo))
        if exact:
            self._record(corpus, scale, EXACT_P50_MS, system, statistics.median(exact))
        self._record(corpus, scale, RECALL, system, recall)

    def record_repeats(
        self, corpus: str, scale: str, system: str, rounds_s: Sequence[float]
    ) -> None:
        """A repeat query benchmark: its rounds are the searches of the later passes."""
        median_ms = statistics.median(rounds_s) * MS_PER_S
        self._record(corpus, scale, REPEAT_P50_MS, system, median_ms)

    def record_builds(
        self,
        corpus: str,
        scale: str,
        system: str,
        rounds_s: Sequence[float],
        peak_mb: Sequence[float],
        retained_mb: Sequence[float],
    ) -> None:
        """A fresh-build benchmark: one round per build, and each build's memory."""
        self._record(corpus, scale, BUILD_S, system, *rounds_s)
        self._record(corpus, scale, PEAK_MB, system, *peak_mb)
        self._record(corpus, scale, RETAINED_MB, system, *retained_mb)

    def figures(
        self, corpus: str, scale: str, system: str, metrics: Sequence[str]
    ) -> dict[str, float]:
        """The system's medians of these metrics, those measured: a benchmark's extra_info."""
        return {
            metric: value
            for metric in metrics
            if (value := self.get(corpus, scale, metric, system)) is not None
        }

    def get(self, corpus: str, scale: str, metric: str, system: str) -> float | None:
        values = self.samples.get((corpus, scale, metric, system))
        return statistics.median(values) if values else None

    def spread(
        self, corpus: str, scale: str, metric: str, system: str
    ) -> tuple[float, float] | None:
        values = self.samples.get((corpus, scale, metric, system))
        return (min(values), max(values)) if values and len(values) > 1 else None

    def ratio(self, corpus: str, scale: str, metric: str, peer: str) -> float | None:
        """engine / peer for one metric at one scale of one corpus, when both were measured."""
        engine = self.get(corpus, scale, metric, ENGINE)
        other = self.get(corpus, scale, metric, peer)
        if engine is None or other is None or other == 0:
            return None
        return engine / other

    def best_peer(self, corpus: str, scale: str, metric: str) -> str | None:
        """The peer with the best value of the metric at the scale of the corpus."""
        measured = [peer for peer in PEERS if self.get(corpus, scale, metric, peer) is not None]
        if not measured:
            return None
        pick = max if metric in HIGHER_IS_BETTER else min
        return pick(measured, key=lambda peer: self.get(corpus, scale, metric, peer) or 0.0)

    def corpora(self) -> list[str]:
        measured = {corpus for corpus, _, _, _ in self.samples}
        return [corpus for corpus in CORPORA if corpus in measured]

    def scales(self, corpus: str) -> list[str]:
        measured = {scale for name, scale, _, _ in self.samples if name == corpus}
        return [scale for scale in SCALES if scale in measured]

    def slope(self, corpus: str, metric: str, system: str) -> float | None:
        """Scaling exponent of the metric against corpus size over the measured scales."""
        points = [
            (SCALES[scale], value)
            for scale in self.scales(corpus)
            if (value := self.get(corpus, scale, metric, system)) is not None and value > 0
        ]
        if len(points) < 2:
            return None
        return loglog_slope([size for size, _ in points], [value for _, value in points])

    def table(self) -> list[str]:
        """Each corpus and scale's figures per system, the engine over the best peer, exponents."""
        header = (
            f"{'corpus':<8} | {'scale':>5} | {'metric':<16} | "
            + " | ".join(f"{system:>15}" for system in SYSTEMS)
            + " | engine / best peer"
        )
        lines = [header, "-" * len(header)]
        for corpus in self.corpora():
            for scale in self.scales(corpus):
                lines.extend(self._scale_lines(corpus, scale))
        for corpus in self.corpora():
            for metric in SCALED_METRICS:
                slopes = [(system, self.slope(corpus, metric, system)) for system in SYSTEMS]
                shown = [f"{system} {slope:.2f}" for system, slope in slopes if slope is not None]
                if shown:
                    lines.append(
                        f"{corpus}: scaling exponent of {metric} (log-log slope): "
                        + ", ".join(shown)
                    )
            for target in TARGETS:
                value = target.value(self, corpus, TARGET_SCALE)
                if value is not None:
                    verdict = "met" if target.met(value) else "MISSED"
                    lines.append(
                        f"{corpus}: target at {TARGET_SCALE}: {target.name} = {value:.2f} {verdict}"
                    )
        return lines + self.notes

    def _record(self, corpus: str, scale: str, metric: str, system: str, *values: float) -> None:
        self.samples.setdefault((corpus, scale, metric, system), []).extend(values)

    def _scale_lines(self, corpus: str, scale: str) -> list[str]:
        lines = []
        for metric in TABLE_METRICS:
            cells = [self._cell(corpus, scale, metric, system) for system in SYSTEMS]
            if not any(cell.strip() != "-" for cell in cells):
                continue
            best = self.best_peer(corpus, scale, metric)
            ratio = self.ratio(corpus, scale, metric, best) if best else None
            versus = f"{ratio:.2f} ({best})" if ratio is not None else "-"
            lines.append(
                f"{corpus:<8} | {scale:>5} | {metric:<16} | " + " | ".join(cells) + f" | {versus}"
            )
        return lines

    def _cell(self, corpus: str, scale: str, metric: str, system: str) -> str:
        value = self.get(corpus, scale, metric, system)
        if value is None:
            return f"{'-':>15}"
        spread = self.spread(corpus, scale, metric, system)
        text = (
            f"{value:.3g}" if spread is None else f"{value:.3g} ({spread[0]:.3g}-{spread[1]:.3g})"
        )
        return f"{text:>15}"


@dataclass(frozen=True)
class Target:
    """One of issue 18's targets: a ratio of this run's figures on one corpus, and its bound."""

    name: str
    value: Callable[[Ledger, str, str], float | None]
    bound: float
    at_least: bool = False

    def met(self, value: float) -> bool:
        return value >= self.bound if self.at_least else value <= self.bound


def _typo_over_exact(ledger: Ledger, corpus: str, scale: str) -> float | None:
    typo = ledger.get(corpus, scale, TYPO_P50_MS, ENGINE)
    exact = ledger.get(corpus, scale, EXACT_P50_MS, ENGINE)
    return typo / exact if typo is not None and exact else None


def _recall_over_best(ledger: Ledger, corpus: str, scale: str) -> float | None:
    best = ledger.best_peer(corpus, scale, RECALL)
    return ledger.ratio(corpus, scale, RECALL, best) if best else None


def _versus(metric: str, peer: str) -> Callable[[Ledger, str, str], float | None]:
    return lambda ledger, corpus, scale: ledger.ratio(corpus, scale, metric, peer)


TARGETS: Sequence[Target] = (
    Target("query p50 / tantivy", _versus(QUERY_P50_MS, TANTIVY), 2.0),
    Target("query p95 / tantivy", _versus(QUERY_P95_MS, TANTIVY), 5.0),
    Target("typo p50 / exact p50 (engine)", _typo_over_exact, 3.0),
    Target("build / bm25s", _versus(BUILD_S, BM25S), 1.0),
    Target("peak RSS / bm25s", _versus(PEAK_MB, BM25S), 2.0),
    Target("retained RSS / bm25s", _versus(RETAINED_MB, BM25S), 2.0),
    Target("source recall@10 / best peer", _recall_over_best, 1.0, at_least=True),
)
