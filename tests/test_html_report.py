"""The HTML report: escaping, sections, dataset refusal, trend order, pure helpers."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from pytest_qualbench.report.html.charts import (
    count_step,
    negative_outcomes,
    rank_histogram,
    rate_axis,
    rate_labels,
)
from pytest_qualbench.report.html.model import HtmlExtraMissing, MixedDatasets, Segment
from pytest_qualbench.report.html.page import (
    aggregate_cases,
    mark_needles,
    order_by_timestamp,
    restrict_to_shared_cases,
)
from pytest_qualbench.report.html.render import render_html, write_html
from tests.html_sample import DATASET_HASH, case, report

OTHER_HASH = "sha256:" + "cd" * 32
SVG_NAMESPACES = {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}


def test_hostile_fixture_text_is_escaped() -> None:
    html = render_html([report(hostile=True)])
    assert "<script" not in html.lower()
    assert "</textarea>" not in html
    assert "<img src=x" not in html
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;&lt;/textarea&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_hostile_names_in_chart_labels_are_escaped() -> None:
    hostile = report(rankers=True)
    hostile["by_content_type"]["<script>ct</script>"] = hostile["by_content_type"].pop("json")
    hostile["rankers"]["rankers"].append("<b>mine</b>")
    for values in hostile["rankers"]["metrics"].values():
        values["<b>mine</b>"] = 0.5
    html = render_html([hostile])
    assert "<script" not in html.lower()
    assert "<b>mine</b>" not in html
    assert "&lt;b&gt;mine&lt;/b&gt;" in html


def test_page_loads_nothing_from_elsewhere() -> None:
    html = render_html([report(), report(level=0.8), report(level=0.7, rankers=True)])
    assert set(re.findall(r"https?://[^\"'\s<>)]+", html)) <= SVG_NAMESPACES
    assert not re.search(r"<(script|link|iframe|img|object|embed)\b", html, re.IGNORECASE)
    assert "@import" not in html
    assert "url(" not in html
    assert "default-src 'none'" in html


def test_single_run_page_sections() -> None:
    html = render_html([report(rankers=True)])
    for section in ("headline", "content-types", "ranks", "rankers", "failures", "environment"):
        assert f'<section id="{section}">' in html
    assert '<section id="trend">' not in html
    assert DATASET_HASH in html
    assert "pytest_qualbench.engine:Engine" in html
    assert "&#34;k1&#34;: 1.2" in html
    assert "Linux-6.1-x86_64" in html


def test_rankers_section_only_when_the_report_has_one() -> None:
    assert '<section id="rankers">' not in render_html([report()])


def test_floors_show_their_verdicts() -> None:
    html = render_html([report(level=0.9)])
    floors = html[html.index('<table class="floors">') :]
    assert re.search(r"json\.mrr</th>\s*<td>0\.950</td>\s*<td>0\.900</td>\s*<td[^>]*>FAIL", floors)
    assert re.search(r"mrr</th>\s*<td>0\.800</td>\s*<td>0\.900</td>\s*<td[^>]*>pass", floors)
    assert "not enforced" in floors
    assert "1 floor(s) failed; 2 failing case(s)" in html


def test_failure_shows_query_needles_and_marked_top_results() -> None:
    html = render_html([report()])
    failure = html[html.index('id="case-md_001_q2"') :]
    assert "pool timeout" in failure
    assert '<mark class="needle">## Connection Pool Settings</mark>' in failure
    assert "see <mark>## Connection Pool Settings</mark> for limits" in failure
    assert "unrelated text" in failure


def test_charts_are_inline_svg_of_fixed_size_without_script() -> None:
    html = render_html([report(level=0.8), report(level=0.9)])
    sizes = re.findall(r'<svg[^>]*width="(\d+)"[^>]*height="(\d+)"', html)
    assert sizes.count(("470", "300")) == 7  # six metrics, the negative cases
    assert sizes.count(("960", "380")) == 1


def test_the_same_reports_render_the_same_bytes() -> None:
    reports = [report(level=0.8), report(level=0.9, rankers=True)]
    assert render_html(reports) == render_html(reports)


def test_mixed_dataset_hashes_are_refused() -> None:
    with pytest.raises(MixedDatasets, match="different fixture sets") as raised:
        render_html([report(), report(dataset_hash=OTHER_HASH)])
    assert isinstance(raised.value, ValueError)
    assert DATASET_HASH in str(raised.value)
    assert OTHER_HASH in str(raised.value)


def test_intersect_compares_only_shared_cases() -> None:
    head = report(dataset_hash=OTHER_HASH)
    head["cases"].append(case("md_003_q1", rank=1))
    html = render_html([report(), head], intersect=True)
    assert "only the cases they share are compared" in html
    assert "not in every report: <code>md_003_q1</code>." in html


def test_comparison_page_marks_changes_and_significance() -> None:
    base = report(level=0.8)
    base["failures"] = [f for f in base["failures"] if f["case_id"] != "md_001_q2"]
    comparison = {
        "metrics": [
            {"scope": "overall", "metric": "mrr", "significant": True, "p_value": 0.012,
             "ci95": [0.02, 0.18]},
            {"scope": "json", "metric": "mrr", "significant": False},
        ],
        "regressions": [{"subject": "md_001_q2", "detail": "newly failing (rank)"}],
    }  # fmt: skip
    html = render_html([base, report(level=0.9)], comparison=comparison)
    assert "significant, p=0.012, 95% CI [+0.020, +0.180]" in html
    assert "md_001_q2: newly failing (rank)" in html
    newly_failing = html[html.index('id="case-md_001_q2"') :].split("</h3>")[0]
    assert "newly failing" in newly_failing
    assert re.search(r"hit@1</th>\s*<td>0\.800</td>\s*<td>0\.900</td>\s*<td[^>]*>\+0\.100", html)


def test_comparison_needs_two_reports() -> None:
    with pytest.raises(ValueError, match="two reports"):
        render_html([report()], comparison={"metrics": []})


def test_several_reports_are_ordered_by_timestamp() -> None:
    newest = report(timestamp="2026-11-30T03:00:00+00:00", level=0.9)
    oldest = report(timestamp="2026-11-28T03:00:00+00:00", level=0.7)
    middle = report(timestamp="2026-11-29T04:00:00+02:00", level=0.8)
    assert order_by_timestamp([newest, oldest, middle]) == [oldest, middle, newest]
    html = render_html([newest, oldest, middle])
    assert '<section id="trend">' in html
    labels = [html.index(label) for label in ("2026-11-28 03:00", "2026-11-29 04:00", "2026-11-30")]
    assert labels == sorted(labels)
    # The page reviews the newest run against the one before it.
    assert re.search(r"mrr</th>\s*<td>0\.800</td>\s*<td>0\.900</td>", html)


def test_equal_timestamps_keep_their_given_order() -> None:
    first, second = report(level=0.1), report(level=0.2)
    assert order_by_timestamp([first, second]) == [first, second]


def test_rank_histogram_counts_every_case_once() -> None:
    sample = report()
    counts = dict(
        rank_histogram({**sample, "cases": [*sample["cases"], case("md_004_q1", rank=12)]})
    )
    assert counts["1"] == 1
    assert counts["2"] == 1
    assert counts["3"] == 0
    assert counts[">10"] == 1
    assert counts["not found"] == 1
    assert sum(counts.values()) == 4


def test_negative_cases_have_their_own_counts() -> None:
    assert negative_outcomes(report()) == [
        ("returned nothing (pass)", 1),
        ("returned results (fail)", 1),
    ]


@pytest.mark.parametrize(
    ("values", "axis"),
    [
        ([0.84, 1.0], (0.8, 1.0)),
        ([1.0, None], (0.95, 1.0)),
        ([0.37, 0.44], (0.35, 0.5)),
        ([0.01, 0.99], (0.0, 1.0)),
        ([0.0], (0.0, 0.05)),
        ([], (0.0, 1.0)),
    ],
)
def test_rate_axes_zoom_to_the_data(values: list[float | None], axis: tuple[float, float]) -> None:
    assert rate_axis(values) == axis


@pytest.mark.parametrize(
    ("low", "labels"),
    [(0.9, [0.9, 0.95, 1.0]), (0.45, [0.45, 0.55, 0.65, 0.75, 0.85, 1.0]),
     (0.0, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0])],
)  # fmt: skip
def test_rate_labels_start_at_the_baseline(low: float, labels: list[float]) -> None:
    assert rate_labels(low, 1.0) == labels


@pytest.mark.parametrize(("tallest", "step"), [(1, 1), (10, 1), (11, 2), (66, 10), (247, 50)])
def test_count_axes_step_by_one_two_or_five(tallest: int, step: int) -> None:
    assert count_step(tallest) == step


def test_a_zoomed_axis_says_where_it_starts_and_no_null_shows() -> None:
    html = render_html([report(level=0.9)])
    assert "(axis 0.85 to 0.95, not 0 to 1)" in html
    assert ">null<" not in html


def test_mark_needles_prefers_the_longest_needle_at_a_position() -> None:
    assert mark_needles("see Pool Settings, pool", ["Pool", "Pool Settings"]) == (
        Segment("see ", needle=False),
        Segment("Pool Settings", needle=True),
        Segment(", pool", needle=False),
    )


def test_mark_needles_without_a_match_keeps_the_text_whole() -> None:
    assert mark_needles("nothing here", ["absent", ""]) == (Segment("nothing here", False),)
    assert mark_needles("", ["x"]) == ()


def test_aggregate_is_the_mean_over_cases_that_carry_the_metric() -> None:
    cases = [case("md_001_q1"), case("md_001_q2"), case("md_001_q3")]
    cases[0]["metrics"] = {"mrr": 1.0, "rank_ceiling_pass": None}
    cases[1]["metrics"] = {"mrr": 0.5, "rank_ceiling_pass": 1.0}
    cases[2]["metrics"] = {"mrr": 0.0}
    assert aggregate_cases(cases, ["mrr", "rank_ceiling_pass", "hit@1"]) == {
        "cases": 3,
        "mrr": (1.0 + 0.5 + 0.0) / 3,
        "rank_ceiling_pass": 1.0 / 1,
        "hit@1": None,
    }


def test_restrict_to_shared_cases_recomputes_aggregates() -> None:
    head = report()
    head["cases"] = [c for c in head["cases"] if c["case_id"] != "json_001_q1"]
    base, _ = restrict_to_shared_cases([report(), head])
    assert [c["case_id"] for c in base["cases"]] == [c["case_id"] for c in head["cases"]]
    assert base["overall"]["cases"] == 2
    assert base["overall"]["mrr"] == (1 / 1 + 0) / 2
    assert sorted(base["by_content_type"]) == ["markdown"]
    assert base["negatives"]["negative_pass"] == (1.0 + 0.0) / 2


def test_intersect_without_shared_negatives_still_renders() -> None:
    head = report(dataset_hash=OTHER_HASH)
    head["cases"] = [c for c in head["cases"] if not c["negative"]]
    html = render_html([report(), head], intersect=True)
    assert re.search(r"negative_pass</th>\s*<td>—</td>\s*<td>—</td>", html)


def test_missing_extra_names_the_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pygal", None)
    with pytest.raises(HtmlExtraMissing, match=re.escape("pip install 'pytest-qualbench[html]'")):
        render_html([report()])
    assert issubclass(HtmlExtraMissing, ImportError)


def test_write_html_replaces_the_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out" / "report.html"
    write_html(target, "old")
    write_html(target, "<p>new</p>")
    assert target.read_text(encoding="utf-8") == "<p>new</p>"
    assert [path.name for path in target.parent.iterdir()] == ["report.html"]


def test_html_without_the_extra_is_a_usage_error_before_collection(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "jinja2", None)
    (pytester.path / "bench_fixtures").mkdir()
    fixture = {"id": "md_001", "content_type": "markdown", "haystack": "alpha",
               "source_label": "s", "source_kind": "durable", "cases": []}  # fmt: skip
    (pytester.path / "bench_fixtures" / "m.jsonl").write_text(json.dumps(fixture) + "\n")
    result = pytester.runpytest_inprocess("--qualbench", "--qualbench-html=page.html")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*qualbench: --qualbench-html: the HTML report needs Jinja2 and pygal: "
         "pip install 'pytest-qualbench[[]html]'"]
    )  # fmt: skip
    assert "collected" not in result.stdout.str()


def test_a_page_without_floors_says_none_are_configured() -> None:
    sample = report()
    html = render_html([{**sample, "floors": []}])
    assert "no floors configured; 2 failing case(s)" in html
    assert "all enforced floors met" not in html
