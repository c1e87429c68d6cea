"""The `qualstat` command: show one report, or compare a base report with a head report.

Exit status: 0 clean, 1 regression, 2 usage error, unreadable report or
reports that must not be compared. CI jobs gate on it directly.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_qualbench.compare.diff import compare_reports
from pytest_qualbench.compare.loading import ReportError, load_report
from pytest_qualbench.compare.records import IncomparableReports
from pytest_qualbench.compare.render import FORMATS, comparison_to_json, render_comparison
from pytest_qualbench.compare.rules import DEFAULT_RULES, parse_fail_on, with_overrides
from pytest_qualbench.compare.show import render_report
from pytest_qualbench.report.html.model import HtmlExtraMissing, MixedDatasets
from pytest_qualbench.report.html.page import order_by_timestamp
from pytest_qualbench.report.html.render import render_html
from pytest_qualbench.report.targets import UnsafeOutput, checked_output
from pytest_qualbench.report.writing import write_text_atomic

EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    """The qualstat argument parser."""
    parser = argparse.ArgumentParser(
        prog="qualstat",
        description="Show a pytest-qualbench report, or compare a base report with a head "
        "report: deltas, paired significance, per-case changes and regression rules.",
        epilog="exit status: 0 clean, 1 regression, 2 usage error, unreadable or "
        "incomparable reports",
    )
    parser.add_argument(
        "reports",
        type=Path,
        nargs="+",
        metavar="REPORT",
        help="one report to show; BASE HEAD to compare; with --format html, any number for a trend",
    )
    parser.add_argument(
        "--format",
        dest="fmt",
        choices=(*FORMATS, "html"),
        default="text",
        help="output format (markdown suits a pull request comment; html is a self-contained page)",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="PATH",
        help="write the output to PATH instead of standard output",
    )
    parser.add_argument(
        "--intersect",
        action="store_true",
        help="compare only the cases both reports ran, even across "
        "different fixture sets, and list the added and removed ones",
    )
    parser.add_argument(
        "--fail-on",
        dest="fail_on",
        type=parse_fail_on,
        action="append",
        default=[],
        metavar="METRIC:DELTA",
        help="regress when METRIC drops by more than DELTA (0 = any drop); "
        "repeatable; overrides the default rule of that metric",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run qualstat with `argv` (default: the command line) and return its exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_request:
        # argparse exits on --help and on usage errors; returning the status keeps
        # main() callable from tests and `python -m pytest_qualbench compare`.
        return exit_request.code if isinstance(exit_request.code, int) else EXIT_USAGE
    paths: list[Path] = args.reports
    if len(paths) > 2 and args.fmt != "html":
        return usage_error("more than two reports make a trend: use --format html")
    if len(paths) == 1 and (args.intersect or args.fail_on):
        return usage_error("--intersect and --fail-on need two reports")
    if args.output is not None:
        try:
            checked_output(args.output, "-o", {path: f"the input report {path}" for path in paths})
        except UnsafeOutput as error:
            return usage_error(str(error))
    try:
        reports = [load_report(path) for path in paths]
        comparison = None
        if len(reports) >= 2:
            comparison = compare_reports(
                reports[-2] if args.fmt != "html" else order_by_timestamp(reports)[-2],
                reports[-1] if args.fmt != "html" else order_by_timestamp(reports)[-1],
                rules=with_overrides(DEFAULT_RULES, args.fail_on),
                intersect=args.intersect,
            )
    except ReportError as error:
        return usage_error(str(error))
    except IncomparableReports as refusal:
        shown = " with ".join(str(path) for path in paths)
        return usage_error(f"refusing to compare {shown}: {refusal}")
    if args.fmt == "html":
        try:
            output = render_html(
                reports,
                comparison=None if comparison is None else comparison_to_json(comparison),
                intersect=args.intersect,
            )
        except (HtmlExtraMissing, MixedDatasets) as error:
            return usage_error(str(error))
    elif comparison is None:
        output = render_report(reports[0], args.fmt)
    else:
        output = render_comparison(comparison, args.fmt)
    if args.output is None:
        print(output, end="")
    else:
        write_text_atomic(args.output, output)
    return 0 if comparison is None else comparison.exit_code


def usage_error(message: str) -> int:
    print(f"qualstat: error: {message}", file=sys.stderr)
    return EXIT_USAGE
