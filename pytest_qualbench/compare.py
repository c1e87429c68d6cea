"""Report comparison: load two reports, diff them, test significance, apply regression rules.

The comparison is paired: both reports score the same cases (same dataset hash),
so every metric change is tested over per-case values, not just aggregates. A
change is judged twice, independently: by the regression rules (does it drop more
than allowed?) and by significance (is it more than noise?). Only the rules decide
the exit code; significance tells a reviewer how much to trust a delta.
"""

from __future__ import annotations

import argparse
import bisect
import difflib
import itertools
import json
import math
import operator
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_qualbench.fixtures import CONTENT_TYPES
from pytest_qualbench.metrics import ALL_METRIC_NAMES

SUPPORTED_SCHEMA_VERSION = 1
ROUNDS = 10_000
# Percentile intervals need about a thousand resamples (Efron & Tibshirani 1993,
# 19.3); each costs one draw per changed case, so 2,000 keeps a large report fast.
RESAMPLES = 2_000
ALPHA = 0.05
CONFIDENCE = 0.95
TOLERANT_MAX_DROP = 0.02
RANK_MOVES_SHOWN = 10
OVERALL = "overall"
FORMATS = ("text", "markdown", "json")
# Deltas and sums are float arithmetic: a drop of "exactly 0.02" must not regress
# because 0.90 - 0.88 evaluates to 0.020000000000000018.
FLOAT_SLACK = 1e-9

# Display order of docs/report-format.md; metrics a later metric_version adds
# follow alphabetically.
METRIC_ORDER = ALL_METRIC_NAMES
# A case either gets every needle / the right layer / an empty negative result or
# not, so these metrics have no noise to tolerate: any drop is a lost case.
STRICT_METRICS = ("context_recall", "layer_accuracy", "negative_pass")
REQUIRED_KEYS = (
    "schema_version",
    "metric_version",
    "dataset_hash",
    "overall",
    "by_content_type",
    "negatives",
    "cases",
)
REQUIRED_CASE_KEYS = ("case_id", "content_type", "negative", "rank", "metrics", "passed")


class ReportError(Exception):
    """A report file is missing, is not JSON, or does not follow docs/report-format.md."""


class IncomparableReports(Exception):
    """Two reports measure different things, so their numbers must not be diffed."""


@dataclass(frozen=True)
class Rule:
    """A metric regresses when it drops by more than `max_drop` (0 = any drop)."""

    metric: str
    max_drop: float

    def __str__(self) -> str:
        return f"{self.metric}:{self.max_drop:g}"


DEFAULT_RULES = tuple(
    Rule(metric, 0.0 if metric in STRICT_METRICS else TOLERANT_MAX_DROP) for metric in METRIC_ORDER
)


@dataclass(frozen=True)
class MetricChange:
    """One metric in one scope (overall or a content type), base against head."""

    scope: str
    metric: str
    base: float | None
    head: float | None
    pairs: int
    changed_cases: int
    p_value: float | None
    ci_low: float | None
    ci_high: float | None

    @property
    def delta(self) -> float | None:
        if self.base is None or self.head is None:
            return None
        return self.head - self.base

    @property
    def changed(self) -> bool:
        return self.changed_cases > 0 or self.base != self.head

    @property
    def significant(self) -> bool:
        return self.p_value is not None and self.p_value < ALPHA

    @property
    def subject(self) -> str:
        """The floor-style name: `mrr` overall, `json.mrr` for one content type."""
        return self.metric if self.scope == OVERALL else f"{self.scope}.{self.metric}"


@dataclass(frozen=True)
class CaseFlip:
    """A case whose pass/fail status changed; `failures` are the failed check types."""

    case_id: str
    failures: tuple[str, ...]


@dataclass(frozen=True)
class RankMove:
    """A positive case whose first relevant rank changed (None = nothing relevant returned)."""

    case_id: str
    base_rank: int | None
    head_rank: int | None

    @property
    def reciprocal_delta(self) -> float:
        return reciprocal_rank(self.head_rank) - reciprocal_rank(self.base_rank)


@dataclass(frozen=True)
class Regression:
    """One reason the head run is worse than the base run by the rules."""

    subject: str
    detail: str


@dataclass(frozen=True)
class SectionChange:
    """One number of an optional report section (rankers, token cost, start times)."""

    name: str
    base: float | None
    head: float | None

    @property
    def delta(self) -> float | None:
        return None if self.base is None or self.head is None else self.head - self.base


