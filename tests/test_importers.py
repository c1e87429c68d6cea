"""Importers: BEIR and TREC collections become fixtures, graded by entry or by needles."""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import ir_measures
import pytest
from ir_measures import nDCG

from pytest_qualbench.authoring.collections import (
    Collection,
    CollectionError,
    Document,
    Judgment,
    Query,
    read_beir,
    read_trec,
)
from pytest_qualbench.authoring.importing import (
    build_fixtures,
    summary_lines,
    unique_needle,
    write_fixtures,
)
from pytest_qualbench.authoring.lint import lint_fixture_set, words
from pytest_qualbench.cli.qualbench import main
from pytest_qualbench.engine import ALL_KINDS, Chunk, Engine, Result, SearchEngine
from pytest_qualbench.evaluation.runner import BenchRun
from pytest_qualbench.fixtures.loading import load_fixture_set
from pytest_qualbench.fixtures.schema import Entry, FixtureSet

COLLECTION = Path(__file__).parent / "data" / "ir_collection"
TREC = COLLECTION / "trec"


def trec_collection() -> Collection:
    return read_trec([TREC / "documents"], TREC / "topics.txt", TREC / "qrels.txt")


CaseRow = tuple[str, str, list[str]]


def cases_by_entry(entries: tuple[dict[str, Any], ...]) -> dict[str, list[CaseRow]]:
    return {
        entry["id"]: [(c["case_id"], c["query"], c["needles"]) for c in entry["cases"]]
        for entry in entries
        if entry["cases"]
    }


def needle_for(haystacks: list[str], position: int) -> str | None:
    frequency: Counter[str] = Counter()
    for haystack in haystacks:
        frequency.update(set(words(haystack)))
    return unique_needle(position, haystacks, frequency)


def test_read_beir_keeps_file_order_and_joins_title_and_text() -> None:
    collection = read_beir(COLLECTION)
    assert len(collection.documents) == 15
    assert collection.documents[1] == Document(
        "d2",
        "Crema",
        "Crema is the reddish-brown foam on top of a fresh espresso shot, "
        "made of emulsified oils and carbon dioxide.",
    )
    assert collection.documents[1].haystack.startswith("Crema\nCrema is the reddish-brown")
    assert collection.queries[0] == Query("q1", "espresso pressure and crema")
    assert len(collection.queries) == 13
    assert collection.judgments[:2] == (Judgment("q1", "d1", 2), Judgment("q1", "d2", 1))
    assert len(collection.judgments) == 19


def test_beir_import_attaches_each_query_to_its_first_relevant_document() -> None:
    outcome = build_fixtures(read_beir(COLLECTION), name="coffee", needles=True)
    assert cases_by_entry(outcome.entries) == {
        "coffee_d1": [
            ("coffee_d1_q1", "espresso pressure and crema", ["extraction", "emulsified"])
        ],
        "coffee_d3": [
            ("coffee_d3_q1", "coffee to water ratio for pour over", ["gooseneck"]),
            ("coffee_d3_q2", "gooseneck kettle pour", ["gooseneck"]),
        ],
        "coffee_d4": [("coffee_d4_q1", "cold brew steeping time", ["concentrate", "chilled"])],
        "coffee_d7": [("coffee_d7_q1", "green tea brewing", ["scorches", "whisked", "oxidation"])],
        "coffee_d10": [
            ("coffee_d10_q1", "remove limescale from kettle", ["Descaling"]),
            ("coffee_d10_q2", "espresso machine maintenance", ["Descaling"]),
        ],
        "coffee_d14": [
            ("coffee_d14_q1", "decaffeination without chemicals", ["caffeine"]),
            ("coffee_d14_q2", "water temperature", ["caffeine"]),
        ],
    }
    assert outcome.cases == 9


