"""Report comparison: load two reports, diff them, test significance, apply regression rules.

The comparison is paired: both reports score the same cases (same dataset hash),
so every metric change is tested over per-case values, not just aggregates. A
change is judged twice, independently: by the regression rules (does it drop more
than allowed?) and by significance (is it more than noise?). Only the rules decide
the exit code; significance tells a reviewer how much to trust a delta.

The public API (documented in docs/qualstat.md) is re-exported here; each concern
lives in its own module: loading, rules, statistics, diff, render, show.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_RULES",
    "FORMATS",
    "Comparison",
    "IncomparableReports",
    "MetricChange",
    "ReportError",
    "Rule",
    "compare_reports",
    "comparison_to_json",
    "load_report",
    "parse_fail_on",
    "render_comparison",
    "render_report",
    "with_overrides",
]