@dataclass(frozen=True)
class Comparison:
    """Everything qualstat knows about base against head, ready to render."""

    base_label: str
    head_label: str
    base_hash: str
    head_hash: str
    metric_version: int
    intersect: bool
    added_cases: tuple[str, ...]
    removed_cases: tuple[str, ...]
    shared_cases: int
    changes: tuple[MetricChange, ...]
    newly_failing: tuple[CaseFlip, ...]
    newly_passing: tuple[CaseFlip, ...]
    rank_moves: tuple[RankMove, ...]
    regressions: tuple[Regression, ...]
    rules: tuple[Rule, ...]
    seed: int
    sections: tuple[SectionChange, ...] = ()

    @property
    def exit_code(self) -> int:
        return 1 if self.regressions else 0


# ---------------------------------------------------------------- loading


def load_report(path: Path) -> dict[str, Any]:
    """Read and check one JSON report; every problem becomes a ReportError naming the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReportError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"{path}: cannot read: {exc}") from None
    try:
        report = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(f"{path}: not valid JSON: {exc}") from None
    problem = report_problem(report)
    if problem is not None:
        raise ReportError(f"{path}: {problem}")
    checked: dict[str, Any] = report
    return checked


def report_problem(report: Any) -> str | None:
    """The first way `report` departs from the parts of the format qualstat reads, if any."""
    if not isinstance(report, dict):
        return "not a qualbench report: the top level is not a JSON object"
    missing = [key for key in REQUIRED_KEYS if key not in report]
    if missing:
        return f"not a qualbench report: missing {', '.join(missing)}"
    if report["schema_version"] != SUPPORTED_SCHEMA_VERSION:
        return (
            f"schema_version {report['schema_version']!r} is not supported "
            f"(this qualstat reads {SUPPORTED_SCHEMA_VERSION})"
        )
    if not isinstance(report["cases"], list):
        return "cases: expected a list"
    for index, case in enumerate(report["cases"]):
        if not isinstance(case, dict):
            return f"cases[{index}]: expected an object"
        missing = [key for key in REQUIRED_CASE_KEYS if key not in case]
        if missing:
            return f"cases[{index}]: missing {', '.join(missing)}"
        if not isinstance(case["metrics"], dict):
            return f"cases[{index}].metrics: expected an object"
    return None


# ---------------------------------------------------------------- rules


def parse_fail_on(text: str) -> Rule:
    """Parse `METRIC:DELTA` (e.g. `mrr:0.01`) into a Rule; argparse `type=` compatible."""
    metric, separator, number = text.partition(":")
    if not separator:
        raise argparse.ArgumentTypeError(f"{text!r}: expected METRIC:DELTA, e.g. mrr:0.01")
    if metric not in METRIC_ORDER:
        close = difflib.get_close_matches(metric, METRIC_ORDER, n=1)
        hint = f" (did you mean {close[0]}?)" if close else f"; known: {', '.join(METRIC_ORDER)}"
        raise argparse.ArgumentTypeError(f"unknown metric {metric!r}{hint}")
    try:
        max_drop = float(number)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: DELTA must be a number") from None
    if not 0.0 <= max_drop <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r}: DELTA must be between 0 and 1")
    return Rule(metric, max_drop)


def with_overrides(rules: Iterable[Rule], overrides: Iterable[Rule]) -> tuple[Rule, ...]:
    """`rules` with each overridden metric's rule replaced; the last override of a metric wins."""
    by_metric = {rule.metric: rule for rule in rules}
    for rule in overrides:
        by_metric[rule.metric] = rule
    return tuple(sorted(by_metric.values(), key=lambda rule: metric_sort_key(rule.metric)))


def metric_regression(change: MetricChange, rule: Rule) -> Regression | None:
    """A Regression when the change drops further than the rule allows, else None."""
    delta = change.delta
    if delta is None or delta >= -rule.max_drop - FLOAT_SLACK:
        return None
    allowed = "any drop fails" if rule.max_drop == 0 else f"allowed {rule.max_drop:g}"
    detail = (
        f"{change.base:.4f} -> {change.head:.4f} ({delta:+.4f}; {allowed}; "
        f"p={format_p(change.p_value)})"
    )
    return Regression(change.subject, detail)


def metric_regressions(
    changes: Iterable[MetricChange], rules: Iterable[Rule]
) -> tuple[Regression, ...]:
    """Every change that breaks the rule of its metric; metrics without a rule never regress."""
    rule_by_metric = {rule.metric: rule for rule in rules}
    regressions = []
    for change in changes:
        rule = rule_by_metric.get(change.metric)
        regression = None if rule is None else metric_regression(change, rule)
        if regression is not None:
            regressions.append(regression)
    return tuple(regressions)


# ---------------------------------------------------------------- statistics


def reciprocal_rank(rank: int | None) -> float:
    """1/rank of the first relevant result, 0 when none was returned (Voorhees, TREC-8 QA)."""
    return 0.0 if rank is None else 1.0 / rank