def test_beir_import_counts_what_it_dropped_and_why() -> None:
    outcome = build_fixtures(read_beir(COLLECTION), name="coffee", needles=True)
    # q6 judged 0, q10 unjudged; q7 only names d99; q8 names d12, which d13 duplicates.
    assert outcome.dropped_queries == (
        ("no relevant document", 2),
        ("unknown document id", 1),
        ("no unique needle possible", 1),
    )
    assert outcome.dropped_judgments == (
        ("duplicate judgment", 1),
        ("unknown query id", 1),
        ("below the relevance threshold", 2),
        ("unknown document id", 1),
        ("no unique needle possible", 1),
    )
    assert (outcome.queries_total, outcome.judgments_total) == (13, 19)


def test_every_document_is_an_entry_with_its_source() -> None:
    outcome = build_fixtures(
        read_beir(COLLECTION), name="coffee", needles=True, content_type="curated"
    )
    assert len(outcome.entries) == 15
    assert outcome.entries[0] == {
        "id": "coffee_d1",
        "content_type": "curated",
        "haystack": "Espresso extraction\nEspresso forces water at about nine bars of pressure "
        "through finely ground coffee. A standard double shot extracts in "
        "twenty-five to thirty seconds.",
        "source_label": "coffee:d1",
        "source_kind": "durable",
        "cases": [
            {
                "case_id": "coffee_d1_q1",
                "query": "espresso pressure and crema",
                "needles": ["extraction", "emulsified"],
                "expected_layer": "rrf(porter+trigram)",
                "expected_rank_ceiling": 0,
            }
        ],
        "metadata": {"doc_id": "d1", "query_ids": ["q1"]},
    }
    assert outcome.entries[1]["metadata"] == {"doc_id": "d2"}


def test_every_needle_is_in_exactly_one_haystack() -> None:
    outcome = build_fixtures(read_beir(COLLECTION), name="coffee", needles=True)
    needles = [n for entry in outcome.entries for c in entry["cases"] for n in c["needles"]]
    holders = {n: [e["id"] for e in outcome.entries if n in e["haystack"]] for n in needles}
    assert all(len(ids) == 1 for ids in holders.values()), holders


def test_relevance_threshold_decides_which_documents_count() -> None:
    outcome = build_fixtures(read_beir(COLLECTION), name="coffee", needles=True, min_relevance=2)
    assert cases_by_entry(outcome.entries) == {
        "coffee_d1": [("coffee_d1_q1", "espresso pressure and crema", ["extraction"])],
        "coffee_d6": [("coffee_d6_q1", "cold brew steeping time", ["chilled"])],
    }


@pytest.mark.parametrize("ceiling", [0, 10])
def test_rank_ceiling_is_set_on_every_case(ceiling: int) -> None:
    outcome = build_fixtures(
        read_beir(COLLECTION), name="coffee", needles=True, rank_ceiling=ceiling
    )
    assert {c["expected_rank_ceiling"] for e in outcome.entries for c in e["cases"]} == {ceiling}


def test_duplicate_document_ids_are_refused() -> None:
    twice = Document("a", "", "same id")
    with pytest.raises(CollectionError, match="duplicate document id 'a'"):
        build_fixtures(Collection((twice, twice), (), ()), name="x", needles=True)


def test_needle_is_the_shortest_unique_window_around_the_rarest_word() -> None:
    haystacks = [
        "Tuning notes: the replica lag alarm fires now.",
        "Tuning notes: the replica lag alarm fires later.",
        "Tuning notes for the primary.",
    ]
    # "now" is the rarest word but too short a needle; the shortest window around it is
    # "fires now". "primary" is rare and long enough on its own.
    assert needle_for(haystacks, 0) == "fires now"
    assert needle_for(haystacks, 2) == "primary"


def test_needle_is_verified_as_a_substring_not_just_a_rare_word() -> None:
    # "Pooling" is a word of the first document only, but a substring of "Poolingcheck" in
    # the second: the needle must grow until no other haystack holds it.
    haystacks = ["Pooling here.", "Poolingcheck here too."]
    assert needle_for(haystacks, 0) == "Pooling here"


