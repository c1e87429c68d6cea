"""The `qualbench` console script: write fixtures (add, case), debug a case (show), lint
fixtures, import standard IR collections."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_qualbench.authoring.collections import Collection, CollectionError, read_beir, read_trec
from pytest_qualbench.authoring.importing import build_fixtures, summary_lines, write_fixtures
from pytest_qualbench.authoring.lint import ERROR, exit_status, lint_fixture_set
from pytest_qualbench.cli import authoring
from pytest_qualbench.fixtures.discovery import discover_fixture_files
from pytest_qualbench.fixtures.loading import load_fixture_set
from pytest_qualbench.fixtures.schema import CONTENT_TYPES
from pytest_qualbench.plugin.configured import (
    BenchConfig,
    add_engine_options,
    engine_options,
    run_configured,
)

RANK_CEILINGS = (0, 10)
USAGE_ERROR = 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; 0 on success, 1 on a failing case or lint error, 2 on usage errors.

    The commands that search run inside the project's pytest configuration, with the
    engine `pytest --qualbench` would use.
    """
    arguments = _parser().parse_args(argv)
    if arguments.command == "import":
        return _import(arguments)
    command = _lint if arguments.command == "lint" else authoring.run
    return run_configured(engine_options(arguments), lambda bench: command(arguments, bench))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="qualbench", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    authoring.add_parsers(commands)

    lint = commands.add_parser("lint", help="check fixtures for traps that make a benchmark lie")
    lint.add_argument(
        "paths",
        nargs="*",
        type=Path,
        help="JSONL files or directories (default: ini qualbench_paths, bench_fixtures)",
    )
    lint.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    add_engine_options(lint)

    import_ = commands.add_parser("import", help="turn a labeled IR collection into JSONL fixtures")
    formats = import_.add_subparsers(dest="format", required=True)
    beir = formats.add_parser("beir", help="a BEIR folder: corpus.jsonl, queries.jsonl, qrels/")
    beir.add_argument("directory", type=Path)
    beir.add_argument("--split", default="test", help="qrels/<SPLIT>.tsv to read (default: test)")
    trec = formats.add_parser("trec", help="TREC documents, topics and qrels")
    trec.add_argument(
        "--docs",
        type=Path,
        nargs="+",
        required=True,
        help="files (or directories of files) of <DOC> records",
    )
    trec.add_argument("--topics", type=Path, required=True, help="a file of <top> records")
    trec.add_argument("--qrels", type=Path, required=True, help="`qid 0 docno relevance` lines")
    for subparser in (beir, trec):
        _add_import_options(subparser)
    return parser


def _add_import_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", type=Path, required=True, help="the JSONL file to write")
    parser.add_argument(
        "--name", help="prefix of entry ids and source labels (default: the output file stem)"
    )
    parser.add_argument("--content-type", choices=CONTENT_TYPES, default="plaintext")
    parser.add_argument(
        "--needles",
        action="store_true",
        help="judge each case by one unique needle per relevant document instead of by "
        "relevant {entry: grade} (the collection's own grades, the default)",
    )
    parser.add_argument(
        "--min-relevance",
        type=int,
        default=None,
        help="with --needles, a judgment counts as relevant at this grade or above (default: 1);"
        " graded cases keep every grade (the gate's --qualbench-min-grade sets the bar)",
    )
    parser.add_argument(
        "--rank-ceiling",
        type=int,
        choices=RANK_CEILINGS,
        default=0,
        help="expected_rank_ceiling of every case: 0 skips the check (default: 0)",
    )


def _lint(arguments: argparse.Namespace, bench: BenchConfig) -> int:
    paths: list[Path] = arguments.paths or list(bench.fixture_paths)
    files = discover_fixture_files(paths)
    if not files:
        shown = " ".join(str(path) for path in paths)
        print(f"qualbench lint: no .jsonl fixture files under {shown}", file=sys.stderr)
        return USAGE_ERROR
    findings = lint_fixture_set(load_fixture_set(files, Path.cwd()), bench.engine_factory)
    for finding in findings:
        print(finding)
    errors = sum(finding.level == ERROR for finding in findings)
    warnings = len(findings) - errors
    counts = f"{_count(errors, 'error')}, {_count(warnings, 'warning')}"
    print(f"{counts} in {_count(len(files), 'file')}")
    return exit_status(findings, strict=arguments.strict)


def _import(arguments: argparse.Namespace) -> int:
    output: Path = arguments.output
    if arguments.min_relevance is not None and not arguments.needles:
        print(
            f"qualbench import {arguments.format}: --min-relevance applies to --needles; graded"
            " cases keep every grade (set the bar with pytest --qualbench-min-grade)",
            file=sys.stderr,
        )
        return USAGE_ERROR
    try:
        outcome = build_fixtures(
            _read_collection(arguments),
            name=arguments.name or output.stem,
            content_type=arguments.content_type,
            min_relevance=1 if arguments.min_relevance is None else arguments.min_relevance,
            rank_ceiling=arguments.rank_ceiling,
            needles=arguments.needles,
        )
    except CollectionError as exc:
        print(f"qualbench import {arguments.format}: {exc}", file=sys.stderr)
        return USAGE_ERROR
    write_fixtures(outcome.entries, output)
    for line in summary_lines(outcome, output):
        print(line)
    return 0


def _read_collection(arguments: argparse.Namespace) -> Collection:
    if arguments.format == "beir":
        return read_beir(arguments.directory, arguments.split)
    return read_trec(arguments.docs, arguments.topics, arguments.qrels)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
