"""Report comparison: loading, refusal, significance, regression rules and rendering."""

from __future__ import annotations

import argparse
import copy
import functools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_qualbench.compare.diff import compare_reports
from pytest_qualbench.compare.loading import ReportError, load_report
from pytest_qualbench.compare.records import Comparison, IncomparableReports, MetricChange, Rule
from pytest_qualbench.compare.render import render_comparison
from pytest_qualbench.compare.rules import (
    DEFAULT_RULES,
    metric_regression,
    parse_fail_on,
    with_overrides,
)
from pytest_qualbench.compare.show import render_report
from pytest_qualbench.compare.statistics import (
    bootstrap_interval,
    generator,
    paired_randomization_p_value,
)
from pytest_qualbench.report.model import Report

REPORTS = Path(__file__).parent / "data" / "reports"
POSITIVE_METRICS = 12
ALL_METRICS = POSITIVE_METRICS + 1  # negative_pass
SCOPES = 4  # overall, markdown, json, plaintext


def report(name: str) -> Report:
    return load_report(REPORTS / f"{name}.json")


@functools.cache
def compared(head: str) -> Comparison:
    """base.json against a golden head with default settings; cached, as a Comparison is frozen."""
    return compare_reports(report("base"), report(head))


def change(metric: str, base: float, head: float) -> MetricChange:
    return MetricChange(
        "overall",
        metric,
        base,
        head,
        pairs=10,
        changed_cases=1,
        p_value=0.5,
        ci_low=None,
        ci_high=None,
    )


# ---------------------------------------------------------------- loading


def test_load_report_reads_a_golden_report() -> None:
    loaded = report("base")
    assert loaded["dataset_hash"] == "sha256:" + "5a" * 32
    assert len(loaded["cases"]) == 21