def test_needle_never_crosses_a_line() -> None:
    haystacks = ["Alpha beta\ngamma delta", "Alpha beta gamma", "delta"]
    # "gamma delta" would be unique, but within one line; "Alpha beta\ngamma" crosses a line.
    assert needle_for(haystacks, 0) == "gamma delta"


def test_duplicate_documents_have_no_needle() -> None:
    assert needle_for(["Same words here.", "Same words here."], 0) is None


def test_read_trec_documents_topics_and_qrels() -> None:
    collection = trec_collection()
    assert [d.doc_id for d in collection.documents] == [f"AST-00{n}" for n in range(1, 7)]
    assert collection.documents[5] == Document(
        "AST-006", "", "Mars appears red because iron minerals in its dust and rocks have oxidized."
    )
    assert collection.queries == (
        Query("301", "eclipses of the sun and moon"),
        Query("302", "why is mars red"),
        Query("303", "comets"),
    )
    assert collection.judgments[1] == Judgment("301", "AST-005", 2)


def test_trec_import() -> None:
    outcome = build_fixtures(trec_collection(), name="ast", needles=True)
    assert cases_by_entry(outcome.entries) == {
        "ast_AST-002": [("ast_AST-002_q1", "eclipses of the sun and moon", ["surface", "coppery"])],
        "ast_AST-006": [("ast_AST-006_q1", "why is mars red", ["minerals"])],
    }
    assert outcome.dropped_queries == (("no relevant document", 1),)
    assert outcome.dropped_judgments == (("below the relevance threshold", 2),)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ('{"_id": "d1", "text": "ok"}\n{"_id": "d2", "text":\n', "corpus.jsonl:2: Expecting value"),
        ('{"_id": "d1"}\n', "corpus.jsonl:1: field 'text' is missing or not a string"),
        ('["d1", "text"]\n', "corpus.jsonl:1: expected a JSON object"),
    ],
)
def test_broken_beir_corpus_lines_are_located(tmp_path: Path, lines: str, message: str) -> None:
    beir_copy(tmp_path)
    (tmp_path / "corpus.jsonl").write_text(lines, encoding="utf-8")
    with pytest.raises(CollectionError, match=message):
        read_beir(tmp_path)


def test_non_integer_relevance_is_located(tmp_path: Path) -> None:
    beir_copy(tmp_path)
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\thigh\n")
    with pytest.raises(CollectionError, match=r"test.tsv:2: relevance 'high' is not an integer"):
        read_beir(tmp_path)


def beir_copy(target: Path) -> None:
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        (target / name).parent.mkdir(exist_ok=True)
        (target / name).write_bytes((COLLECTION / name).read_bytes())