def paired_randomization_p_value(
    differences: Sequence[float], rng: random.Random, *, rounds: int = ROUNDS
) -> float:
    """Two-sided p of the paired sign-flip randomization test (Fisher 1935; Smucker et al. 2007)."""
    nonzero = [d for d in differences if d != 0]
    if not nonzero:
        return 1.0
    observed = abs(math.fsum(nonzero))
    threshold = observed - observed * FLOAT_SLACK
    # Each random byte flips the signs of one block of eight differences; a table
    # per block holds the signed sum for all 256 patterns, so a round costs one
    # lookup per eight cases instead of one operation per case.
    blocks = [nonzero[start : start + 8] for start in range(0, len(nonzero), 8)]
    tables = [sign_pattern_sums(block) for block in blocks]
    extreme = 0
    for _ in range(rounds):
        pattern = rng.getrandbits(8 * len(blocks)).to_bytes(len(blocks), "little")
        if abs(math.fsum(map(operator.getitem, tables, pattern))) >= threshold:
            extreme += 1
    # Counting the observed labelling itself keeps p above zero (Phipson & Smyth 2010).
    return (extreme + 1) / (rounds + 1)


def sign_pattern_sums(block: Sequence[float]) -> list[float]:
    """Signed sum of `block` for each 8-bit pattern: bit i set keeps block[i], clear negates it."""
    return [
        math.fsum(value if pattern >> bit & 1 else -value for bit, value in enumerate(block))
        for pattern in range(256)
    ]


