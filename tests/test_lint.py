"""The fixture linter: each trap on a purpose-built fixture, and the `qualbench lint` command."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_qualbench.authoring.lint import (
    ERROR,
    WARNING,
    LintFinding,
    exit_status,
    lint_fixture_set,
)
from pytest_qualbench.cli.qualbench import main
from pytest_qualbench.engine.types import Result
from pytest_qualbench.fixtures.loading import load_fixture_set
from pytest_qualbench.fixtures.schema import Entry, FixtureSet
from tests.conftest import case, entry, jsonl

# Ten distinct plaintext haystacks: enough entries that the corpus-size check stays quiet.
TOPICS = (
    "Connection pooling keeps sockets open between requests to the database server.",
    "The garbage collector reclaims unreachable objects during quiet periods.",
    "Backpressure slows producers when the consumer queue grows beyond its watermark.",
    "Checksums detect corrupted blocks before replication copies them elsewhere.",
    "Feature flags let operators disable a risky rollout without redeploying.",
    "Lexicographic ordering of tombstones decides which deletion wins a merge.",
    "Kerberos tickets expire after ten hours unless the renewal daemon refreshes them.",
    "Quantization shrinks embedding vectors to eight bits with little recall loss.",
    "Idempotency keys make retried payments safe against double charging.",
    "Sharding splits the keyspace so that each node owns a contiguous hash range.",
)
NEEDLES = (
    "Connection pooling",
    "garbage collector",
    "Backpressure",
    "Checksums",
    "Feature flags",
    "Lexicographic ordering",
    "Kerberos tickets",
    "Quantization",
    "Idempotency keys",
    "Sharding",
)


def clean_entries(prefix: str = "pt", content_type: str = "plaintext") -> list[dict[str, Any]]:
    return [
        entry(
            f"{prefix}_{n:03}",
            topic,
            [case(f"{prefix}_{n:03}_q1", needle.lower(), [needle], ceiling=0)],
            content_type=content_type,
        )
        for n, (topic, needle) in enumerate(zip(TOPICS, NEEDLES, strict=True), start=1)
    ]


def write_jsonl(path: Path, entries: Sequence[dict[str, Any]]) -> Path:
    path.write_text(jsonl(entries), encoding="utf-8")
    return path


def load(tmp_path: Path, *files: tuple[str, list[dict[str, Any]]]) -> FixtureSet:
    paths = [write_jsonl(tmp_path / name, entries) for name, entries in files]
    return load_fixture_set(paths, tmp_path)


def messages(findings: Sequence[LintFinding], level: str | None = None) -> list[str]:
    return [f.message for f in findings if level is None or f.level == level]


def test_a_clean_fixture_set_has_no_findings(tmp_path: Path) -> None:
    entries = clean_entries()
    entries[0]["cases"].append(case("pt_001_q_neg", "zqxjv wvmbkp", []))
    assert lint_fixture_set(load(tmp_path, ("a.jsonl", entries))) == []


def test_finding_renders_as_file_line_level_message() -> None:
    finding = LintFinding("bench/a.jsonl", 7, WARNING, "case x_q1: needle 'ab' is short")
    assert str(finding) == "bench/a.jsonl:7: warning: case x_q1: needle 'ab' is short"


def test_needle_missing_from_its_haystack_is_an_error_at_the_entry_line(tmp_path: Path) -> None:
    entries = clean_entries()
    entries[3]["cases"][0]["needles"] = ["Checksums", "checksum drift"]
    findings = lint_fixture_set(load(tmp_path, ("a.jsonl", entries)))
    assert findings == [
        LintFinding(
            "a.jsonl",
            4,
            ERROR,
            "case pt_004_q1: needle 'checksum drift' is not in the haystack of entry pt_004 "
            "nor of any other plaintext entry",
        )
    ]


def test_needle_match_is_case_sensitive_like_relevance(tmp_path: Path) -> None:
    entries = clean_entries()
    entries[0]["cases"][0]["needles"] = ["connection pooling"]
    assert messages(lint_fixture_set(load(tmp_path, ("a.jsonl", entries))), ERROR) == [
        "case pt_001_q1: needle 'connection pooling' is not in the haystack of entry pt_001 "
        "nor of any other plaintext entry"
    ]


def test_a_needle_may_point_at_one_other_entry_when_the_case_is_anchored(tmp_path: Path) -> None:
    # Several relevant documents, as an imported collection has them: one needle here,
    # one in exactly one other entry.
    entries = clean_entries()
    entries[0]["cases"][0]["needles"] = ["Connection pooling", "Sharding"]
    assert lint_fixture_set(load(tmp_path, ("a.jsonl", entries))) == []


def test_a_case_with_no_needle_in_its_own_haystack_is_an_error(tmp_path: Path) -> None:
    entries = clean_entries()
    entries[0]["cases"][0]["needles"] = ["Sharding"]
    assert messages(lint_fixture_set(load(tmp_path, ("a.jsonl", entries)))) == [
        "case pt_001_q1: needle 'Sharding' is not in the haystack of entry pt_001 (only in "
        "pt_010), and no other needle of the case is"
    ]


def test_a_needle_pointing_at_several_other_entries_is_a_warning(tmp_path: Path) -> None:
    entries = clean_entries()
    entries[0]["cases"][0]["needles"] = ["Connection pooling", "Kerberos"]
    entries[5]["haystack"] += " Kerberos realms merge too."
    assert messages(lint_fixture_set(load(tmp_path, ("a.jsonl", entries)))) == [
        "case pt_001_q1: needle 'Kerberos' is not in the haystack of entry pt_001 and occurs in "
        "pt_006, pt_007"
    ]


def test_loader_errors_become_error_findings(tmp_path: Path) -> None:
    first = clean_entries()
    second = [entry("pt_001", "A second entry reusing an id.")]
    typo = {**case("pt_002_q1", "gc", ["garbage collector"]), "neeldes": []}
    first[1]["cases"] = [typo]
    fixture_set = load(tmp_path, ("a.jsonl", first), ("b.jsonl", second))
    errors = [str(f) for f in lint_fixture_set(fixture_set) if f.level == ERROR]
    assert errors == [
        "a.jsonl:2: error: cases[0].neeldes: unknown field (did you mean 'needles'?)",
        "b.jsonl:1: error: id: duplicate id 'pt_001' (first at a.jsonl:1)",
    ]


def test_duplicate_case_id_across_files_is_an_error(tmp_path: Path) -> None:
    reused = case("pt_010_q1", "sharding", ["rebalancing"])
    extra = entry("extra_001", "Sharding and rebalancing.", [reused])
    fixture_set = load(tmp_path, ("a.jsonl", clean_entries()), ("b.jsonl", [extra]))
    assert messages(lint_fixture_set(fixture_set), ERROR) == [
        "case_id: duplicate case_id 'pt_010_q1' (first at a.jsonl:10)"
    ]


def test_needle_found_in_other_entries_names_them(tmp_path: Path) -> None:
    entries = clean_entries()
    for shared in entries[:8]:
        shared["haystack"] += " Retry budget applies."
    entries[0]["cases"][0]["needles"] = ["Retry budget"]
    assert messages(lint_fixture_set(load(tmp_path, ("a.jsonl", entries)))) == [
        "case pt_001_q1: needle 'Retry budget' also occurs in "
        "pt_002, pt_003, pt_004, pt_005, pt_006 and 2 more"
    ]


def test_short_needle_is_a_warning(tmp_path: Path) -> None:
    entries = clean_entries()
    entries[7]["cases"][0]["needles"] = ["Quantization", " bit"]
    assert messages(lint_fixture_set(load(tmp_path, ("a.jsonl", entries)))) == [
        "case pt_008_q1: needle ' bit' is shorter than 4 characters"
    ]


def test_needles_in_other_content_types_do_not_count(tmp_path: Path) -> None:
    markdown = clean_entries("md", "markdown")
    fixture_set = load(tmp_path, ("a.jsonl", clean_entries()), ("b.jsonl", markdown))
    assert lint_fixture_set(fixture_set) == []


def test_common_english_word_needle_is_a_warning(tmp_path: Path) -> None:
    entries = clean_entries()
    entries[4]["cases"][0]["needles"] = ["Feature flags", "without"]
    assert messages(lint_fixture_set(load(tmp_path, ("a.jsonl", entries)))) == [
        "case pt_005_q1: needle 'without' is a common English word"
    ]


def test_thin_content_type_is_a_warning_at_its_first_entry(tmp_path: Path) -> None:
    fixture_set = load(tmp_path, ("a.jsonl", clean_entries()[:9]))
    assert [str(f) for f in lint_fixture_set(fixture_set)] == [
        "a.jsonl:1: warning: content type 'plaintext' has only 9 entries (fewer than 10): "
        "with so few distractors every query ranks well"
    ]


@pytest.mark.parametrize(("ceiling", "warned"), [(0, False), (1, True), (4, True), (5, False)])
def test_json_rank_ceiling_below_five_is_a_warning(
    tmp_path: Path, ceiling: int, warned: bool
) -> None:
    entries = clean_entries("js", "json")
    entries[0]["cases"][0]["expected_rank_ceiling"] = ceiling
    expected = [
        f"case js_001_q1: rank ceiling {ceiling} is below 5 for a json case: the key-path chunks "
        "of one document rank close together (use 0 or 5+)"
    ]
    found = messages(lint_fixture_set(load(tmp_path, ("a.jsonl", entries))))
    assert found == (expected if warned else [])


def test_rank_ceiling_below_five_is_fine_for_other_content_types(tmp_path: Path) -> None:
    entries = clean_entries()
    entries[0]["cases"][0]["expected_rank_ceiling"] = 1
    assert lint_fixture_set(load(tmp_path, ("a.jsonl", entries))) == []


@pytest.mark.parametrize(
    ("case_id", "needles", "expected"),
    [
        ("pt_001_q2", ["Connection pooling"], None),
        ("pt_001_q_neg", [], None),
        ("pt_001_q_neg2", [], None),
        ("pt_001_first", ["Connection pooling"], "pt_001_q<N>"),
        ("pt_002_q2", ["Connection pooling"], "pt_001_q<N>"),
        ("pt_001_q_neg", ["Connection pooling"], "pt_001_q<N>"),
        ("pt_001_q3", [], "pt_001_q_neg"),
    ],
)
def test_case_id_convention(
    tmp_path: Path, case_id: str, needles: list[str], expected: str | None
) -> None:
    entries = clean_entries()
    entries[0]["cases"].append(case(case_id, "zqxjv", needles))
    found = messages(lint_fixture_set(load(tmp_path, ("a.jsonl", entries))))
    wanted = [f"case {case_id}: case_id does not follow the convention {expected!r}"]
    assert found == (wanted if expected else [])


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("Kerberos", "query word 'kerberos' occurs in the corpus"),
        (
            "zqxjv connect",
            "query word 'connect' shares all its trigrams with corpus word "
            "'connection' (trigram layer)",
        ),
        (
            "zqxjv conection",
            "query word 'conection' is within edit distance 1 of corpus word "
            "'connection' (fuzzy layer)",
        ),
        (
            "zqxjv kerberso",
            "query word 'kerberso' is within edit distance 2 of corpus word "
            "'kerberos' (fuzzy layer)",
        ),
    ],
)
def test_negative_query_matching_corpus_vocabulary_shows_the_word(
    tmp_path: Path, query: str, reason: str
) -> None:
    entries = clean_entries()
    entries[0]["cases"].append(case("pt_001_q_neg", query, []))
    found = messages(lint_fixture_set(load(tmp_path, ("a.jsonl", entries))))
    assert found == [f"negative case pt_001_q_neg: {reason}"]


def test_fuzzy_tie_prefers_the_more_frequent_word_then_alphabetical(tmp_path: Path) -> None:
    entries = clean_entries()
    entries[0]["haystack"] += " A bolt. A colt."
    entries[1]["haystack"] += " A colt. A wisp."
    entries[2]["haystack"] += " A lisp."
    entries[0]["cases"].append(case("pt_001_q_neg", "xolt", []))
    entries[1]["cases"].append(case("pt_002_q_neg", "jisp", []))
    found = messages(lint_fixture_set(load(tmp_path, ("a.jsonl", entries))))
    assert found == [
        "negative case pt_001_q_neg: query word 'xolt' is within edit distance 1 of corpus word "
        "'colt' (fuzzy layer)",
        "negative case pt_002_q_neg: query word 'jisp' is within edit distance 1 of corpus word "
        "'lisp' (fuzzy layer)",
    ]


def test_short_query_words_are_not_matched(tmp_path: Path) -> None:
    entries = clean_entries()
    entries[0]["cases"].append(case("pt_001_q_neg", "to at zqxjv", []))
    assert lint_fixture_set(load(tmp_path, ("a.jsonl", entries))) == []


class StandInEngine:
    """Returns every indexed haystack that contains a query word: enough to answer negatives."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []

    def index(self, entries: Sequence[Entry]) -> None:
        self.entries = list(entries)

    def search(self, query: str, *, limit: int = 10, kinds: Iterable[str] = ()) -> list[Result]:
        words = query.lower().split()
        hits = [e for e in self.entries if any(w in e.haystack.lower() for w in words)]
        results = [Result(text=e.haystack, layer="porter", source=e.source_label) for e in hits]
        return results[:limit]