def test_missing_report_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match=r"nope\.json: no such file"):
        load_report(tmp_path / "nope.json")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "top level is not a JSON object"),
        ('{"schema_version": 3}', "missing metric_version, dataset_hash"),
    ],
)
def test_invalid_report_says_why(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "report.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ReportError, match=message):
        load_report(path)


def test_a_report_of_the_schema_before_graded_relevance_is_refused_with_the_rerun_hint(
    tmp_path: Path,
) -> None:
    # schema_version 2: case records without relevant / relevant_found / min_grade.
    old = report("base") | {"schema_version": 2}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    with pytest.raises(ReportError) as refused:
        load_report(path)
    assert "schema_version 2 is older than this qualstat reads (3)" in str(refused.value)
    assert "re-run the base with this version of pytest-qualbench" in str(refused.value)


def test_unsupported_schema_version_is_refused(tmp_path: Path) -> None:
    future = report("base") | {"schema_version": 4}
    path = tmp_path / "future.json"
    path.write_text(json.dumps(future), encoding="utf-8")
    with pytest.raises(ReportError, match="schema_version 4 is not supported"):
        load_report(path)


def test_case_without_metrics_is_named_by_index(tmp_path: Path) -> None:
    # Decoded JSON, as a file holds it: a report's shape is what is being broken.
    broken: Any = report("base")
    del broken["cases"][3]["metrics"]
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(ReportError, match=r"cases\[3\]: missing metrics"):
        load_report(path)


# ---------------------------------------------------------------- refusal


def test_different_dataset_hash_is_refused() -> None:
    with pytest.raises(IncomparableReports, match=r"dataset_hash differs.*--intersect"):
        compare_reports(report("base"), report("other_dataset"))


def test_different_metric_version_is_refused_even_when_intersecting() -> None:
    head = report("head_same") | {"metric_version": 2}
    with pytest.raises(IncomparableReports, match=r"metric_version differs \(base 1, head 2\)"):
        compare_reports(report("base"), head, intersect=True)


def test_different_case_selection_is_refused_without_intersect() -> None:
    head = report("head_same")
    head["cases"] = head["cases"][1:]
    with pytest.raises(IncomparableReports, match="1 only in base, 0 only in head"):
        compare_reports(report("base"), head)


# ---------------------------------------------------------------- golden comparisons


def test_identical_runs_change_nothing_and_nothing_is_significant() -> None:
    comparison = compared("head_same")
    assert len(comparison.changes) == ALL_METRICS * SCOPES
    assert not any(c.changed or c.significant for c in comparison.changes)
    assert all(c.p_value is None and c.delta == 0 for c in comparison.changes)
    assert comparison.regressions == ()
    assert comparison.exit_code == 0


def test_every_case_improved_is_significant() -> None:
    comparison = compared("head_improved")
    mrr = next(c for c in comparison.changes if c.subject == "mrr")
    assert mrr.changed_cases == mrr.pairs == 18
    # Exact p is 2 / 2**18 (only all-plus and all-minus are as extreme): 10,000 rounds
    # see one of them at most once (twice or more: P < 0.003), so p is the floor
    # 1 / 10,001 or the next step up.
    assert mrr.p_value in (1 / 10_001, 2 / 10_001)
    assert mrr.significant
    assert mrr.ci_low is not None and mrr.ci_low > 0
    assert comparison.exit_code == 0


def test_regression_head_lists_rule_breaks_and_newly_failing_cases() -> None:
    comparison = compared("head_regression")
    subjects = [r.subject for r in comparison.regressions]
    for expected in (
        "context_recall",
        "layer_accuracy",
        "negative_pass",
        "markdown.mrr",
        "json.negative_pass",
        "md_001_q1",
        "md_002_q1",
        "js_001_q1",
        "js_002_q_neg",
    ):
        assert expected in subjects
    # Overall mrr rose (pt_002_q2 went 6 -> 2), so only markdown's drop breaks the rule.
    assert "mrr" not in subjects
    assert [f.case_id for f in comparison.newly_failing] == [
        "js_001_q1",
        "js_002_q_neg",
        "md_001_q1",
        "md_002_q1",
    ]
    assert [f.failures for f in comparison.newly_failing] == [
        ("layer",),
        ("negative",),
        ("rank",),
        ("needles",),
    ]
    assert [f.case_id for f in comparison.newly_passing] == ["pt_002_q2"]
    assert comparison.exit_code == 1


def test_markdown_mrr_delta_is_the_one_case_that_moved() -> None:
    comparison = compared("head_regression")
    markdown_mrr = next(c for c in comparison.changes if c.subject == "markdown.mrr")
    assert markdown_mrr.delta == pytest.approx((1 / 5 - 1 / 2) / 6)
    assert markdown_mrr.changed_cases == 1
    # One changed case: every sign flip is as extreme as the observed one.
    assert markdown_mrr.p_value == 1.0


def test_rank_moves_are_ordered_by_reciprocal_rank_change() -> None:
    comparison = compared("head_regression")
    moves = [(m.case_id, m.base_rank, m.head_rank) for m in comparison.rank_moves]
    # 6 -> 2 moves 1/2 - 1/6 = 0.333; 2 -> 5 moves 1/5 - 1/2 = -0.3.
    assert moves == [("pt_002_q2", 6, 2), ("md_001_q1", 2, 5)]


def test_intersect_compares_shared_cases_and_lists_the_others() -> None:
    comparison = compare_reports(report("base"), report("other_dataset"), intersect=True)
    assert comparison.removed_cases == ("pt_003_q2",)
    assert comparison.added_cases == ("pt_004_q1",)
    assert comparison.shared_cases == 20
    plaintext_mrr = next(c for c in comparison.changes if c.subject == "plaintext.mrr")
    # Recomputed over the five shared positive plaintext cases (ranks 2, 3, 2, 6, 2).
    assert plaintext_mrr.base == pytest.approx((1 / 2 + 1 / 3 + 1 / 2 + 1 / 6 + 1 / 2) / 5)
    assert plaintext_mrr.head == plaintext_mrr.base
    assert comparison.exit_code == 0


def test_comparison_is_deterministic() -> None:
    again = compare_reports(report("base"), report("head_regression"))
    assert again == compared("head_regression")


# ---------------------------------------------------------------- rules


def test_tolerant_metric_may_drop_exactly_its_threshold() -> None:
    assert metric_regression(change("mrr", 0.90, 0.88), Rule("mrr", 0.02)) is None
    regression = metric_regression(change("mrr", 0.90, 0.879), Rule("mrr", 0.02))
    assert regression is not None
    assert regression.subject == "mrr"
    assert "allowed 0.02" in regression.detail


def test_strict_metric_regresses_on_any_drop() -> None:
    rule = next(r for r in DEFAULT_RULES if r.metric == "context_recall")
    assert rule.max_drop == 0
    assert metric_regression(change("context_recall", 1.0, 0.999), rule) is not None
    assert metric_regression(change("context_recall", 0.9, 0.9), rule) is None


def test_default_rules_cover_every_metric_once() -> None:
    strict = {r.metric for r in DEFAULT_RULES if r.max_drop == 0}
    assert strict == {"context_recall", "layer_accuracy", "negative_pass"}
    assert len({r.metric for r in DEFAULT_RULES}) == len(DEFAULT_RULES) == ALL_METRICS


def test_fail_on_override_replaces_the_default_rule() -> None:
    rules = with_overrides(DEFAULT_RULES, [parse_fail_on("context_recall:0.5")])
    assert Rule("context_recall", 0.5) in rules
    assert len(rules) == len(DEFAULT_RULES)
    comparison = compare_reports(report("base"), report("head_regression"), rules=rules)
    assert not any(r.subject.endswith("context_recall") for r in comparison.regressions)


def test_parse_fail_on_reads_metric_and_delta() -> None:
    assert parse_fail_on("ndcg@10:0.01") == Rule("ndcg@10", 0.01)
    assert parse_fail_on("mrr:0") == Rule("mrr", 0.0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("mrr", "expected METRIC:DELTA"),
        ("mmr:0.1", "did you mean mrr"),
        ("mrr:x", "DELTA 'x' is not a number"),
        ("mrr:-0.1", "between 0 and 1"),
    ],
)
def test_parse_fail_on_rejects_bad_rules(text: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        parse_fail_on(text)


# ---------------------------------------------------------------- statistics


def test_no_change_gives_p_one_and_a_zero_interval() -> None:
    assert paired_randomization_p_value([0.0] * 5, np.random.default_rng(0)) == 1.0
    assert bootstrap_interval([0.0] * 5, np.random.default_rng(0)) == (0.0, 0.0)


def test_ten_equal_improvements_match_the_exact_p() -> None:
    p_value = paired_randomization_p_value([0.5] * 10, np.random.default_rng(0))
    # Exact: only all-plus and all-minus reach |sum| = 5, so p = 2 / 2**10.
    assert abs(p_value - 2 / 2**10) < 0.002


def test_mixed_differences_match_the_exact_p() -> None:
    p_value = paired_randomization_p_value([0.1, 0.2, -0.05, 0.3], np.random.default_rng(0))
    # |sum| >= 0.55 needs the negated magnitudes to sum to 0 or 0.05, or their
    # mirror: 4 of the 2**4 sign patterns.
    assert abs(p_value - 4 / 2**4) < 0.015


def test_one_changed_case_is_never_significant() -> None:
    assert paired_randomization_p_value([0.0, 0.0, 1.0], np.random.default_rng(0)) == 1.0


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.25, 1.0]), min_size=1, max_size=40))
def test_p_value_is_a_probability_blind_to_the_direction(differences: list[float]) -> None:
    p_value = paired_randomization_p_value(differences, np.random.default_rng(3), rounds=200)
    assert 0 < p_value <= 1
    # |sum| is the statistic, so negating every difference cannot change p.
    negated = [-d for d in differences]
    assert paired_randomization_p_value(negated, np.random.default_rng(3), rounds=200) == p_value


