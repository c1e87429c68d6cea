"""Measurements of one benchmark run, the engine's ratios to its peers, and the closing table.

Every value is kept with its samples (build rounds, say), so the table shows a
median with its spread. A ratio is always between numbers of the same run.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from benchmarks.corpus import SCALES
from benchmarks.measure import loglog_slope
from benchmarks.systems import BM25S, ENGINE, PEERS, SYSTEMS, TANTIVY

# Query times: each query's first sight (what a benchmark run sees, typo corrections
# included), p50 and p95 over all queries, then over the typo and exact ones.
QUERY_P50_MS = "query_p50_ms"
QUERY_P95_MS = "query_p95_ms"
TYPO_P50_MS = "typo_p50_ms"
EXACT_P50_MS = "exact_p50_ms"
# p50 over queries of each query's median over the later passes.
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


@dataclass
class Ledger:
    """Samples keyed by (scale, metric, system), filled by the tests as they measure."""

    samples: dict[tuple[str, str, str], list[float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def record(self, scale: str, metric: str, system: str, *values: float) -> None:
        self.samples.setdefault((scale, metric, system), []).extend(values)

    def get(self, scale: str, metric: str, system: str) -> float | None:
        values = self.samples.get((scale, metric, system))
        return statistics.median(values) if values else None

    def spread(self, scale: str, metric: str, system: str) -> tuple[float, float] | None:
        values = self.samples.get((scale, metric, system))
        return (min(values), max(values)) if values and len(values) > 1 else None

    def ratio(self, scale: str, metric: str, peer: str) -> float | None:
        """engine / peer for one metric at one scale, when both were measured."""
        engine = self.get(scale, metric, ENGINE)
        other = self.get(scale, metric, peer)
        if engine is None or other is None or other == 0:
            return None
        return engine / other

    def best_peer(self, scale: str, metric: str) -> str | None:
        """The peer with the best value of the metric at the scale."""
        measured = [peer for peer in PEERS if self.get(scale, metric, peer) is not None]
        if not measured:
            return None
        pick = max if metric in HIGHER_IS_BETTER else min
        return pick(measured, key=lambda peer: self.get(scale, metric, peer) or 0.0)

    def scales(self) -> list[str]:
        measured = {scale for scale, _, _ in self.samples}
        return [scale for scale in SCALES if scale in measured]

    def slope(self, metric: str, system: str) -> float | None:
        """Scaling exponent of the metric against corpus size over the measured scales."""
        points = [
            (SCALES[scale], value)
            for scale in self.scales()
            if (value := self.get(scale, metric, system)) is not None and value > 0
        ]
        if len(points) < 2:
            return None
        return loglog_slope([size for size, _ in points], [value for _, value in points])

    def table(self) -> list[str]:
        """Each scale's figures per system, the engine over the best peer, then exponents."""
        header = (
            f"{'scale':>5} | {'metric':<16} | "
            + " | ".join(f"{system:>15}" for system in SYSTEMS)
            + " | engine / best peer"
        )
        lines = [header, "-" * len(header)]
        for scale in self.scales():
            for metric in TABLE_METRICS:
                cells = [self._cell(scale, metric, system) for system in SYSTEMS]
                if not any(cell.strip() != "-" for cell in cells):
                    continue
                best = self.best_peer(scale, metric)
                ratio = self.ratio(scale, metric, best) if best else None
                versus = f"{ratio:.2f} ({best})" if ratio is not None else "-"
                lines.append(f"{scale:>5} | {metric:<16} | " + " | ".join(cells) + f" | {versus}")
        for metric in SCALED_METRICS:
            slopes = [(system, self.slope(metric, system)) for system in SYSTEMS]
            shown = [f"{system} {slope:.2f}" for system, slope in slopes if slope is not None]
            if shown:
                lines.append(f"scaling exponent of {metric} (log-log slope): {', '.join(shown)}")
        for target in TARGETS:
            value = target.value(self, TARGET_SCALE)
            if value is not None:
                verdict = "met" if target.met(value) else "MISSED"
                lines.append(f"target at {TARGET_SCALE}: {target.name} = {value:.2f} {verdict}")
        return lines + self.notes

    def _cell(self, scale: str, metric: str, system: str) -> str:
        value = self.get(scale, metric, system)
        if value is None:
            return f"{'-':>15}"
        spread = self.spread(scale, metric, system)
        text = (
            f"{value:.3g}" if spread is None else f"{value:.3g} ({spread[0]:.3g}-{spread[1]:.3g})"
        )
        return f"{text:>15}"


@dataclass(frozen=True)
class Target:
    """One of issue 18's targets: a ratio of this run's figures and its bound."""

    name: str
    value: Callable[[Ledger, str], float | None]
    bound: float
    at_least: bool = False

    def met(self, value: float) -> bool:
        return value >= self.bound if self.at_least else value <= self.bound


def _typo_over_exact(ledger: Ledger, scale: str) -> float | None:
    typo = ledger.get(scale, TYPO_P50_MS, ENGINE)
    exact = ledger.get(scale, EXACT_P50_MS, ENGINE)
    return typo / exact if typo is not None and exact else None


def _recall_over_best(ledger: Ledger, scale: str) -> float | None:
    best = ledger.best_peer(scale, RECALL)
    return ledger.ratio(scale, RECALL, best) if best else None


def _versus(metric: str, peer: str) -> Callable[[Ledger, str], float | None]:
    return lambda ledger, scale: ledger.ratio(scale, metric, peer)


TARGETS: Sequence[Target] = (
    Target("query p50 / tantivy", _versus(QUERY_P50_MS, TANTIVY), 2.0),
    Target("query p95 / tantivy", _versus(QUERY_P95_MS, TANTIVY), 5.0),
    Target("typo p50 / exact p50 (engine)", _typo_over_exact, 5.0),
    Target("build / bm25s", _versus(BUILD_S, BM25S), 1.0),
    Target("peak RSS / bm25s", _versus(PEAK_MB, BM25S), 2.0),
    Target("retained RSS / bm25s", _versus(RETAINED_MB, BM25S), 2.0),
    Target("source recall@10 / best peer", _recall_over_best, 1.0, at_least=True),
)
