"""End to end: the same fixtures give the same report, whatever the run, order or hash seed.

"The same" is `report.without_timings`: everything but the timestamp and the
latencies. The built-in engine runs here, over fixtures written to tie: paragraphs
that score alike in several sources, so only the (source, position) tie-break
orders them.
"""

from __future__ import annotations

import json

import numpy  # noqa: F401
import pytest

from pytest_qualbench.report.build import without_timings
from pytest_qualbench.report.model import Report
from tests.conftest import WriteFixture, case, entry

# numpy is imported above, at collection, on purpose: the built-in engine imports it
# lazily, pytester's in-process runs drop modules first imported during the run, and
# numpy refuses a second import in one process ("cannot load module more than once").

RRF = "rrf(porter+trigram)"
BOILERPLATE = "Retries use exponential backoff with jitter between attempts."

MARKDOWN = [
    entry(
        f"md_{n:03d}",
        f"# Service {n}\n\n## Connection Pool Settings\nmaxIdleConns defaults to {n * 10}\n\n"
        f"## Retry Policy\n{BOILERPLATE} (service {n})",
        [
            case(
                f"md_{n:03d}_q1",
                f"maxIdleConns defaults to {n * 10}",
                [f"defaults to {n * 10}"],
                layer=RRF,
            ),
            # The retry sections score alike: the tie-break alone puts service n at rank n.
            case(
                f"md_{n:03d}_q2",
                "exponential backoff jitter",
                [f"(service {n})"],
                layer=RRF,
                ceiling=3,
            ),
        ],
    )
    for n in range(1, 6)
] + [
    entry(
        "md_009",
        "# Caching\n\nThe cache evicts least recently used entries first.",
        [
            case("md_009_q1", "cache evicton", ["least recently used"], layer="fuzzy+" + RRF),
            case("md_009_q_neg", "anomalocaris opabinia", []),
        ],
    )
]
JSON_ENTRIES = [
    entry(
        f"json_{n:03d}",
        json.dumps({"service": f"svc{n}", "metrics": {"p99_latency_ms": 100 + n, "errors": n}}),
        [case(f"json_{n:03d}_q1", f"svc{n} p99_latency_ms", [f'"svc{n}"'], layer=RRF, ceiling=2)],
        content_type="json",
    )
    for n in range(1, 5)
]
TRANSCRIPTS = [
    entry(
        "tr_001",
        "Human: how do I rotate the signing key?\nAssistant: run keyctl rotate, then restart.\n"
        "Human: and the old key?\nAssistant: it stays valid for 24 hours.",
        [case("tr_001_q1", "old key valid", ["24 hours"], layer=RRF)],
        content_type="transcript",
    ),
    entry(
        "tr_002",
        "Human: rotate the signing key again\nAssistant: the old key stays valid, as before.",
        [],
        content_type="transcript",
        source_kind="ephemeral",
    ),
]

REVERSE_ORDER = """
def pytest_collection_modifyitems(items):
    items.reverse()
"""


@pytest.fixture
def bench(write_fixture: WriteFixture) -> None:
    write_fixture("markdown.jsonl", MARKDOWN)
    write_fixture("json.jsonl", JSON_ENTRIES)
    write_fixture("transcript.jsonl", TRANSCRIPTS)


def read_report(pytester: pytest.Pytester, name: str) -> Report:
    report: Report = json.loads((pytester.path / name).read_text(encoding="utf-8"))
    return report


def assert_exercises_ranking(report: Report) -> None:
    """Guard against a vacuous comparison: ties, failures, corrections and negatives all occur."""
    cases = report["cases"]
    assert len(cases) == len([c for e in MARKDOWN + JSON_ENTRIES + TRANSCRIPTS for c in e["cases"]])
    assert [c["rank"] for c in cases if c["case_id"].endswith("_q2")] == [1, 2, 3, 4, 5]
    assert any(c["corrected_query"] for c in cases)
    assert report["failures"]
    assert report["negatives"]["cases"] == 1


@pytest.mark.usefixtures("bench")
def test_other_hash_seed_test_order_and_entry_order_give_one_report(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Separate interpreters with different hash seeds: set and str-keyed dict order
    # differ between them, so a ranking or report that leans on either shows up here.
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    pytester.runpytest_subprocess("--qualbench", "--qualbench-report=a.json", "-p", "no:randomly")

    # Second run: another seed, and the items in reverse order.
    pytester.makeconftest(REVERSE_ORDER)
    monkeypatch.setenv("PYTHONHASHSEED", "4242")
    reversed_run = pytester.runpytest_subprocess(
        "--qualbench", "--qualbench-report=b.json", "-p", "no:randomly", "-v"
    )
    first_item = next(line for line in reversed_run.outlines if "::" in line)
    assert "transcript.jsonl::tr_001_q1" in first_item, "the reversing hook did not take effect"

    # Third run, in this process: every fixture file's lines in reverse order. The
    # bytes, hence the dataset hash, change; nothing else may.
    for path in sorted((pytester.path / "bench_fixtures").iterdir()):
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        path.write_text("".join(reversed(lines)), encoding="utf-8")
    pytester.runpytest("--qualbench", "--qualbench-report=c.json")

    first = read_report(pytester, "a.json")
    assert_exercises_ranking(first)
    assert without_timings(read_report(pytester, "b.json")) == without_timings(first)
    reordered = read_report(pytester, "c.json")
    assert reordered["dataset_hash"] != first["dataset_hash"]
    assert reordered["dataset_files"] != first["dataset_files"]
    as_first: Report = {
        **reordered,
        "dataset_hash": first["dataset_hash"],
        "dataset_files": first["dataset_files"],
    }
    assert without_timings(as_first) == without_timings(first)