def bootstrap_interval(
    differences: Sequence[float],
    rng: random.Random,
    *,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean paired difference (Efron & Tibshirani 1993)."""
    size = len(differences)
    nonzero = sorted(d for d in differences if d != 0)
    if not nonzero:
        return (0.0, 0.0)
    # Between two runs most cases do not change. Drawing how many of the `size`
    # resampled cases are changed ones (binomial), then which, has the same
    # distribution as `size` uniform draws, at the cost of the changed cases only.
    changed_draws = binomial_cdf(size, len(nonzero) / size)
    means = sorted(
        math.fsum(rng.choices(nonzero, k=bisect.bisect_left(changed_draws, rng.random()))) / size
        for _ in range(resamples)
    )
    tail = (1.0 - confidence) / 2.0
    return (percentile(means, tail), percentile(means, 1.0 - tail))


def binomial_cdf(trials: int, probability: float) -> list[float]:
    """Cumulative Binomial(trials, probability) from k = 0 to trials, the last entry forced to 1."""
    if probability >= 1.0:
        return [0.0] * trials + [1.0]
    log_p, log_q = math.log(probability), math.log1p(-probability)
    log_n = math.lgamma(trials + 1)
    masses = (
        math.exp(
            log_n
            - math.lgamma(k + 1)
            - math.lgamma(trials - k + 1)
            + k * log_p
            + (trials - k) * log_q
        )
        for k in range(trials + 1)
    )
    cumulative = list(itertools.accumulate(masses))
    # Rounding can leave the total a hair under 1; a draw there must still land on k <= trials.
    cumulative[-1] = 1.0
    return cumulative


def percentile(sorted_values: Sequence[float], quantile: float) -> float:
    """The order statistic nearest `quantile` (Efron & Tibshirani 1993, percentile interval)."""
    index = min(len(sorted_values) - 1, max(0, round(quantile * (len(sorted_values) - 1))))
    return sorted_values[index]


# ---------------------------------------------------------------- comparison


def compare_reports(
    base: Mapping[str, Any],
    head: Mapping[str, Any],
    *,
    rules: Sequence[Rule] = DEFAULT_RULES,
    intersect: bool = False,
    seed: int = 0,
) -> Comparison:
    """Diff two loaded reports; raise IncomparableReports when they measure different things."""
    if base["metric_version"] != head["metric_version"]:
        raise IncomparableReports(
            f"metric_version differs (base {base['metric_version']}, head "
            f"{head['metric_version']}): the metrics are defined differently, so no "
            "delta between them means anything; rerun the base with this version"
        )
    base_cases = cases_by_id(base)
    head_cases = cases_by_id(head)
    removed = tuple(sorted(base_cases.keys() - head_cases.keys()))
    added = tuple(sorted(head_cases.keys() - base_cases.keys()))
    if not intersect:
        if base["dataset_hash"] != head["dataset_hash"]:
            raise IncomparableReports(
                f"dataset_hash differs (base {base['dataset_hash']}, head "
                f"{head['dataset_hash']}): the reports were made from different fixture "
                "sets; pass --intersect to compare only the cases both share"
            )
        if removed or added:
            raise IncomparableReports(
                f"the reports ran different cases ({len(removed)} only in base, {len(added)} "
                "only in head; a -k or partial run?); pass --intersect to compare only the "
                "cases both share"
            )
    shared = sorted(base_cases.keys() & head_cases.keys())
    pairs = [(base_cases[case_id], head_cases[case_id]) for case_id in shared]
    changes = tuple(
        metric_change(base, head, pairs, scope, metric, intersect=intersect, seed=seed)
        for scope in scopes(base, head)
        for metric in scope_metrics(base, head, scope)
    )
    newly_failing = tuple(
        CaseFlip(h["case_id"], failure_types(head, h["case_id"]))
        for b, h in pairs
        if b["passed"] and not h["passed"]
    )
    newly_passing = tuple(
        CaseFlip(b["case_id"], failure_types(base, b["case_id"]))
        for b, h in pairs
        if h["passed"] and not b["passed"]
    )
    regressions = metric_regressions(changes, rules) + tuple(
        Regression(flip.case_id, f"newly failing ({', '.join(flip.failures) or 'failed'})")
        for flip in newly_failing
    )
    return Comparison(
        base_label=report_label(base),
        head_label=report_label(head),
        base_hash=base["dataset_hash"],
        head_hash=head["dataset_hash"],
        metric_version=base["metric_version"],
        intersect=intersect,
        added_cases=added,
        removed_cases=removed,
        shared_cases=len(shared),
        changes=changes,
        newly_failing=newly_failing,
        newly_passing=newly_passing,
        rank_moves=largest_rank_moves(pairs),
        regressions=regressions,
        rules=tuple(rules),
        seed=seed,
        sections=section_changes(base, head),
    )


def section_numbers(report: Mapping[str, Any]) -> dict[str, float]:
    """The headline numbers of the optional sections, flattened to dotted names."""
    numbers: dict[str, float] = {}
    rankers = report.get("rankers") or {}
    for metric, by_ranker in sorted((rankers.get("metrics") or {}).items()):
        for ranker, value in sorted(by_ranker.items()):
            if value is not None:
                numbers[f"rankers.{ranker}.{metric}"] = float(value)
    token_overall = (report.get("token_cost") or {}).get("overall") or {}
    for key in ("retrieved_tokens_per_call", "corpus_tokens_per_call", "reduction_pct"):
        if token_overall.get(key) is not None:
            numbers[f"token_cost.{key}"] = float(token_overall[key])
    start_overall = (report.get("start_times") or {}).get("overall") or {}
    for key in ("cold_ms", "seeded_ms", "ratio"):
        if start_overall.get(key) is not None:
            numbers[f"start_times.{key}"] = float(start_overall[key])
    return numbers


def section_changes(base: Mapping[str, Any], head: Mapping[str, Any]) -> tuple[SectionChange, ...]:
    """Base against head for every section number either report has; informational only."""
    base_numbers, head_numbers = section_numbers(base), section_numbers(head)
    return tuple(
        SectionChange(name, base_numbers.get(name), head_numbers.get(name))
        for name in sorted(base_numbers.keys() | head_numbers.keys())
    )


def cases_by_id(report: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The report's case records keyed by case_id."""
    return {case["case_id"]: case for case in report["cases"]}


def scopes(base: Mapping[str, Any], head: Mapping[str, Any]) -> list[str]:
    """`overall`, then every content type either report has, in CONTENT_TYPES order."""
    types = set(base["by_content_type"]) | set(head["by_content_type"])
    types |= set(base["negatives"].get("by_content_type", {}))
    types |= set(head["negatives"].get("by_content_type", {}))
    return [OVERALL, *sorted(types, key=content_type_sort_key)]


def content_type_sort_key(content_type: str) -> tuple[int, str]:
    """Known content types in their documented order, unknown ones after, alphabetically."""
    if content_type in CONTENT_TYPES:
        return (CONTENT_TYPES.index(content_type), content_type)
    return (len(CONTENT_TYPES), content_type)


def metric_sort_key(metric: str) -> tuple[int, str]:
    """Documented metrics in their documented order, newer ones after, alphabetically."""
    if metric in METRIC_ORDER:
        return (METRIC_ORDER.index(metric), metric)
    return (len(METRIC_ORDER), metric)


def scope_table(report: Mapping[str, Any], scope: str) -> Mapping[str, Any]:
    """The aggregate table of one scope for positive metrics, empty when the report lacks it."""
    if scope == OVERALL:
        table: Mapping[str, Any] = report["overall"]
        return table
    by_type: Mapping[str, Any] = report["by_content_type"].get(scope, {})
    return by_type


def negatives_table(report: Mapping[str, Any], scope: str) -> Mapping[str, Any]:
    """The aggregate table of one scope for negative cases, empty when the report lacks it."""
    negatives: Mapping[str, Any] = report["negatives"]
    if scope == OVERALL:
        return negatives
    by_type: Mapping[str, Any] = negatives.get("by_content_type", {}).get(scope, {})
    return by_type


def aggregate_value(report: Mapping[str, Any], scope: str, metric: str) -> float | None:
    """The report's own aggregate for `metric` in `scope` (None when absent or null)."""
    if metric == "negative_pass":
        value = negatives_table(report, scope).get(metric)
    else:
        value = scope_table(report, scope).get(metric)
    return float(value) if isinstance(value, (int, float)) else None


def scope_metrics(base: Mapping[str, Any], head: Mapping[str, Any], scope: str) -> list[str]:
    """Metric names either report aggregates in `scope`, in display order."""
    names: set[str] = set()
    for report in (base, head):
        names |= metric_names(scope_table(report, scope))
        names |= metric_names(negatives_table(report, scope))
    return sorted(names, key=metric_sort_key)


def metric_names(aggregates: Mapping[str, Any]) -> set[str]:
    """The keys of an aggregate table that hold a metric value (a number or null)."""
    return {
        name
        for name, value in aggregates.items()
        if name != "cases" and (value is None or type(value) in (int, float))
    }


def metric_change(
    base: Mapping[str, Any],
    head: Mapping[str, Any],
    pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    scope: str,
    metric: str,
    *,
    intersect: bool,
    seed: int,
) -> MetricChange:
    """Base, head, delta, p and interval of one metric in one scope."""
    values = [
        (b["metrics"][metric], h["metrics"][metric])
        for b, h in pairs
        if scope in (OVERALL, b["content_type"])
        and isinstance(b["metrics"].get(metric), (int, float))
        and isinstance(h["metrics"].get(metric), (int, float))
    ]
    differences = [float(h) - float(b) for b, h in values]
    if intersect:
        # The reports' aggregates cover cases the other run lacks; only the shared
        # cases' values are comparable.
        base_value = math.fsum(b for b, _ in values) / len(values) if values else None
        head_value = math.fsum(h for _, h in values) / len(values) if values else None
    else:
        base_value = aggregate_value(base, scope, metric)
        head_value = aggregate_value(head, scope, metric)
    changed_cases = sum(1 for d in differences if d != 0)
    if not changed_cases:
        return MetricChange(scope, metric, base_value, head_value, len(values), 0, None, None, None)
    # One generator per scope and metric, so a p-value never depends on which
    # other scopes or metrics were compared before it.
    rng = random.Random(f"{seed}/{scope}/{metric}")
    p_value = paired_randomization_p_value(differences, rng)
    ci_low, ci_high = bootstrap_interval(differences, rng)
    return MetricChange(
        scope, metric, base_value, head_value, len(values), changed_cases, p_value, ci_low, ci_high
    )


def failure_types(report: Mapping[str, Any], case_id: str) -> tuple[str, ...]:
    """The distinct failed check types of one case, in the report's order."""
    types = [f["type"] for f in report.get("failures", []) if f.get("case_id") == case_id]
    return tuple(dict.fromkeys(types))


def largest_rank_moves(
    pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]], *, limit: int = RANK_MOVES_SHOWN
) -> tuple[RankMove, ...]:
    """The positive cases whose first relevant rank moved most, by reciprocal rank."""
    moves = [
        RankMove(b["case_id"], b["rank"], h["rank"])
        for b, h in pairs
        if not b["negative"] and not h["negative"] and b["rank"] != h["rank"]
    ]
    # Reciprocal rank weighs 1 -> 3 above 8 -> 10, as a reader of search results does.
    moves.sort(key=lambda move: (-abs(move.reciprocal_delta), move.case_id))
    return tuple(moves[:limit])