def test_constant_differences_have_a_point_interval() -> None:
    assert bootstrap_interval([0.5] * 6, np.random.default_rng(0)) == (0.5, 0.5)


def test_bootstrap_interval_brackets_the_mean() -> None:
    differences = [0.0] * 20 + [1.0] * 5 + [-0.5] * 5
    low, high = bootstrap_interval(differences, np.random.default_rng(0))
    assert low < (5 * 1.0 - 5 * 0.5) / 30 < high


def test_bootstrap_interval_matches_the_exact_resampling_distribution() -> None:
    # One changed case in four: a resample's mean is k/4 with k ~ Binomial(4, 1/4),
    # P(k = 0) = 0.316 and P(k <= 2) = 0.949 < 0.975 < P(k <= 3) = 0.996.
    assert bootstrap_interval([1.0, 0.0, 0.0, 0.0], np.random.default_rng(0)) == (0.0, 0.75)


def test_the_same_label_gives_the_same_numbers() -> None:
    differences = [0.1, -0.2, 0.3, 0.0, 0.5]
    first = paired_randomization_p_value(differences, generator("0/overall/mrr"))
    assert paired_randomization_p_value(differences, generator("0/overall/mrr")) == first
    assert bootstrap_interval(differences, generator("0/json/mrr")) == bootstrap_interval(
        differences, generator("0/json/mrr")
    )


# ---------------------------------------------------------------- rendering


def test_text_marks_unchanged_metrics_with_a_tilde() -> None:
    text = render_comparison(compared("head_same"), "text")
    mrr_line = next(line for line in text.splitlines() if line.startswith("mrr "))
    assert mrr_line.split() == ["mrr", "0.4074", "0.4074", "~"]
    assert "Regressions (0)" in text


