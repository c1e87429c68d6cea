"""Regression rules: how far each metric may drop before the head run regresses."""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Iterable

from pytest_qualbench.compare.formatting import format_p
from pytest_qualbench.compare.records import (
    METRIC_ORDER,
    MetricChange,
    Regression,
    Rule,
)
from pytest_qualbench.compare.statistics import FLOAT_SLACK
from pytest_qualbench.evaluation.metrics import metric_sort_key
from pytest_qualbench.report.floors import metric_fraction

TOLERANT_MAX_DROP = 0.02


# A case either gets every needle / the right layer / an empty negative result or
# not, so these metrics have no noise to tolerate: any drop is a lost case.
STRICT_METRICS = ("context_recall", "layer_accuracy", "negative_pass")


DEFAULT_RULES = tuple(
    Rule(metric, 0.0 if metric in STRICT_METRICS else TOLERANT_MAX_DROP) for metric in METRIC_ORDER
)


def parse_fail_on(text: str) -> Rule:
    """Parse `METRIC:DELTA` (e.g. `mrr:0.01`) into a Rule; argparse `type=` compatible."""
    metric, max_drop = metric_fraction(text, what="", number="DELTA", example="mrr:0.01")
    if metric not in METRIC_ORDER:
        close = difflib.get_close_matches(metric, METRIC_ORDER, n=1)
        hint = f" (did you mean {close[0]}?)" if close else f"; known: {', '.join(METRIC_ORDER)}"
        raise argparse.ArgumentTypeError(f"unknown metric {metric!r}{hint}")
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
