"""Authoring commands' logic: `add`, `case` and `show` over small files and real engines."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

from pytest_qualbench.authoring.add import document_files, plan_add
from pytest_qualbench.authoring.case import listed, plan_case, write_case
from pytest_qualbench.authoring.fixture_lines import AuthoringError, write_lines
from pytest_qualbench.authoring.show import show_lines
from pytest_qualbench.engine import Engine, Result, SearchEngine
from pytest_qualbench.fixtures import Entry, FixtureSet, load_fixture_set


def builtin(content_type: str) -> SearchEngine:
    return Engine()


class EchoEngine:
    """Returns every chunk for any query: a negative case can never pass with it."""

    def index(self, entries: Sequence[Entry]) -> None:
        self.texts = [entry.haystack for entry in entries]

    def search(self, query: str, *, limit: int = 10, kinds: Iterable[str] = ()) -> list[Result]:
        return [Result(text, "porter") for text in self.texts[:limit]]


class FailingEngine:
    """Cannot index anything, as a user's engine with a bug."""

    def index(self, entries: Sequence[Entry]) -> None:
        raise ValueError("tokenizer rejects the text")

    def search(self, query: str, *, limit: int = 10, kinds: Iterable[str] = ()) -> list[Result]:
        return []


def fixture_set(*paths: Path) -> FixtureSet:
    return load_fixture_set([path for path in paths if path.exists()], paths[0].parent)


def entry_line(entry_id: str, haystack: str, cases: list[dict[str, object]] | None = None) -> str:
    number = entry_id.rsplit("_", 1)[1]
    return json.dumps(
        {
            "id": entry_id,
            "content_type": "markdown",
            "haystack": haystack,
            "source_label": f"bench-markdown-{number}",
            "source_kind": "durable",
            "cases": cases or [],
        }
    )


@pytest.fixture
def documents(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "install.md").write_text("# Install\n\nRun `pip install widget` first.\n")
    (folder / "config.json").write_text('{"service": "widget", "retries": 5}\n')
    (folder / "run.log").write_text("widget started on port 8080\n")
    (folder / "notes.rst").write_text("not a known type\n")
    return folder


def test_add_makes_one_entry_per_document_typed_by_extension(
    tmp_path: Path, documents: Path
) -> None:
    target = tmp_path / "bench" / "docs.jsonl"
    plan = plan_add(document_files([documents], None), target, fixture_set(target), builtin)
    assert [(a.document.name, a.entry_id, a.content_type) for a in plan.added] == [
        ("config.json", "json_001", "json"),
        ("install.md", "md_001", "markdown"),
        ("run.log", "txt_001", "plaintext"),
    ]
    write_lines(target, plan.lines)
    entries = fixture_set(target).entries()
    assert [(e.id, e.source_label, e.source_kind) for e in entries][1] == (
        "md_001",
        "bench-markdown-001",
        "durable",
    )
    assert entries[1].haystack == (documents / "install.md").read_text()


def test_add_continues_the_numbering_and_keeps_other_lines_byte_for_byte(
    tmp_path: Path, documents: Path
) -> None:
    target = tmp_path / "docs.jsonl"
    # Hand formatting, a non-ASCII character left unescaped and CRLF endings must survive.
    original = (
        entry_line("md_007", "# Seven\n\nséptimo").replace('", "', '",  "') + "\r\n"
    ).encode() + b"\r\n"
    target.write_bytes(original)
    plan = plan_add([documents / "install.md"], target, fixture_set(target), builtin)
    assert plan.added[0].entry_id == "md_008"
    data = b"".join(plan.lines)
    assert data.startswith(original)
    assert data.endswith(b"\r\n")
    assert json.loads(data[len(original) :])["source_label"] == "bench-markdown-008"