def test_negative_query_the_engine_answers_is_a_warning(tmp_path: Path) -> None:
    entries = clean_entries() + clean_entries("md", "markdown")
    entries[0]["cases"].append(case("pt_001_q_neg", "zqxjv", []))
    entries[10]["cases"].append(case("md_001_q_neg", "rollout", []))
    made: list[tuple[str, StandInEngine]] = []

    def factory(content_type: str) -> StandInEngine:
        engine = StandInEngine()
        made.append((content_type, engine))
        return engine

    findings = lint_fixture_set(load(tmp_path, ("a.jsonl", entries)), engine_factory=factory)
    assert [content_type for content_type, _ in made] == ["markdown", "plaintext"]
    assert [len(engine.entries) for _, engine in made] == [10, 10]
    assert [str(f) for f in findings] == [
        "a.jsonl:11: warning: negative case md_001_q_neg: query word 'rollout' occurs in the "
        "corpus",
        "a.jsonl:11: warning: negative case md_001_q_neg: the engine returns 1 result(s); first "
        "from layer porter: 'Feature flags let operators disable a risky rollout without '",
    ]


def test_one_engine_per_content_type_serves_every_engine_check(tmp_path: Path) -> None:
    made: list[str] = []

    def factory(content_type: str) -> StandInEngine:
        made.append(content_type)
        return StandInEngine()

    entries = clean_entries() + clean_entries("md", "markdown")
    fixture_set = load(tmp_path, ("a.jsonl", entries))
    # The stand-in lists no chunks: the chunk check is skipped, and nothing is found.
    assert lint_fixture_set(fixture_set, engine_factory=factory) == []
    assert made == ["markdown", "plaintext"]


