"""Measurements of one benchmark run, their engine/FTS5 ratios and the closing table."""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmarks.corpus import SCALES
from benchmarks.measure import loglog_slope
from benchmarks.workbench import ENGINE, FTS5

# Query p50 on first sight of each query (what a benchmark run sees), and on repeats.
QUERY_P50_MS = "query_p50_ms"
REPEAT_QUERY_P50_MS = "repeat_p50_ms"
BUILD_S = "build_s"
# Engine: deep size of the built index's objects; FTS5: the database's pages.
MEMORY_MB = "index_mb"
# (metric, engine/FTS5 ratio target at TARGET_SCALE)
RATIO_TARGETS = {QUERY_P50_MS: 0.25, BUILD_S: 1.0, MEMORY_MB: 1.0}
TABLE_METRICS = (QUERY_P50_MS, REPEAT_QUERY_P50_MS, BUILD_S, MEMORY_MB)
TARGET_SCALE = "100k"


@dataclass
class Ledger:
    """Values keyed by (scale, metric, side), filled by the tests as they measure."""

    values: dict[tuple[str, str, str], float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def record(self, scale: str, metric: str, side: str, value: float) -> None:
        self.values[(scale, metric, side)] = value

    def get(self, scale: str, metric: str, side: str) -> float | None:
        return self.values.get((scale, metric, side))

    def ratio(self, scale: str, metric: str) -> float | None:
        """engine / FTS5 for one metric at one scale, when both were measured."""
        engine = self.get(scale, metric, ENGINE)
        reference = self.get(scale, metric, FTS5)
        if engine is None or reference is None or reference == 0:
            return None
        return engine / reference

    def scales(self) -> list[str]:
        measured = {scale for scale, _, _ in self.values}
        return [scale for scale in SCALES if scale in measured]

    def query_slope(self, side: str) -> float | None:
        """Scaling exponent of query p50 against corpus size over the measured scales."""
        points = [
            (SCALES[scale], value)
            for scale in self.scales()
            if (value := self.get(scale, QUERY_P50_MS, side)) is not None and value > 0
        ]
        if len(points) < 2:
            return None
        return loglog_slope([size for size, _ in points], [value for _, value in points])

    def table(self) -> list[str]:
        """The ratio table at every measured scale, then the scaling exponents."""
        header = (
            f"{'scale':>6} | {'metric':<13} | {'engine':>10} | {'fts5':>10} | {'ratio':>6} | target"
        )
        lines = [header, "-" * len(header)]
        for scale in self.scales():
            for metric in TABLE_METRICS:
                target = RATIO_TARGETS.get(metric)
                engine = self.get(scale, metric, ENGINE)
                reference = self.get(scale, metric, FTS5)
                ratio = self.ratio(scale, metric)
                verdict = ""
                if scale == TARGET_SCALE and ratio is not None and target is not None:
                    verdict = f"<= {target} {'met' if ratio <= target else 'MISSED'}"
                lines.append(
                    f"{scale:>6} | {metric:<13} | {_number(engine)} | {_number(reference)} | "
                    f"{_number(ratio, 6, 3)} | {verdict}"
                )
        for side in (ENGINE, FTS5):
            slope = self.query_slope(side)
            if slope is not None:
                lines.append(f"query p50 scaling exponent ({side}, log-log slope): {slope:.2f}")
        return lines + self.notes


def _number(value: float | None, width: int = 10, digits: int = 2) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}.{digits}f}"