def test_markdown_is_a_pull_request_comment() -> None:
    comparison = compared("head_regression")
    markdown = render_comparison(comparison, "markdown")
    lines = markdown.splitlines()
    assert lines[0] == (
        "## qualstat: main@a1a1a1a1a1 -> feature@b2b2b2b2b2: 9 metrics beyond their rule, "
        "4 cases newly failing"
    )
    assert "| metric | base | head | delta | 95% CI | p | verdict |" in lines
    assert "|---|---|---|---|---|---|---|" in lines
    assert "- mrr (allowed 0.02): markdown 0.4167 -> 0.3667 (-0.0500, p=1.0000)" in lines
    # A summary of a few lines, then every regression folded away: one line per metric
    # (its scopes beside it) and one per case (every metric it moved).
    fold = lines.index("<details><summary>Every regression: 9 by metric, 4 by case</summary>")
    summary = lines[
        lines.index("### Regressions: 9 metrics beyond their rule, 4 cases newly failing") : fold
    ]
    assert len([line for line in summary if line]) <= 4
    assert (
        summary[-2]
        == "- **newly failing**: js\\_001\\_q1, js\\_002\\_q\\_neg, md\\_001\\_q1, md\\_002\\_q1"
    )
    folded = lines[fold + 2 : lines.index("</details>", fold) - 3]
    assert len(folded) == 9 + 4
    assert folded[-2] == (
        "- md\\_001\\_q1 [markdown] newly failing (rank): rank 2 -> 5; hit@3 1 -> 0, mrr 0.500 -> "
        "0.200, ndcg@10 0.631 -> 0.387, rank\\_ceiling\\_pass 1 -> 0"
    )
    # Content types fold away; the ones that regressed start open.
    assert "<details><summary>content type: plaintext (6 changed, 0 regressed)</summary>" in lines
    assert "<details open><summary>content type: json (2 changed, 2 regressed)</summary>" in lines


def test_json_output_carries_every_metric_and_the_exit_code() -> None:
    comparison = compared("head_improved")
    data = json.loads(render_comparison(comparison, "json"))
    assert data["exit_code"] == 0
    assert len(data["metrics"]) == ALL_METRICS * SCOPES
    mrr = next(m for m in data["metrics"] if m["scope"] == "overall" and m["metric"] == "mrr")
    assert mrr["significant"] is True
    assert mrr["head"] == 1.0


def test_unknown_format_is_rejected() -> None:
    comparison = compared("head_same")
    with pytest.raises(ValueError, match="unknown format 'html'"):
        render_comparison(comparison, "html")


def test_render_report_shows_metrics_by_scope() -> None:
    text = render_report(report("base"), "text")
    header = next(line for line in text.splitlines() if line.startswith("metric "))
    assert header.split() == ["metric", "overall", "markdown", "json", "plaintext"]
    mrr_line = next(line for line in text.splitlines() if line.startswith("mrr "))
    # Three types of three rank-2 and three rank-3 cases, but pt_002_q2 sits at rank 6.
    assert mrr_line.split()[1] == f"{(3 * (3 / 2 + 3 / 3) - 1 / 3 + 1 / 6) / 18:.4f}"
    failures = text.splitlines()[text.splitlines().index("failures") + 3 :][:2]
    assert failures[0].split() == ["case_id", "type", "expected", "actual"]
    assert failures[1].split() == ["pt_002_q2", "rank", "5", "6"]


def test_render_report_renders_sections_it_does_not_know() -> None:
    extended = copy.deepcopy(report("base"))
    extended["rankers"] = {"bm25": {"mrr": 0.5, "cases": 18}, "rrf": {"mrr": 0.6, "cases": 18}}
    markdown = render_report(extended, "markdown")
    assert "### rankers" in markdown
    assert "|  | cases | mrr |" in markdown
    assert "| rrf | 18 | 0.6000 |" in markdown


def test_render_report_json_is_the_report() -> None:
    base = report("base")
    assert json.loads(render_report(base, "json")) == base


def test_optional_sections_are_compared_for_information() -> None:
    base = load_report(REPORTS / "base.json")
    head = copy.deepcopy(base)
    base["rankers"] = {
        "rankers": ["bm25", "engine"],
        "metrics": {"mrr": {"bm25": 0.5, "engine": 0.75}},
    }
    head["rankers"] = {
        "rankers": ["bm25", "engine"],
        "metrics": {"mrr": {"bm25": 0.5, "engine": 0.875}},
    }
    head["token_cost"] = {"overall": {"retrieved_tokens_per_call": 250.0, "reduction_pct": 95.5}}
    comparison = compare_reports(base, head)
    assert [(c.name, c.base, c.head, c.delta) for c in comparison.sections] == [
        ("rankers.bm25.mrr", 0.5, 0.5, 0.0),
        ("rankers.engine.mrr", 0.75, 0.875, 0.875 - 0.75),
        ("token_cost.reduction_pct", None, 95.5, None),
        ("token_cost.retrieved_tokens_per_call", None, 250.0, None),
    ]
    assert comparison.exit_code == 0
    text = render_comparison(comparison, "text")
    assert "Other sections (informational, no regression rules)" in text
    assert "rankers.engine.mrr" in text and "+0.125" in text
