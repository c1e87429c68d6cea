"""Cases judged by entry (`relevant`) through `qualbench case --relevant`, `qualbench show`
and the head-to-head rankers section."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from pytest_qualbench.cli.qualbench import main
from pytest_qualbench.engine import Engine
from pytest_qualbench.engine.types import Chunk
from pytest_qualbench.evaluation.relevance import EntryAttribution
from pytest_qualbench.fixtures.parsing import parse_entry
from pytest_qualbench.fixtures.schema import Case, Entry
from pytest_qualbench.sections.head_to_head import Grading, head_to_head
from pytest_qualbench.sections.rankers import RankerFactory
from tests.adapters.test_graded_engines import GRADED
from tests.conftest import WriteFixture

DOCS = {
    "lag.md": "# Replica lag\n\nReplica lag grows while vacuum runs on the primary.\n",
    "vacuum.md": "# Vacuum tuning\n\nA long vacuum on the primary makes replica lag spike.\n",
    "cache.md": "# Eviction storms\n\nThe cache evicts hot keys when memory is full.\n",
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pytest.ini").write_text("[pytest]\nqualbench_paths = bench\n")
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text)
    assert main(["add", "docs", "--to", "bench/docs.jsonl"]) == 0
    return tmp_path


def cases_of(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [case for entry in lines for case in entry["cases"]]


def test_case_with_relevant_probes_by_entry_and_writes_the_grades(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `qualbench add` numbers the documents in name order.
    ids = {"cache.md": "md_001", "lag.md": "md_002", "vacuum.md": "md_003"}
    capsys.readouterr()
    status = main(
        [
            "case", "bench/docs.jsonl", ids["lag.md"], "replica lag vacuum primary",
            "--relevant", f"{ids['lag.md']}=2", "--relevant", f"{ids['vacuum.md']}=1",
            "--relevant", f"{ids['cache.md']}=0", "--ceiling", "2",
        ]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0, out
    assert f"] {ids['lag.md']} (grade 2) | Replica lag |" in out
    assert f"] {ids['vacuum.md']} (grade 1) | Vacuum tuning |" in out
    [written] = cases_of(project / "bench/docs.jsonl")
    assert written["relevant"] == {ids["lag.md"]: 2, ids["vacuum.md"]: 1, ids["cache.md"]: 0}
    assert "needles" not in written
    assert written["expected_rank_ceiling"] == 2

    # The file loads and the case runs green in the gate, judged by entry.
    assert main(["show", written["case_id"]]) == 0
    shown = capsys.readouterr().out
    assert (
        f"expected:  relevant {ids['lag.md']} (grade 2), {ids['vacuum.md']} (grade 1), "
        f"{ids['cache.md']} (grade 0), grade >= 1 counts; layer "
    ) in shown
    assert "  needles  pass  2 of 2 relevant entries found" in shown


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--relevant", "md_404=1"], "--relevant md_404: no entry 'md_404' in the fixture set"),
        (["--relevant", "md_001=0"], "no --relevant entry has grade 1 or more"),
        (["--relevant", "md_001=1", "--relevant", "md_001=2"], "--relevant md_001 is given twice"),
        (["--relevant", "md_002=1", "--needle", "evicts"], "needle 'evicts' is in no entry graded"),
        (["--relevant", "md_001=1", "--negative"], "a negative case has no --needle, --relevant"),
    ],
)
def test_a_wrong_relevant_argument_is_refused_and_nothing_written(
    project: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], message: str
) -> None:
    before = (project / "bench/docs.jsonl").read_bytes()
    capsys.readouterr()
    assert main(["case", "bench/docs.jsonl", "md_001", "replica lag", *arguments]) == 2
    assert message in capsys.readouterr().err
    assert (project / "bench/docs.jsonl").read_bytes() == before


@pytest.mark.parametrize("value", ["md_001", "md_001=-1", "md_001=1.5", "=2"])
def test_a_malformed_entry_grade_is_a_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        main(["case", "bench/docs.jsonl", "md_001", "replica lag", "--relevant", value])
    assert exited.value.code == 2
    assert "--relevant: " in capsys.readouterr().err


def test_a_graded_case_that_misses_an_entry_is_not_written_and_says_which(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    status = main(
        ["case", "bench/docs.jsonl", "md_002", "replica lag", "--relevant", "md_001=1",
         "--relevant", "md_002=2"]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert status == 1
    assert "1 of 2 relevant entries found, missing md_001 (grade 1)" in captured.err
    assert "choose a query the relevant entries answer, or grade fewer entries" in captured.err
    assert cases_of(project / "bench/docs.jsonl") == []


# --- the head-to-head section -----------------------------------------------------


def entry_of(entry_id: str, text: str) -> Entry:
    parsed, errors = parse_entry(
        {
            "id": entry_id, "content_type": "markdown", "haystack": text,
            "source_label": f"src-{entry_id}", "source_kind": "durable", "cases": [],
        },
        "f.jsonl", 1,
    )  # fmt: skip
    assert parsed is not None and not errors
    return parsed


class Fixed:
    """A ranker returning a fixed chunk order."""

    def __init__(self, order: list[int]) -> None:
        self.order = order

    def rank(self, query: str, chunks: Any) -> list[int]:
        return self.order


def fixed(order: list[int]) -> RankerFactory:
    return lambda engine, chunks: Fixed(order)


def test_head_to_head_judges_a_graded_case_by_entry_with_graded_ndcg() -> None:
    entries = [entry_of("a", "alpha"), entry_of("b", "beta"), entry_of("c", "gamma")]
    # Two chunks of `b`, then `c`, then `a`: b counts once, at rank 1.
    chunks = [
        Chunk("beta one", "", "src-b", "durable", 0, "src-b", {}),
        Chunk("beta two", "", "src-b", "durable", 1, "src-b", {}),
        Chunk("gamma", "", "src-c", "durable", 0, "src-c", {}),
        Chunk("alpha", "", "src-a", "durable", 0, "src-a", {}),
    ]
    case = Case(
        case_id="md_001_q1", query="q", needles=(), expected_layer="any",
        expected_rank_ceiling=3, entry_id="a", content_type="markdown", path="f.jsonl",
        line=1, relevant={"a": 2, "b": 1},
    )  # fmt: skip
    grading = Grading(lambda _content_type: EntryAttribution(entries))
    section = head_to_head(
        [case],
        lambda _content_type: (Engine(), chunks),
        [("fixed", fixed([0, 1, 2, 3]))],
        grading,
    )
    metrics = {name: values["fixed"] for name, values in section["metrics"].items()}
    # Entries ranked b (1), c (0), a (2); the ideal a (2), b (1).
    dcg = 1 / math.log2(2) + 2 / math.log2(4)
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert metrics["ndcg@10"] == pytest.approx(dcg / ideal, abs=1e-12)
    assert metrics["precision@1"] == 1.0
    assert metrics["mrr"] == 1.0
    assert metrics["recall@5"] == 1.0
    exponential = head_to_head(
        [case],
        lambda _content_type: (Engine(), chunks),
        [("fixed", fixed([0, 1, 2, 3]))],
        Grading(grading.attribution_of, min_grade=2, gain="exponential"),
    )["metrics"]
    # Grade 2 needed: `a` at entry rank 3 is the first relevant one.
    assert exponential["mrr"]["fixed"] == pytest.approx(1 / 3)
    dcg = 1 / math.log2(2) + 3 / math.log2(4)
    ideal = 3 / math.log2(2) + 1 / math.log2(3)
    assert exponential["ndcg@10"]["fixed"] == pytest.approx(dcg / ideal, abs=1e-12)


def test_the_rankers_section_of_a_graded_run_matches_the_reports_own_metrics(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write_fixture("graded.jsonl", GRADED)
    result = pytester.runpytest(
        "--qualbench", "--qualbench-rankers=flatfile,bm25,engine", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=2)
    report = json.loads((pytester.path / ".qualbench" / "report.json").read_text("utf-8"))
    section = report["rankers"]
    assert "skipped" not in section
    for metric in ("precision@1", "mrr", "ndcg@10"):
        assert section["metrics"][metric]["engine"] == pytest.approx(
            report["overall"][metric], abs=1e-9
        ), metric
    # Graded: the engine ranks md_001 (grade 2) over md_002 (grade 1) for case 1, so its
    # nDCG@10 is 1; flatfile and bm25 score by entry too (not 0, as a needle judge would).
    assert section["metrics"]["ndcg@10"]["bm25"] > 0.5
    assert section["metrics"]["ndcg@10"]["flatfile"] > 0.5