def report_label(report: Mapping[str, Any]) -> str:
    """`branch@sha` of the run when known, else its timestamp, else its dataset hash prefix."""
    metadata = report.get("metadata") or {}
    git = metadata.get("git")
    if isinstance(git, dict) and git.get("sha"):
        return f"{git.get('branch') or 'detached'}@{str(git['sha'])[:10]}"
    if metadata.get("timestamp"):
        return str(metadata["timestamp"])
    return str(report["dataset_hash"])[:19]


# ---------------------------------------------------------------- rendering


def format_p(p_value: float | None) -> str:
    """A p-value with four decimals, `-` when no case changed."""
    return "-" if p_value is None else f"{p_value:.4f}"


def format_value(value: Any) -> str:
    """A metric or cell value for a table: floats with four decimals, null as n/a."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def format_rank(rank: int | None) -> str:
    """A first relevant rank, `none` when nothing relevant came back."""
    return "none" if rank is None else str(rank)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], fmt: str) -> str:
    """A table as aligned text columns or as a GitHub markdown pipe table."""
    if fmt == "markdown":
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        # A literal pipe inside a cell would end it; layer names never hold one, JSON might.
        lines += [
            "| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows
        ]
        return "\n".join(lines)
    widths = [max(len(cell) for cell in column) for column in zip(headers, *rows, strict=True)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in [headers, *rows]
    )


def heading(title: str, fmt: str, level: int = 3) -> str:
    """A section title: a markdown heading, or the bare title followed by a rule."""
    if fmt == "markdown":
        return "#" * level + " " + title
    return f"{title}\n{'-' * len(title)}"


def change_row(change: MetricChange, regressed: set[str]) -> list[str]:
    """One table row of a metric change; `~` where no case changed."""
    if not change.changed:
        return [
            change.metric,
            format_value(change.base),
            format_value(change.head),
            "~",
            "",
            "",
            "",
        ]
    delta = "n/a" if change.delta is None else f"{change.delta:+.4f}"
    interval = (
        ""
        if change.ci_low is None or change.ci_high is None
        else f"[{change.ci_low:+.4f}, {change.ci_high:+.4f}]"
    )
    p_text = format_p(change.p_value) + (" *" if change.significant else "")
    verdict = "REGRESSION" if change.subject in regressed else ""
    return [
        change.metric,
        format_value(change.base),
        format_value(change.head),
        delta,
        interval,
        p_text,
        verdict,
    ]


def render_comparison(comparison: Comparison, fmt: str) -> str:
    """The comparison as `text`, `markdown` (for a pull request comment) or `json`."""
    if fmt == "json":
        return json.dumps(comparison_to_json(comparison), sort_keys=True, indent=2)
    check_format(fmt)
    verdict = (
        f"{len(comparison.regressions)} regression(s)"
        if comparison.regressions
        else "no regression"
    )
    title = f"qualstat: {comparison.base_label} -> {comparison.head_label}: {verdict}"
    hashes = (
        comparison.base_hash
        if comparison.base_hash == comparison.head_hash
        else f"{comparison.base_hash} -> {comparison.head_hash}"
    )
    parts = [
        heading(title, fmt, level=2),
        f"dataset {hashes}, metric_version {comparison.metric_version}, "
        f"{comparison.shared_cases} cases compared"
        + (" (--intersect: shared cases only)" if comparison.intersect else ""),
    ]
    if comparison.intersect:
        parts.append(case_list("Removed cases, only in base", comparison.removed_cases, fmt))
        parts.append(case_list("Added cases, only in head", comparison.added_cases, fmt))
    # The verdict and its reasons come first: a reviewer reads them, the tables back them up.
    parts.append(regressions_section(comparison, fmt))
    parts.append(flip_list("Newly failing", comparison.newly_failing, fmt))
    parts.append(flip_list("Newly passing", comparison.newly_passing, fmt))
    regressed = {regression.subject for regression in comparison.regressions}
    for scope in dict.fromkeys(change.scope for change in comparison.changes):
        parts.append(scope_section(comparison, scope, regressed, fmt))
    tilde = "`~`" if fmt == "markdown" else "~"
    parts.append(
        f"delta {tilde}: no case changed. p: paired randomization test over per-case values "
        f"({ROUNDS:,} rounds, two-sided, seed {comparison.seed}); * p < {ALPHA}.\n"
        f"95% CI: percentile bootstrap of the delta ({RESAMPLES:,} resamples)."
    )
    parts.append(rank_moves_section(comparison.rank_moves, fmt))
    if comparison.sections:
        parts.append(sections_section(comparison.sections, fmt))
    return "\n\n".join(parts) + "\n"


def sections_section(changes: Sequence[SectionChange], fmt: str) -> str:
    """Rankers, token cost and start times side by side; no rule applies to them."""
    rows = [
        [change.name, format_value(change.base), format_value(change.head), _signed(change.delta)]
        for change in changes
    ]
    title = heading("Other sections (informational, no regression rules)", fmt)
    return title + "\n" + table(["number", "base", "head", "delta"], rows, fmt)


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}"


def scope_section(comparison: Comparison, scope: str, regressed: set[str], fmt: str) -> str:
    """The metric table of one scope; in markdown a content type folds away unless it regressed."""
    changes = [change for change in comparison.changes if change.scope == scope]
    rows = [change_row(change, regressed) for change in changes]
    body = table(["metric", "base", "head", "delta", "95% CI", "p", "verdict"], rows, fmt)
    if scope == OVERALL:
        return f"{heading(OVERALL, fmt)}\n\n{body}"
    changed = sum(1 for change in changes if change.changed)
    failed = sum(1 for change in changes if change.subject in regressed)
    summary = f"content type: {scope} ({changed} changed, {failed} regressed)"
    if fmt != "markdown":
        return f"{heading(summary, fmt)}\n\n{body}"
    # Blank lines around the table let GitHub render markdown inside <details>.
    opened = " open" if failed else ""
    return f"<details{opened}><summary>{summary}</summary>\n\n{body}\n\n</details>"


def case_list(title: str, case_ids: Sequence[str], fmt: str) -> str:
    """A titled, comma-separated list of case ids, `none` when empty."""
    shown = ", ".join(f"`{c}`" if fmt == "markdown" else c for c in case_ids) or "none"
    return f"{heading(f'{title} ({len(case_ids)})', fmt)}\n\n{shown}"


def flip_list(title: str, flips: Sequence[CaseFlip], fmt: str) -> str:
    """Cases whose status flipped, each with the checks it fails (or failed)."""
    if not flips:
        return f"{heading(f'{title} (0)', fmt)}\n\nnone"
    rows = [[flip.case_id, ", ".join(flip.failures) or "-"] for flip in flips]
    return f"{heading(f'{title} ({len(flips)})', fmt)}\n\n" + table(["case", "checks"], rows, fmt)


def rank_moves_section(moves: Sequence[RankMove], fmt: str) -> str:
    """The largest rank moves as a table, `none` when no rank moved."""
    title = heading("Largest rank moves", fmt)
    if not moves:
        return f"{title}\n\nnone"
    rows = [
        [
            move.case_id,
            format_rank(move.base_rank),
            format_rank(move.head_rank),
            f"{move.reciprocal_delta:+.4f}",
        ]
        for move in moves
    ]
    return f"{title}\n\n" + table(["case", "base rank", "head rank", "delta 1/rank"], rows, fmt)


def regressions_section(comparison: Comparison, fmt: str) -> str:
    """The rule violations, or a line saying there are none."""
    title = heading(f"Regressions ({len(comparison.regressions)})", fmt)
    rules = "rules: " + ", ".join(str(rule) for rule in comparison.rules)
    if not comparison.regressions:
        return f"{title}\n\nnone ({rules})"
    bullet = "- " if fmt == "markdown" else "  "
    lines = [f"{bullet}{r.subject}: {r.detail}" for r in comparison.regressions]
    return f"{title}\n\n" + "\n".join(lines) + f"\n\n{rules}"


def comparison_to_json(comparison: Comparison) -> dict[str, Any]:
    """The comparison as plain JSON data, for machines."""
    return {
        "base": {"label": comparison.base_label, "dataset_hash": comparison.base_hash},
        "head": {"label": comparison.head_label, "dataset_hash": comparison.head_hash},
        "metric_version": comparison.metric_version,
        "intersect": comparison.intersect,
        "added_cases": list(comparison.added_cases),
        "removed_cases": list(comparison.removed_cases),
        "shared_cases": comparison.shared_cases,
        "metrics": [
            {
                "scope": c.scope,
                "metric": c.metric,
                "base": c.base,
                "head": c.head,
                "delta": c.delta,
                "changed": c.changed,
                "pairs": c.pairs,
                "changed_cases": c.changed_cases,
                "p_value": c.p_value,
                "significant": c.significant,
                "ci95": None if c.ci_low is None else [c.ci_low, c.ci_high],
            }
            for c in comparison.changes
        ],
        "newly_failing": [
            {"case_id": f.case_id, "failures": list(f.failures)} for f in comparison.newly_failing
        ],
        "newly_passing": [
            {"case_id": f.case_id, "failures": list(f.failures)} for f in comparison.newly_passing
        ],
        "rank_moves": [
            {"case_id": m.case_id, "base_rank": m.base_rank, "head_rank": m.head_rank}
            for m in comparison.rank_moves
        ],
        "regressions": [{"subject": r.subject, "detail": r.detail} for r in comparison.regressions],
        "sections": [
            {"name": c.name, "base": c.base, "head": c.head, "delta": c.delta}
            for c in comparison.sections
        ],
        "rules": [{"metric": r.metric, "max_drop": r.max_drop} for r in comparison.rules],
        "significance": {
            "test": "paired randomization",
            "rounds": ROUNDS,
            "alpha": ALPHA,
            "seed": comparison.seed,
            "interval": "percentile bootstrap",
            "resamples": RESAMPLES,
            "confidence": CONFIDENCE,
        },
        "exit_code": comparison.exit_code,
    }


def check_format(fmt: str) -> None:
    """Reject an output format qualstat does not know."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