def test_cli_beir_import_writes_fixtures_that_load_and_lint_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "coffee.jsonl"
    assert main(["import", "beir", str(COLLECTION), "-o", str(output), "--needles"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"wrote 15 entries with 9 cases to {output}",
        "dropped 4 of 13 queries: 2 no relevant document, 1 unknown document id, "
        "1 no unique needle possible",
        "dropped 6 of 19 judgments: 1 duplicate judgment, 1 unknown query id, "
        "2 below the relevance threshold, 1 unknown document id, 1 no unique needle possible",
    ]
    fixture_set = load_fixture_set([output], tmp_path)
    assert fixture_set.errors() == ()
    assert [e.id for e in fixture_set.entries()][:2] == ["coffee_d1", "coffee_d2"]
    assert len(fixture_set.cases()) == 9
    assert lint_fixture_set(fixture_set) == []


def test_cli_trec_import_with_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "out.jsonl"
    status = main(
        [
            "import",
            "trec",
            "--docs",
            str(TREC / "documents" / "ast01.sgml"),
            str(TREC / "documents" / "ast02.sgml"),
            "--topics",
            str(TREC / "topics.txt"),
            "--qrels",
            str(TREC / "qrels.txt"),
            "-o",
            str(output),
            "--name",
            "astro",
            "--needles",
            "--min-relevance",
            "2",
            "--rank-ceiling",
            "10",
            "--content-type",
            "transcript",
        ]
    )
    assert status == 0
    assert capsys.readouterr().out.splitlines()[0] == f"wrote 6 entries with 1 cases to {output}"
    rows = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    assert [c for row in rows for c in row["cases"]] == [
        {
            "case_id": "astro_AST-005_q1",
            "query": "eclipses of the sun and moon",
            "needles": ["coppery"],
            "expected_layer": "rrf(porter+trigram)",
            "expected_rank_ceiling": 10,
        }
    ]
    assert {row["content_type"] for row in rows} == {"transcript"}
    assert load_fixture_set([output], tmp_path).errors() == ()


def test_cli_import_of_a_broken_collection_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    beir_copy(tmp_path)
    (tmp_path / "queries.jsonl").write_text("not json\n", encoding="utf-8")
    output = tmp_path / "out.jsonl"
    assert main(["import", "beir", str(tmp_path), "-o", str(output)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"qualbench import beir: {tmp_path}/queries.jsonl:1: ")
    assert not output.exists()


class OverlapEngine:
    """Ranks chunks (one per blank-line paragraph) by how many query words they contain."""

    def index(self, entries: Sequence[Entry]) -> None:
        self._chunks = [
            Chunk(text, "", entry.source_label, entry.source_kind, position, entry.id)
            for entry in entries
            for position, text in enumerate(entry.haystack.split("\n\n"))
        ]

    def chunks(self) -> tuple[Chunk, ...]:
        return tuple(self._chunks)

    def search(self, query: str, *, limit: int = 10, kinds: Iterable[str] = ()) -> list[Result]:
        query_words = set(words(query))
        scored = [(len(query_words & set(words(c.text))), c) for c in self._chunks]
        ranked = sorted((s for s in scored if s[0]), key=lambda s: (-s[0], s[1].source))
        return [Result(c.text, "porter", source=c.source, score=float(n)) for n, c in ranked][
            :limit
        ]


def binary_qrels(path: Path, min_relevance: int) -> list[ir_measures.Qrel]:
    """The qrels file read on its own terms (not by the importer), grades made binary."""
    rows = list(csv.reader(path.read_text(encoding="utf-8").splitlines(), delimiter="\t"))[1:]
    return [ir_measures.Qrel(q, d, int(int(grade) >= min_relevance)) for q, d, grade in rows]


def ir_measures_ndcg(
    fixture_set: FixtureSet, engine: SearchEngine, query_ids: Sequence[str]
) -> dict[str, float]:
    """nDCG@10 by ir-measures over the engine's document ranking and the raw qrels."""
    ranking: list[ir_measures.ScoredDoc] = []
    for entry in fixture_set.entries():
        for case, query_id in zip(entry.cases, entry.metadata.get("query_ids", []), strict=True):
            results = engine.search(case.query, limit=10, kinds=ALL_KINDS)
            doc_ids = [result.source.removeprefix("coffee:") for result in results]
            assert len(set(doc_ids)) == len(doc_ids), "one chunk per document"
            ranking += [ir_measures.ScoredDoc(query_id, d, 10.0 - r) for r, d in enumerate(doc_ids)]
    qrels = binary_qrels(COLLECTION / "qrels" / "test.tsv", 1)
    qrels = [qrel for qrel in qrels if qrel.query_id in query_ids]
    # ir-measures leaves out a query with no results; its nDCG is 0.
    values = {query_id: 0.0 for query_id in query_ids}
    values |= {m.query_id: m.value for m in ir_measures.iter_calc([nDCG @ 10], qrels, ranking)}
    return values


@pytest.mark.parametrize("engine_factory", [Engine, OverlapEngine], ids=["built-in", "overlap"])
def test_round_trip_ndcg_equals_ir_measures_over_the_same_ranking(
    tmp_path: Path, engine_factory: Callable[[], SearchEngine]
) -> None:
    output = tmp_path / "coffee.jsonl"
    assert main(["import", "beir", str(COLLECTION), "-o", str(output), "--needles"]) == 0
    fixture_set = load_fixture_set([output], tmp_path)
    run = BenchRun(fixture_set, engine_factory=lambda content_type: engine_factory(), limit=10)
    ours = {
        query_id: run.run_case(case).metrics["ndcg@10"]
        for entry in fixture_set.entries()
        for case, query_id in zip(entry.cases, entry.metadata.get("query_ids", []), strict=True)
    }
    theirs = ir_measures_ndcg(fixture_set, run.corpus("plaintext").engine, list(ours))
    assert ours == pytest.approx(theirs, abs=1e-12)
    assert len(ours) == 9
    assert any(0.0 < value < 1.0 for value in theirs.values()), theirs


def test_imported_collection_runs_end_to_end_and_its_report_agrees_with_ir_measures(
    pytester: pytest.Pytester,
) -> None:
    fixtures = pytester.path / "bench_fixtures"
    fixtures.mkdir()
    assert (
        main(["import", "beir", str(COLLECTION), "-o", str(fixtures / "coffee.jsonl"), "--needles"])
        == 0
    )
    result = pytester.runpytest("--qualbench", "--qualbench-report=report.json")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 9
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    fixture_set = load_fixture_set([fixtures / "coffee.jsonl"], pytester.path)
    query_of_case = {
        case.case_id: query_id
        for entry in fixture_set.entries()
        for case, query_id in zip(entry.cases, entry.metadata.get("query_ids", []), strict=True)
    }
    ours = {query_of_case[c["case_id"]]: c["metrics"]["ndcg@10"] for c in report["cases"]}
    engine = Engine()
    engine.index(fixture_set.entries("plaintext"))
    assert ours == pytest.approx(ir_measures_ndcg(fixture_set, engine, list(ours)), abs=1e-12)


def test_graded_import_keeps_every_grade_as_relevant(tmp_path: Path) -> None:
    outcome = build_fixtures(read_beir(COLLECTION), name="coffee")
    cases = {c["case_id"]: c for entry in outcome.entries for c in entry["cases"]}
    # q1's grades 2, 1 and 0 as the qrels give them; the case sits on its first relevant doc.
    assert cases["coffee_d1_q1"]["relevant"] == {"coffee_d1": 2, "coffee_d2": 1, "coffee_d5": 0}
    assert cases["coffee_d4_q1"]["relevant"] == {"coffee_d4": 1, "coffee_d6": 2}
    assert all("needles" not in case for case in cases.values())
    # No needle is needed, so the documents without a unique one (d14) keep their queries.
    assert len(cases) == 10
    assert summary_lines(outcome, tmp_path / "x.jsonl")[1:] == [
        "dropped 3 of 13 queries: 2 no relevant document, 1 unknown document id",
        "dropped 3 of 19 judgments: 1 duplicate judgment, 1 unknown query id, "
        "1 unknown document id",
    ]
    output = tmp_path / "coffee.jsonl"
    write_fixtures(outcome.entries, output)
    fixture_set = load_fixture_set([output], tmp_path)
    assert fixture_set.errors() == ()
    assert lint_fixture_set(fixture_set) == []


def test_min_relevance_without_needles_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "out.jsonl"
    status = main(["import", "beir", str(COLLECTION), "-o", str(output), "--min-relevance", "2"])
    assert status == 2
    assert "--min-relevance applies to --needles" in capsys.readouterr().err
    assert not output.exists()


def test_import_makes_the_output_folder_and_the_file_loads(tmp_path: Path) -> None:
    # `qualbench add --to` makes a missing folder; import did not (a FileNotFoundError
    # traceback from jsonlines).
    output = tmp_path / "new" / "folder" / "coffee.jsonl"
    collection = Path(__file__).parent / "data" / "ir_collection"
    assert main(["import", "beir", str(collection), "-o", str(output)]) == 0
    fixture_set = load_fixture_set([output], tmp_path)
    assert fixture_set.errors() == ()
    assert any(case.relevant for case in fixture_set.cases())
