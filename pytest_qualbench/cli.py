"""The `qualstat` command: show one report, or compare a base report with a head report.

Exit status: 0 clean, 1 regression, 2 usage error, unreadable report or
reports that must not be compared. CI jobs gate on it directly.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_qualbench.compare import (
    DEFAULT_RULES,
    FORMATS,
    IncomparableReports,
    ReportError,
    compare_reports,
    load_report,
    parse_fail_on,
    render_comparison,
    render_report,
    with_overrides,
)

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
        "base", type=Path, metavar="REPORT", help="a report to show, or the base of a comparison"
    )
    parser.add_argument(
        "head", type=Path, nargs="?", metavar="HEAD", help="the report to compare against REPORT"
    )
    parser.add_argument(
        "--format",
        dest="fmt",
        choices=FORMATS,
        default="text",
        help="output format (markdown suits a pull request comment)",
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
    if args.head is None and (args.intersect or args.fail_on):
        print("qualstat: error: --intersect and --fail-on need two reports", file=sys.stderr)
        return EXIT_USAGE
    try:
        base = load_report(args.base)
        if args.head is None:
            print(render_report(base, args.fmt), end="")
            return 0
        comparison = compare_reports(
            base,
            load_report(args.head),
            rules=with_overrides(DEFAULT_RULES, args.fail_on),
            intersect=args.intersect,
        )
    except ReportError as error:
        print(f"qualstat: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except IncomparableReports as refusal:
        print(
            f"qualstat: refusing to compare {args.base} with {args.head}: {refusal}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    print(render_comparison(comparison, args.fmt), end="")
    return comparison.exit_code