# ---------------------------------------------------------------- one report

# Sections render_report lays out by name; anything else a report carries
# (sections added after schema_version 1's first draft) is rendered generically.
KNOWN_SECTIONS = (
    "schema_version",
    "metric_version",
    "dataset_hash",
    "metadata",
    "overall",
    "by_content_type",
    "by_layer",
    "negatives",
    "latency",
    "cases",
    "failures",
    "floors",
)


def render_report(report: Mapping[str, Any], fmt: str) -> str:
    """One report as tables (`text`, `markdown`) or as normalized JSON (`json`)."""
    if fmt == "json":
        return json.dumps(report, sort_keys=True, indent=2)
    check_format(fmt)
    metadata = report.get("metadata") or {}
    engine = metadata.get("engine") or {}
    parts = [
        heading(f"qualbench report: {report_label(report)}", fmt, level=2),
        f"dataset {report['dataset_hash']}, metric_version {report['metric_version']}, "
        f"engine {engine.get('name', 'unknown')}, {len(report['cases'])} cases",
    ]
    types = sorted(report["by_content_type"], key=content_type_sort_key)
    parts.append(
        metric_matrix(
            "Positive cases",
            [OVERALL, *types],
            [report["overall"], *(report["by_content_type"][t] for t in types)],
            fmt,
        )
    )
    negatives = report["negatives"]
    negative_types = sorted(negatives.get("by_content_type", {}), key=content_type_sort_key)
    parts.append(
        metric_matrix(
            "Negative cases",
            [OVERALL, *negative_types],
            [negatives, *(negatives["by_content_type"][t] for t in negative_types)],
            fmt,
        )
    )
    by_layer = report.get("by_layer") or {}
    if by_layer:
        layers = sorted(by_layer)
        parts.append(
            metric_matrix("By expected layer", layers, [by_layer[layer] for layer in layers], fmt)
        )
    if report.get("latency"):
        parts.append(
            generic_section(
                "latency", report["latency"], fmt, first_columns=("p50_ms", "p95_ms", "index_ms")
            )
        )
    parts.append(
        generic_section(
            "failures",
            report.get("failures") or [],
            fmt,
            first_columns=("case_id", "type", "expected", "actual"),
        )
    )
    if report.get("floors"):
        parts.append(
            generic_section(
                "floors", report["floors"], fmt, first_columns=("metric", "floor", "value", "ok")
            )
        )
    for name in sorted(set(report) - set(KNOWN_SECTIONS)):
        parts.append(generic_section(name, report[name], fmt))
    return "\n\n".join(parts) + "\n"