def test_add_refuses_a_document_already_present(tmp_path: Path, documents: Path) -> None:
    target = tmp_path / "docs.jsonl"
    target.write_text(entry_line("md_001", (documents / "install.md").read_text()) + "\n")
    with pytest.raises(AuthoringError, match=r"install\.md: already present as entry md_001"):
        plan_add([documents / "install.md"], target, fixture_set(target), builtin)


def test_add_names_every_refused_file_and_writes_nothing(tmp_path: Path, documents: Path) -> None:
    (documents / "empty.txt").write_text("  \n")
    (documents / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (documents / "broken.json").write_text('{"service": ')
    named = [documents / name for name in ("notes.rst", "empty.txt", "latin1.txt", "broken.json")]
    with pytest.raises(AuthoringError) as refused:
        plan_add([*named, documents / "run.log"], tmp_path / "t.jsonl", FixtureSet((), ""), builtin)
    lines = str(refused.value).splitlines()
    assert lines[0].endswith(
        "notes.rst: no content type for the extension '.rst' "
        "(.md markdown, .json json, .txt plaintext, .log plaintext); "
        "pass --type, one of markdown, json, plaintext, transcript, curated"
    )
    assert lines[1].endswith("empty.txt: empty: there is nothing to search")
    assert lines[2].endswith("latin1.txt: not UTF-8 text (byte 0xe9 at offset 3)")
    assert "broken.json: the engine cannot index it as json: invalid JSON" in lines[3]
    assert len(lines) == 4
    assert not (tmp_path / "t.jsonl").exists()


def test_add_with_a_type_takes_any_extension(tmp_path: Path, documents: Path) -> None:
    plan = plan_add(
        [documents / "notes.rst"],
        tmp_path / "t.jsonl",
        FixtureSet((), ""),
        builtin,
        content_type="plaintext",
        source_kind="session",
    )
    assert json.loads(plan.lines[0])["source_kind"] == "session"


def test_add_refuses_what_the_engine_cannot_index(tmp_path: Path, documents: Path) -> None:
    with pytest.raises(
        AuthoringError,
        match=r"run\.log: the engine cannot index it as plaintext: "
        r"ValueError: tokenizer rejects the text",
    ):
        plan_add(
            [documents / "run.log"],
            tmp_path / "t.jsonl",
            FixtureSet((), ""),
            lambda _: FailingEngine(),
        )


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    target = tmp_path / "docs.jsonl"
    lines = [
        entry_line(
            "md_001",
            "# Pool\n\nSet `max_idle` to 8 for the proxy.\n",
            [
                {
                    "case_id": "md_001_q1",
                    "query": "max idle",
                    "needles": ["`max_idle` to 8"],
                    "expected_layer": "rrf(porter+trigram)",
                    "expected_rank_ceiling": 3,
                }
            ],
        ),
        entry_line(
            "md_002", "# Replicas\n\nReplica lag above 30 s pages the on-call proxy owner.\n"
        ),
        entry_line("md_003", "# Backups\n\nNightly backups keep 14 days for the proxy fleet.\n"),
    ]
    target.write_text("\n".join(lines) + "\n")
    return target


def test_case_runs_the_query_and_appends_the_next_case(bench: Path) -> None:
    before = bench.read_bytes().splitlines(keepends=True)
    draft = plan_case(
        bench, "md_001", "idle proxy", ["`max_idle` to 8"], fixture_set(bench), builtin
    )
    assert draft.case_id == "md_001_q2"
    assert (draft.probe.record.rank, draft.probe.record.layer) == (1, "rrf(porter+trigram)")
    assert draft.probe.record.passed
    assert bench.read_bytes().splitlines(keepends=True) == before  # written only when asked
    assert write_case(bench, draft) == "md_001_q2"
    after = bench.read_bytes().splitlines(keepends=True)
    assert after[1:] == before[1:]
    case = json.loads(after[0])["cases"][1]
    assert case == {
        "case_id": "md_001_q2",
        "query": "idle proxy",
        "needles": ["`max_idle` to 8"],
        "expected_layer": "rrf(porter+trigram)",
        "expected_rank_ceiling": 3,
    }


def test_case_records_the_given_ceiling_and_layer_even_when_they_fail(bench: Path) -> None:
    draft = plan_case(
        bench,
        "md_002",
        "replica lag",
        ["Replica lag above 30 s"],
        fixture_set(bench),
        builtin,
        ceiling=1,
        layer="trigram",
    )
    assert draft.case_id == "md_002_q1"
    assert [f.type for f in draft.probe.record.failures] == ["layer"]
    assert draft.case_json["expected_layer"] == "trigram"


@pytest.mark.parametrize(
    ("entry_id", "needle", "reason"),
    [
        ("md_002", "`max_idle` to 8", "is not in the haystack of entry md_002"),
        ("md_002", "proxy", "also occurs in md_001, md_003: a result from there would count"),
        ("md_009", "proxy", "no entry 'md_009' (entries: md_001, md_002, md_003)"),
    ],
)
def test_case_refuses_a_misplaced_needle(
    bench: Path, entry_id: str, needle: str, reason: str
) -> None:
    with pytest.raises(AuthoringError, match=re.escape(reason)):
        plan_case(bench, entry_id, "proxy", [needle], fixture_set(bench), builtin)


def test_negative_case_sharing_trigrams_is_refused(bench: Path) -> None:
    with pytest.raises(
        AuthoringError, match=r"shares 1 trigram\(s\) with the corpus: 'rox' \(md_001\)"
    ):
        plan_case(bench, "md_003", "qqrox", [], fixture_set(bench), builtin, negative=True)


def test_negative_case_the_engine_answers_is_refused(bench: Path) -> None:
    with pytest.raises(AuthoringError, match=r"returns 3 result\(s\) from the engine"):
        plan_case(
            bench,
            "md_003",
            "xuakxyph",
            [],
            fixture_set(bench),
            lambda _: EchoEngine(),
            negative=True,
        )


def test_negative_case_gets_the_negative_id(bench: Path) -> None:
    draft = plan_case(
        bench, "md_003", "xuakxyph zyivke", [], fixture_set(bench), builtin, negative=True
    )
    assert draft.case_id == "md_003_q_neg"
    write_case(bench, draft)
    assert json.loads(bench.read_bytes().splitlines()[2])["cases"] == [
        {
            "case_id": "md_003_q_neg",
            "query": "xuakxyph zyivke",
            "needles": [],
            "expected_layer": "none",
            "expected_rank_ceiling": 0,
        }
    ]


def test_show_marks_the_needle_and_states_each_check(bench: Path) -> None:
    lines, passed = show_lines(fixture_set(bench), "md_001_q1", builtin, 10)
    assert passed
    text = "\n".join(lines)
    assert lines[0] == "md_001_q1 [markdown] docs.jsonl:1 (entry md_001)"
    assert ">>>`max_idle` to 8<<<" in text
    assert "  needles  pass  1 of 1 needles found" in lines
    assert "  rank     pass  rank 1 <= ceiling 3" in lines
    assert "None" not in text


def test_show_suggests_close_case_ids(bench: Path) -> None:
    with pytest.raises(AuthoringError, match="did you mean md_001_q1"):
        show_lines(fixture_set(bench), "md_001_q11", builtin, 10)


def test_no_entry_lists_every_id_of_a_short_file_and_counts_a_long_one() -> None:
    ids = [f"md_{number:03}" for number in range(1, 8)]
    assert listed(ids) == f"entries: {', '.join(ids)}"
    many = [f"md_{number:03}" for number in range(1, 24)]
    assert listed(many) == (
        "23 entries: md_001, md_002, md_003, md_004, md_005, md_006, md_007, md_008, md_009, "
        "md_010, ... and 13 more"
    )
    assert listed([]) == "the file has no entries"