def test_strict_lint_flags_a_needle_in_the_haystack_but_in_no_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = clean_entries("md", "markdown")
    # Verbatim in the haystack, across the paragraph break the chunker splits at.
    entries[0]["haystack"] = (
        "# Pools\n\nConnection pooling keeps sockets open.\n\n# Reuse\n\nIt saves time."
    )
    entries[0]["cases"][0]["needles"] = ["sockets open.\n\n# Reuse"]
    # Windows line endings inside a needle: the chunker reads them as newlines.
    entries[1]["haystack"] = "# GC\r\n\r\nThe garbage collector\r\nreclaims objects."
    entries[1]["cases"][0]["needles"] = ["collector\r\nreclaims"]
    write_jsonl(tmp_path / "a.jsonl", entries)
    monkeypatch.chdir(tmp_path)
    assert main(["lint", "--strict", "a.jsonl"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert (
        "a.jsonl:1: warning: case md_001_q1: needle 'sockets open.\\n\\n# Reuse' is in the "
        "haystack of md_001 but in no single chunk the engine indexed (it spans chunks, or the "
        "chunker changes its text, e.g. \\r\\n line endings): no result can contain it"
    ) in out
    assert any(
        line.startswith("a.jsonl:2: warning: case md_002_q1: needle 'collector\\r\\nreclaims'")
        for line in out
    ), out
    # The same set without those two needles: nothing of the kind.
    capsys.readouterr()
    write_jsonl(tmp_path / "a.jsonl", clean_entries("md", "markdown"))
    main(["lint", "a.jsonl"])
    assert "no single chunk" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("levels", "strict", "status"),
    [
        ((), False, 0),
        ((), True, 0),
        ((WARNING,), False, 0),
        ((WARNING,), True, 1),
        ((ERROR,), False, 1),
        ((ERROR, WARNING), True, 1),
    ],
)
def test_exit_status(levels: tuple[str, ...], strict: bool, status: int) -> None:
    findings = [LintFinding("a.jsonl", 1, level, "m") for level in levels]
    assert exit_status(findings, strict=strict) == status


def test_findings_are_sorted_by_file_then_line(tmp_path: Path) -> None:
    first = clean_entries()
    first[9]["cases"][0]["needles"] = ["nowhere to be found"]
    first[0]["cases"][0]["needles"] = ["nor here"]
    alone = case("b_001_q1", "alone", ["Alone"], ceiling=0)
    second = [entry("b_001", "Alone in its file.", [alone], content_type="json")]
    findings = lint_fixture_set(load(tmp_path, ("b.jsonl", second), ("a.jsonl", first)))
    assert [(f.path, f.line) for f in findings] == [("a.jsonl", 1), ("a.jsonl", 10), ("b.jsonl", 1)]


def test_cli_lint_prints_findings_and_fails_on_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = clean_entries()
    entries[2]["cases"][0]["needles"] = ["backpressure"]
    (tmp_path / "bench").mkdir()
    write_jsonl(tmp_path / "bench" / "a.jsonl", entries)
    monkeypatch.chdir(tmp_path)
    assert main(["lint", "bench"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "bench/a.jsonl:3: error: case pt_003_q1: needle 'backpressure' is not in the haystack "
        "of entry pt_003 nor of any other plaintext entry",
        "1 error, 0 warnings in 1 file",
    ]


@pytest.mark.parametrize(("arguments", "status"), [([], 0), (["--strict"], 1)])
def test_cli_lint_fails_on_warnings_only_when_strict(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    arguments: list[str],
    status: int,
) -> None:
    (tmp_path / "bench_fixtures").mkdir()
    write_jsonl(tmp_path / "bench_fixtures" / "a.jsonl", clean_entries()[:9])
    monkeypatch.chdir(tmp_path)
    assert main(["lint", *arguments]) == status
    assert capsys.readouterr().out.splitlines()[-1] == "0 errors, 1 warning in 1 file"


def test_cli_lint_without_fixture_files_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["lint", "missing"]) == 2
    assert capsys.readouterr().err == "qualbench lint: no .jsonl fixture files under missing\n"


def test_cli_lint_asks_the_built_in_engine_about_negative_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = clean_entries()
    entries[4]["cases"].append(case("pt_005_q_neg", "rollout", []))
    write_jsonl(tmp_path / "a.jsonl", entries)
    monkeypatch.chdir(tmp_path)
    assert main(["lint", "a.jsonl"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith(
        "a.jsonl:5: warning: negative case pt_005_q_neg: the engine returns 1 result(s); "
        "first from layer rrf(porter+trigram): 'Feature flags"
    )
    assert out[2] == "0 errors, 2 warnings in 1 file"


@pytest.mark.parametrize(
    ("xfail", "warned"),
    [("rank 4", True), ({"reason": "rank 4", "checks": ["rank"]}, False)],
)
def test_an_xfail_naming_no_checks_is_a_warning(tmp_path: Path, xfail: Any, warned: bool) -> None:
    entries = clean_entries()
    entries[0]["cases"][0].update(expected_rank_ceiling=3, xfail=xfail)
    expected = [
        "case pt_001_q1: its xfail names no checks, so any of needles, rank, layer may fail and "
        'it stays a known failure; list the ones it fails today ({"reason": ..., "checks": [...]})'
    ]
    found = messages(lint_fixture_set(load(tmp_path, ("a.jsonl", entries))))
    assert found == (expected if warned else [])


def test_a_bad_xfail_is_a_lint_error_naming_its_field(tmp_path: Path) -> None:
    entries = clean_entries()
    entries[0]["cases"][0]["xfail"] = {"reason": "r", "checks": ["rnak"]}
    found = messages(lint_fixture_set(load(tmp_path, ("a.jsonl", entries))), ERROR)
    assert found == [
        "cases[0].xfail.checks[0]: unknown check 'rnak'; expected one of needles, rank, layer, "
        "negative"
    ]