def metric_matrix(
    title: str, columns: Sequence[str], tables: Sequence[Mapping[str, Any]], fmt: str
) -> str:
    """Metrics down, scopes across: `cases` first, then metrics in display order."""
    names: set[str] = set()
    for aggregates in tables:
        names |= metric_names(aggregates)
    rows = [
        [name, *(format_value(t.get(name)) for t in tables)]
        for name in ["cases", *sorted(names, key=metric_sort_key)]
    ]
    return f"{heading(title, fmt)}\n\n" + table(["metric", *columns], rows, fmt)


def generic_section(name: str, value: Any, fmt: str, first_columns: Sequence[str] = ()) -> str:
    """Any JSON section as the most readable table its shape allows; `first_columns` lead."""
    title = heading(name, fmt)
    if isinstance(value, list) and not value:
        return f"{title}\n\nnone"
    if isinstance(value, list) and all(isinstance(item, dict) for item in value):
        columns = ordered_columns({key for item in value for key in item}, first_columns)
        rows = [[format_value(item.get(key)) for key in columns] for item in value]
        return f"{title}\n\n" + table(columns, rows, fmt)
    if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
        columns = ordered_columns({key for inner in value.values() for key in inner}, first_columns)
        # Sections keyed by content type (latency, most likely any newer one) read
        # best in the documented order; other keys fall back to alphabetical.
        rows = [
            [key, *(format_value(value[key].get(column)) for column in columns)]
            for key in sorted(value, key=content_type_sort_key)
        ]
        return f"{title}\n\n" + table(["", *columns], rows, fmt)
    if isinstance(value, dict):
        rows = [[key, format_value(value[key])] for key in sorted(value)]
        return f"{title}\n\n" + table(["key", "value"], rows, fmt)
    return f"{title}\n\n{format_value(value)}"


def ordered_columns(keys: set[str], first_columns: Sequence[str]) -> list[str]:
    """`first_columns` that are present, in their order, then the other keys alphabetically."""
    leading = [column for column in first_columns if column in keys]
    return leading + sorted(keys - set(leading))
