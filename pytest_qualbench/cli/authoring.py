"""The `qualbench add`, `case` and `show` subcommands: arguments in, lines out, exit status.

Each runs with the project's configured engine (`configured.run_configured`), so a
case is probed by the engine the benchmark will judge it with.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_qualbench.authoring.add import DEFAULT_SOURCE_KIND, document_files, plan_add
from pytest_qualbench.authoring.case import plan_case, write_case
from pytest_qualbench.authoring.fixture_lines import AuthoringError, write_lines
from pytest_qualbench.authoring.probe import counted, report_lines
from pytest_qualbench.authoring.show import show_lines
from pytest_qualbench.evaluation.case_record import CaseRecord
from pytest_qualbench.evaluation.outcomes import failure_reason
from pytest_qualbench.fixtures.discovery import discover_fixture_files
from pytest_qualbench.fixtures.loading import load_fixture_set
from pytest_qualbench.fixtures.schema import (
    CONTENT_TYPES,
    EXPECTED_LAYERS,
    NEGATIVE_LAYER,
    SOURCE_KINDS,
    FixtureSet,
)
from pytest_qualbench.options import entry_grade, non_negative_int
from pytest_qualbench.plugin.configured import BenchConfig, add_engine_options

USAGE_ERROR = 2
CASE_FAILS = 1


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    add = commands.add_parser("add", help="turn document files into fixture entries")
    add.add_argument(
        "documents",
        nargs="+",
        type=Path,
        metavar="PATH",
        help="document files, or folders of .md/.json/.txt/.log files",
    )
    add.add_argument(
        "--to",
        type=Path,
        required=True,
        metavar="FILE",
        help="the JSONL fixture file to append to (made if missing)",
    )
    add.add_argument(
        "--type",
        choices=CONTENT_TYPES,
        dest="content_type",
        help="content type of every document (default: from the extension)",
    )
    add.add_argument(
        "--kind",
        choices=SOURCE_KINDS,
        default=DEFAULT_SOURCE_KIND,
        help=f"source_kind of the entries (default: {DEFAULT_SOURCE_KIND})",
    )

    case = commands.add_parser("case", help="probe a query with the engine and add it as a case")
    case.add_argument("file", type=Path, metavar="FILE", help="the JSONL fixture file")
    case.add_argument("entry_id", metavar="ENTRY_ID", help="the entry whose text answers")
    case.add_argument("query", metavar="QUERY", help="what a user would type")
    case.add_argument(
        "--needle",
        action="append",
        default=[],
        metavar="TEXT",
        help="text a relevant result contains, verbatim; repeatable",
    )
    case.add_argument(
        "--relevant",
        action="append",
        default=[],
        type=entry_grade,
        metavar="ENTRY=GRADE",
        help="judge the case by entry: an entry that answers, with its grade (0 = judged not "
        "relevant, 1 or more counts); repeatable, with or without --needle",
    )
    case.add_argument(
        "--ceiling",
        type=non_negative_int,
        metavar="N",
        help="worst acceptable rank (default 3, json 5; 0 skips the check)",
    )
    case.add_argument(
        "--layer",
        choices=[layer for layer in EXPECTED_LAYERS if layer != NEGATIVE_LAYER],
        help="expected layer (default: the one the engine used)",
    )
    case.add_argument(
        "--negative", action="store_true", help="a query that must return nothing (no --needle)"
    )
    case.add_argument(
        "--expect-fail",
        metavar="REASON",
        help="write the case although the engine fails it, as a known failure (xfail) "
        "naming the checks it fails today and REASON",
    )

    show = commands.add_parser(
        "show", help="one case's ranked results and checks, as the benchmark sees them"
    )
    show.add_argument("case_id", metavar="CASE_ID", help="e.g. md_001_q1")
    show.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATHS",
        help="fixture files or folders (default: ini qualbench_paths)",
    )

    for parser in (add, case, show):
        add_engine_options(parser)


def run(arguments: argparse.Namespace, bench: BenchConfig) -> int:
    """Run the parsed subcommand; AuthoringError is a refusal: its reason and exit 2."""
    command = {"add": _add, "case": _case, "show": _show}[arguments.command]
    try:
        return command(arguments, bench)
    except AuthoringError as exc:
        for line in str(exc).splitlines():
            print(f"qualbench {arguments.command}: {line}", file=sys.stderr)
        return USAGE_ERROR


def _add(arguments: argparse.Namespace, bench: BenchConfig) -> int:
    target: Path = arguments.to
    documents = document_files(arguments.documents, arguments.content_type)
    plan = plan_add(
        documents,
        target,
        _fixture_set(bench, [target]),
        bench.engine_factory,
        content_type=arguments.content_type,
        source_kind=arguments.kind,
    )
    write_lines(target, plan.lines)
    print(f"{target}: {counted(len(plan.added), 'entry')} added")
    for added in plan.added:
        chunks = "" if added.chunks is None else f", {counted(added.chunks, 'chunk')}"
        print(f"  {added.entry_id:<10} {added.document} ({added.content_type}{chunks})")
    first = plan.added[0]
    print(
        f"next: qualbench case {target} {first.entry_id} 'a query' --needle 'text only {first.document.name} has'"
    )
    return 0


def _case(arguments: argparse.Namespace, bench: BenchConfig) -> int:
    target: Path = arguments.file
    relevant: dict[str, int] = {}
    for entry_id, grade in arguments.relevant:
        if entry_id in relevant:
            raise AuthoringError(f"--relevant {entry_id} is given twice; give each entry one grade")
        relevant[entry_id] = grade
    draft = plan_case(
        target,
        arguments.entry_id,
        arguments.query,
        arguments.needle,
        _fixture_set(bench, [target]),
        bench.engine_factory,
        ceiling=arguments.ceiling,
        layer=arguments.layer,
        negative=arguments.negative,
        relevant=relevant,
        expect_fail=arguments.expect_fail,
        limit=bench.limit,
        min_grade=bench.min_grade,
        gain=bench.gain,
    )
    case = draft.probe.case
    print(f"{draft.case_id} [{case.content_type}] {target} (entry {case.entry_id})")
    for line in report_lines(draft.probe):
        print(line)
    for warning in draft.warnings:
        print(f"warning: {warning}")
    if not draft.probe.record.passed and case.xfail is None:
        print(
            f"not written: {draft.case_id} fails as drafted ({failure_reason(draft.probe.record)}); "
            f"{_advice(draft.probe.record)}",
            file=sys.stderr,
        )
        return CASE_FAILS
    written = write_case(target, draft)
    expected = (
        "negative"
        if case.is_negative
        else f"layer {case.expected_layer}, ceiling {case.expected_rank_ceiling or 'none'}"
    )
    if case.xfail is not None:
        expected += f"; known failure: {', '.join(case.xfail.checks)} ({case.xfail.reason})"
    print(f"added {written} to {target} ({expected})")
    return 0


def _advice(record: CaseRecord) -> str:
    """What to pass to record the case as the engine answers it, when that is a choice."""
    failed = {failure.type for failure in record.failures}
    if record.relevant and ("needles" in failed or record.rank is None):
        return (
            "choose a query the relevant entries answer, or grade fewer entries; "
            "or keep it as a known failure with --expect-fail REASON"
        )
    if "needles" in failed or record.rank is None or record.layer is None:
        return (
            "choose a query that names what the needle says, or another needle; "
            "or keep it as a known failure with --expect-fail REASON"
        )
    flags = []
    if "rank" in failed:
        flags.append(f"--ceiling {record.rank}")
    if "layer" in failed:
        flags.append(f"--layer '{record.layer}'")
    return (
        f"if the engine's answer is acceptable, pass {' '.join(flags)}; "
        "if not, keep it as a known failure with --expect-fail REASON"
    )


def _show(arguments: argparse.Namespace, bench: BenchConfig) -> int:
    paths: list[Path] = arguments.paths or list(bench.fixture_paths)
    fixture_set = _fixture_set(bench, paths, configured=False)
    lines, passed = show_lines(
        fixture_set,
        arguments.case_id,
        bench.engine_factory,
        bench.limit,
        min_grade=bench.min_grade,
        gain=bench.gain,
    )
    for line in lines:
        print(line)
    return 0 if passed else CASE_FAILS


def _fixture_set(
    bench: BenchConfig, paths: Sequence[Path], *, configured: bool = True
) -> FixtureSet:
    """The named files plus (for add and case) the benchmark's own: ids and needles span both."""
    named = [*paths, *(bench.fixture_paths if configured else ())]
    files = discover_fixture_files([path for path in named if path.exists()])
    if not configured and not files:
        shown = " ".join(str(path) for path in paths)
        raise AuthoringError(f"no .jsonl fixture files under {shown}")
    return load_fixture_set(files, Path.cwd())
