"""Hostile fixtures: every broken line is one located error, and the rest still loads and runs.

`BAD_INPUTS` is the table of docs/bad-input.md: the same names and the same
messages, checked both ways by `test_the_doc_lists_every_bad_input_with_its_message`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy  # noqa: F401
import pytest

from pytest_qualbench.fixtures.discovery import dataset_hash
from pytest_qualbench.fixtures.loading import load_fixture_file, load_fixture_set
from tests.conftest import WriteFixture, case, entry, jsonl

# numpy is imported above, at collection, on purpose: the built-in engine imports it
# lazily, pytester's in-process runs drop modules first imported during the run, and
# numpy refuses a second import in one process ("cannot load module more than once").

DOC = Path(__file__).resolve().parent.parent / "docs" / "bad-input.md"


def line(item: Any) -> bytes:
    return json.dumps(item).encode("utf-8") + b"\n"


def good(entry_id: str = "md_001") -> dict[str, Any]:
    return entry(entry_id, "alpha beta", [case(f"{entry_id}_q1", "alpha", ["alpha"])])


def replaced(record: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """`record` with fields replaced in place; a value of ... deletes the field."""
    for name, value in changes.items():
        if value is ...:
            del record[name]
        else:
            record[name] = value
    return record


def with_case(entry_id: str = "md_002", **changes: Any) -> dict[str, Any]:
    """A good entry whose one case has some fields replaced or deleted."""
    broken = good(entry_id)
    replaced(broken["cases"][0], changes)
    return broken


def with_entry(**changes: Any) -> dict[str, Any]:
    """A good entry with some top-level fields replaced or deleted."""
    return replaced(good("md_002"), changes)


def negative(**changes: Any) -> dict[str, Any]:
    broken = entry("md_002", "gamma", [case("md_002_q_neg", "zzyzx", [])])
    broken["cases"][0].update(changes)
    return broken


GOOD = line(good())
TRUNCATED = line(good("md_002"))[:60]
DEEP = b"[" * 100_000 + b"]" * 100_000 + b"\n"


@dataclass(frozen=True)
class BadInput:
    """One row of docs/bad-input.md: files to load, the errors they give, the cases that survive."""

    name: str
    files: dict[str, bytes]
    errors: tuple[str, ...]
    loaded: tuple[str, ...] = ("md_001_q1",)


BAD_INPUTS = [
    BadInput(
        "invalid JSON",
        {"bench.jsonl": GOOD + b"{not json\n"},
        (
            "bench.jsonl:2: json: line contains invalid json: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        ),
    ),
    BadInput(
        "truncated last line",
        {"bench.jsonl": GOOD + TRUNCATED},
        (
            "bench.jsonl:2: json: line contains invalid json: Unterminated string starting at: line 1 column 58 (char 57)",
        ),
    ),
    BadInput("UTF-8 byte order mark", {"bench.jsonl": b"\xef\xbb\xbf" + GOOD}, ()),
    BadInput(
        "non-UTF-8 bytes",
        {"bench.jsonl": GOOD + line(with_entry(haystack="café")).replace(b"\\u00e9", b"\xe9")},
        (
            "bench.jsonl:2: encoding: line is not valid utf-8: 'utf-8' codec can't decode byte 0xe9 in position 61: invalid continuation byte",
        ),
    ),
    BadInput(
        "empty file",
        {"bench.jsonl": GOOD, "empty.jsonl": b""},
        ("empty.jsonl:1: file: no entries: the file is empty",),
    ),
    BadInput(
        "only blank lines",
        {"bench.jsonl": GOOD, "blank.jsonl": b"\n  \n\t\r\n"},
        ("blank.jsonl:1: file: no entries: the file is empty",),
    ),
    BadInput(
        "blank lines between entries",
        {"bench.jsonl": b"\n" + GOOD + b"   \n\n" + b"{oops\n"},
        (
            "bench.jsonl:5: json: line contains invalid json: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        ),
    ),
    BadInput(
        "not an object",
        {"bench.jsonl": GOOD + b"[1, 2]\n" + b"null\n" + b'"text"\n'},
        (
            "bench.jsonl:2: json: expected a JSON object, got array",
            "bench.jsonl:3: json: expected a JSON object, got null",
            "bench.jsonl:4: json: expected a JSON object, got string",
        ),
    ),
    BadInput(
        "nested too deeply",
        {"bench.jsonl": GOOD + DEEP},
        ("bench.jsonl:2: json: line contains invalid json: nested too deeply",),
    ),
    BadInput(
        "repeated key",
        {"bench.jsonl": GOOD + line(with_entry()).replace(b'"cases"', b'"id": "x", "cases"')},
        ("bench.jsonl:2: json: line contains invalid json: duplicate key 'id'",),
    ),
    BadInput(
        "lone surrogate",
        {"bench.jsonl": GOOD + line(with_case(needles=["ok", "\ud800"]))},
        (
            "bench.jsonl:2: cases[0].needles[1]: contains a lone surrogate escape (\\ud800-\\udfff), not valid Unicode",
        ),
    ),
    BadInput(
        "missing entry field",
        {"bench.jsonl": GOOD + line(with_entry(haystack=...))},
        ("bench.jsonl:2: haystack: missing required field",),
    ),
    BadInput(
        "missing case field",
        {"bench.jsonl": GOOD + line(with_case(query=...))},
        ("bench.jsonl:2: cases[0].query: missing required field",),
    ),
    BadInput(
        "misspelled field",
        {"bench.jsonl": GOOD + line(with_case(needles=..., neeldes=["alpha"]))},
        (
            "bench.jsonl:2: cases[0].neeldes: unknown field (did you mean 'needles'?)",
            "bench.jsonl:2: cases[0]: a case needs needles (a list of strings; [] for a negative case) or relevant ({entry_id: grade})",
        ),
    ),
    BadInput(
        "extra field",
        {"bench.jsonl": GOOD + line(with_entry(tags=["x"]))},
        ("bench.jsonl:2: tags: unknown field",),
    ),
    BadInput(
        "odd field name",
        {"bench.jsonl": GOOD + line(with_entry(**{"": 1, "case list": []}))},
        (
            'bench.jsonl:2: "": unknown field',
            "bench.jsonl:2: \"case list\": unknown field (did you mean 'cases'?)",
        ),
    ),
    BadInput(
        "mistyped entry fields",
        {"bench.jsonl": GOOD + line(with_entry(id=7, haystack=None, cases={}, metadata=[]))},
        (
            "bench.jsonl:2: id: expected a non-empty string, got 7",
            "bench.jsonl:2: haystack: expected a string, got null",
            "bench.jsonl:2: cases: expected a list, got object",
            "bench.jsonl:2: metadata: expected an object, got array",
        ),
    ),
    BadInput(
        "blank string field",
        {"bench.jsonl": GOOD + line(with_entry(source_label="  "))},
        ("bench.jsonl:2: source_label: expected a non-empty string, got '  '",),
    ),
    BadInput(
        "control character in an id",
        {"bench.jsonl": GOOD + line(with_case(case_id="md_002_q1\n## Injected"))},
        (
            "bench.jsonl:2: cases[0].case_id: expected no control characters (newline, tab), got 'md_002_q1\\n## Injected'",
        ),
    ),
    BadInput(
        "mistyped rank ceiling",
        {
            "bench.jsonl": GOOD
            + line(with_case(expected_rank_ceiling="3"))
            + line(with_case("md_003", expected_rank_ceiling=1.0))
            + line(with_case("md_004", expected_rank_ceiling=True))
            + line(with_case("md_005", expected_rank_ceiling=-1))
        },
        (
            "bench.jsonl:2: cases[0].expected_rank_ceiling: expected an integer >= 0, got '3'",
            "bench.jsonl:3: cases[0].expected_rank_ceiling: expected an integer >= 0, got 1.0",
            "bench.jsonl:4: cases[0].expected_rank_ceiling: expected an integer >= 0, got True",
            "bench.jsonl:5: cases[0].expected_rank_ceiling: expected an integer >= 0, got -1",
        ),
    ),
    BadInput(
        "mistyped expected_layer",
        {"bench.jsonl": GOOD + line(with_case(expected_layer={"porter": 1}))},
        ("bench.jsonl:2: cases[0].expected_layer: expected a non-empty string, got {'porter': 1}",),
    ),
    BadInput(
        "case not an object",
        {"bench.jsonl": GOOD + line(with_entry(cases=["md_002_q1"]))},
        ("bench.jsonl:2: cases[0]: expected a JSON object, got string",),
    ),
    BadInput(
        "unknown content_type",
        {"bench.jsonl": GOOD + line(with_entry(content_type="Markdown"))},
        (
            "bench.jsonl:2: content_type: unknown value 'Markdown'; expected one of markdown, json, plaintext, transcript, curated (what engine 'builtin' accepts)",
        ),
    ),
    BadInput(
        "unknown source_kind",
        {"bench.jsonl": GOOD + line(with_entry(source_kind="permanent"))},
        (
            "bench.jsonl:2: source_kind: unknown value 'permanent'; expected one of durable, ephemeral, session",
        ),
    ),
    BadInput(
        "unknown expected_layer",
        {"bench.jsonl": GOOD + line(with_case(expected_layer="bm25"))},
        (
            "bench.jsonl:2: cases[0].expected_layer: unknown value 'bm25'; expected one of porter, trigram, rrf(porter+trigram), fuzzy+porter, fuzzy+trigram, fuzzy+rrf(porter+trigram), any, none (what engine 'builtin' accepts)",
        ),
    ),
    BadInput(
        "duplicate id across files",
        {
            "a.jsonl": GOOD,
            "b.jsonl": line(entry("md_001", "other", [case("md_009_q1", "x", ["x"])])),
        },
        ("b.jsonl:1: id: duplicate id 'md_001' (first at a.jsonl:1)",),
    ),
    BadInput(
        "duplicate case_id across files",
        {
            "a.jsonl": GOOD,
            "b.jsonl": line(entry("md_002", "other", [case("md_001_q1", "x", ["x"])])),
        },
        ("b.jsonl:1: case_id: duplicate case_id 'md_001_q1' (first at a.jsonl:1)",),
    ),
    BadInput(
        "needles not a list of strings",
        {
            "bench.jsonl": GOOD
            + line(with_case(needles="alpha"))
            + line(with_case("md_003", needles=["alpha", 3]))
            + line(with_case("md_004", needles=[""]))
            + line(with_case("md_005", needles=None))
        },
        (
            "bench.jsonl:2: cases[0].needles: expected a list of non-empty strings",
            "bench.jsonl:3: cases[0].needles: expected a list of non-empty strings",
            "bench.jsonl:4: cases[0].needles: expected a list of non-empty strings",
            "bench.jsonl:5: cases[0].needles: expected a list of non-empty strings",
        ),
    ),
    BadInput(
        "negative case with a ceiling",
        {"bench.jsonl": GOOD + line(negative(expected_rank_ceiling=3))},
        (
            "bench.jsonl:2: cases[0].expected_rank_ceiling: a negative case has no rank to check; use 0, got 3",
        ),
    ),
    BadInput(
        "negative case with a layer",
        {"bench.jsonl": GOOD + line(negative(expected_layer="porter"))},
        (
            "bench.jsonl:2: cases[0].expected_layer: a negative case (needles: []) expects 'none', got 'porter'",
        ),
    ),
    BadInput(
        "whitespace-only needle",
        {"bench.jsonl": GOOD + line(with_case(needles=["gamma", " \t"]))},
        (
            "bench.jsonl:2: cases[0].needles[1]: a needle of only whitespace matches everything, got ' \\t'",
        ),
    ),
    BadInput(
        "invisible character in an id",
        {
            "bench.jsonl": GOOD
            + line(with_case(case_id="md_002\u200b_q1"))
            + line(replaced(good("md_003"), {"id": "md_\u202e003"}))
        },
        (
            "bench.jsonl:2: cases[0].case_id: expected no invisible or bidi characters, found U+200B ZERO WIDTH SPACE at position 6 of 'md_002\\u200b_q1'",
            "bench.jsonl:3: id: expected no invisible or bidi characters, found U+202E RIGHT-TO-LEFT OVERRIDE at position 3 of 'md_\\u202e003'",
        ),
    ),
    BadInput(
        "CR-only line endings",
        {
            "bench.jsonl": GOOD,
            "mac.jsonl": line(good("md_002"))[:-1] + b"\r" + line(good("md_003"))[:-1] + b"\r",
        },
        (
            "mac.jsonl:1: file: lines end in a bare CR (classic Mac line endings), so they read as one line; save the file with LF (or CRLF) line endings",
        ),
    ),
    BadInput(
        "pretty-printed JSON array",
        {
            "bench.jsonl": GOOD,
            "array.jsonl": json.dumps([good("md_002"), good("md_003")], indent=2).encode(),
        },
        (
            "array.jsonl:1: file: this file is a JSON array of 2 items, not JSON Lines: write each entry as one JSON object on its own line (jq -c '.[]' does that)",
        ),
    ),
    BadInput(
        "pretty-printed JSON object",
        {
            "bench.jsonl": GOOD,
            "object.jsonl": b"\n" + json.dumps(good("md_002"), indent=2).encode(),
        },
        (
            "object.jsonl:2: file: this file is one JSON object written over several lines, not JSON Lines: write each entry as one JSON object on its own line (jq -c . does that)",
        ),
    ),
    BadInput(
        "broken pretty-printed array",
        {
            "bench.jsonl": GOOD,
            "broken.jsonl": json.dumps([good("md_002")], indent=2).encode()[:-20],
        },
        (
            "broken.jsonl:1: file: this file looks like a JSON array written over several lines (and is not valid JSON either), not JSON Lines: write each entry as one JSON object on its own line",
        ),
    ),
    BadInput(
        "positive case expecting none",
        {"bench.jsonl": GOOD + line(with_case(expected_layer="none"))},
        (
            "bench.jsonl:2: cases[0].expected_layer: 'none' is only for negative cases (needles: [])",
        ),
    ),
    BadInput(
        "case with neither needles nor relevant",
        {"bench.jsonl": GOOD + line(with_case(needles=...))},
        (
            "bench.jsonl:2: cases[0]: a case needs needles (a list of strings; [] for a negative case) or relevant ({entry_id: grade})",
        ),
    ),
    BadInput(
        "bad relevance grades",
        {
            "bench.jsonl": GOOD
            + line(with_case(needles=..., relevant={"md_001": -1, "md_002": 1.5, "md_003": True}))
            + line(with_case("md_003", needles=..., relevant=["md_001"]))
            + line(with_case("md_004", needles=..., relevant={"md_001": 0}))
        },
        (
            "bench.jsonl:2: cases[0].relevant.md_001: expected an integer grade >= 0, got -1",
            "bench.jsonl:2: cases[0].relevant.md_002: expected an integer grade >= 0, got 1.5",
            "bench.jsonl:2: cases[0].relevant.md_003: expected an integer grade >= 0, got True",
            "bench.jsonl:3: cases[0].relevant: expected an object of entry id -> grade, got array",
            "bench.jsonl:4: cases[0].relevant: no entry is graded 1 or more, so nothing can be found; a negative case uses needles: []",
        ),
    ),
    BadInput(
        "unknown relevant entry",
        {
            "bench.jsonl": GOOD
            + line(with_case(needles=..., relevant={"md_001": 2, "md_404": 1}))
            + line(entry("json_001", "{}", content_type="json"))
            + line(with_case("md_003", needles=..., relevant={"json_001": 1}))
        },
        (
            "bench.jsonl:2: relevant.md_404: case 'md_002_q1': no entry 'md_404' in the fixture set",
            "bench.jsonl:4: relevant.json_001: case 'md_003_q1': entry 'json_001' is json, and the case searches the markdown entries",
        ),
    ),
]


def write_files(root: Path, files: dict[str, bytes]) -> list[Path]:
    paths = []
    for name, data in files.items():
        path = root / name
        path.write_bytes(data)
        paths.append(path)
    return paths


@pytest.mark.parametrize("bad", BAD_INPUTS, ids=[bad.name for bad in BAD_INPUTS])
def test_bad_input_is_a_located_error_and_the_rest_loads(tmp_path: Path, bad: BadInput) -> None:
    fixture_set = load_fixture_set(write_files(tmp_path, bad.files), tmp_path)
    assert tuple(str(error) for error in fixture_set.errors()) == bad.errors
    assert tuple(case.case_id for case in fixture_set.cases()) == bad.loaded


def test_a_broken_case_leaves_its_entry_and_sibling_cases(tmp_path: Path) -> None:
    mixed = entry(
        "md_001",
        "alpha beta",
        [
            case("md_001_q1", "alpha", ["alpha"]),
            {"case_id": "md_001_q2"},
            case("md_001_q3", "b", ["beta"]),
        ],
    )
    loaded = load_fixture_file(write_files(tmp_path, {"bench.jsonl": line(mixed)})[0])
    assert [c.case_id for c in loaded.entries[0].cases] == ["md_001_q1", "md_001_q3"]
    assert [e.field for e in loaded.errors] == [
        "cases[1].query",
        "cases[1].expected_rank_ceiling",
        "cases[1]",
    ]


def test_byte_order_mark_changes_the_hash_not_the_entries(tmp_path: Path) -> None:
    with_bom, without = write_files(
        tmp_path, {"bom.jsonl": b"\xef\xbb\xbf" + GOOD, "plain.jsonl": GOOD}
    )
    assert load_fixture_file(with_bom).entries[0].haystack == "alpha beta"
    assert dataset_hash([with_bom], tmp_path) != dataset_hash([without], tmp_path)


def test_byte_order_mark_before_a_blank_first_line_is_blank(tmp_path: Path) -> None:
    (bom_blank,) = write_files(tmp_path, {"bom.jsonl": b"\xef\xbb\xbf\n" + GOOD})
    loaded = load_fixture_file(bom_blank)
    assert loaded.errors == ()
    assert [entry.line for entry in loaded.entries] == [2]


def test_windows_line_endings_load(tmp_path: Path) -> None:
    path = write_files(tmp_path, {"bench.jsonl": GOOD.replace(b"\n", b"\r\n") * 1})[0]
    loaded = load_fixture_file(path)
    assert loaded.errors == ()
    assert loaded.entries[0].haystack == "alpha beta"


def test_five_megabyte_haystack_loads_whole(tmp_path: Path) -> None:
    haystack = ("lorem ipsum dolor sit amet\n\n" * 200_000)[: 5 * 1024 * 1024]
    big = entry(
        "txt_001", haystack, [case("txt_001_q1", "lorem", ["lorem"])], content_type="plaintext"
    )
    loaded = load_fixture_file(write_files(tmp_path, {"big.jsonl": line(big)})[0])
    assert loaded.errors == ()
    assert len(loaded.entries[0].haystack) == 5 * 1024 * 1024


def many_cases(count: int) -> list[dict[str, Any]]:
    return [
        entry(
            f"txt_{n:05d}",
            f"word{n} text",
            [case(f"txt_{n:05d}_q1", f"word{n}", [f"word{n}"])],
            content_type="plaintext",
        )
        for n in range(count)
    ]


def test_ten_thousand_cases_load(tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    path.write_text(jsonl(many_cases(10_000)), encoding="utf-8")
    fixture_set = load_fixture_set([path], tmp_path)
    assert fixture_set.errors() == ()
    assert len(fixture_set.cases()) == 10_000
    assert fixture_set.cases()[-1].line == 10_000


def doc_rows() -> dict[str, str]:
    """The first column of each docs/bad-input.md table row, mapped to the whole row."""
    rows = {}
    for text in DOC.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in text.strip().strip("|").split("|")]
        if text.startswith("|") and cells[0] not in ("input", "") and not set(cells[0]) <= {"-"}:
            rows[cells[0]] = text
    return rows


def test_the_doc_lists_every_bad_input_with_its_message() -> None:
    rows = doc_rows()
    assert sorted(rows) == sorted(bad.name for bad in BAD_INPUTS)
    for bad in BAD_INPUTS:
        shown = re.findall(r"`([^`]+)`", rows[bad.name].replace("\\|", "|"))
        for message in bad.errors:
            assert message in shown, f"{bad.name}: {message}"


# Through pytest: the broken lines are errors, the other cases still pass.


def write_bench(pytester: pytest.Pytester, files: dict[str, bytes]) -> None:
    directory = pytester.path / "bench_fixtures"
    directory.mkdir(exist_ok=True)
    write_files(directory, files)


@pytest.mark.usefixtures("word_engine")
def test_broken_lines_error_and_other_cases_pass(pytester: pytest.Pytester) -> None:
    write_bench(
        pytester,
        {
            "a.jsonl": GOOD
            + b"{not json\n"
            + line(with_entry(content_type="Markdown"))
            + TRUNCATED,
            "b.jsonl": b"\xef\xbb\xbf"
            + line(good("md_003"))
            + b"\xff\xfe\n"
            + line(with_case(query=...)),
            "empty.jsonl": b"",
        },
    )
    result = pytester.runpytest("--qualbench")
    result.assert_outcomes(passed=2, errors=6)
    result.stdout.fnmatch_lines(
        [
            "*invalid fixture line: bench_fixtures/a.jsonl:2: json: line contains invalid json: *",
            "*invalid fixture line: bench_fixtures/a.jsonl:3: content_type: unknown value 'Markdown'*",
            "*invalid fixture line: bench_fixtures/a.jsonl:4: json: line contains invalid json: Unterminated string*",
            "*invalid fixture line: bench_fixtures/b.jsonl:2: encoding: line is not valid utf-8*",
            "*invalid fixture line: bench_fixtures/b.jsonl:3: cases[[]0[]].query: missing required field",
            "*invalid fixture line: bench_fixtures/empty.jsonl:1: file: no entries: the file is empty",
        ]
    )
    report = json.loads((pytester.path / ".qualbench/report.json").read_text(encoding="utf-8"))
    assert [c["case_id"] for c in report["cases"]] == ["md_001_q1", "md_003_q1"]
    assert report["overall"]["mrr"] == 1.0


@pytest.mark.usefixtures("word_engine")
def test_duplicates_across_files_error_and_the_first_still_runs(pytester: pytest.Pytester) -> None:
    write_bench(
        pytester,
        {
            "a.jsonl": GOOD,
            "b.jsonl": line(entry("md_001", "other", [case("md_009_q1", "other", ["other"])]))
            + line(
                entry(
                    "md_002",
                    "gamma",
                    [case("md_001_q1", "gamma", ["gamma"]), case("md_002_q2", "gamma", ["gamma"])],
                )
            ),
        },
    )
    result = pytester.runpytest("--qualbench")
    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*invalid fixture line: bench_fixtures/b.jsonl:1: id: duplicate id 'md_001' (first at bench_fixtures/a.jsonl:1)",
            "*invalid fixture line: bench_fixtures/b.jsonl:2: case_id: duplicate case_id 'md_001_q1' (first at bench_fixtures/a.jsonl:1)",
        ]
    )


@pytest.mark.usefixtures("word_engine")
def test_hostile_strings_that_used_to_crash_the_session_are_errors(
    pytester: pytest.Pytester,
) -> None:
    write_bench(
        pytester,
        {
            "a.jsonl": GOOD
            + line(with_case(query="alpha \ud800"))
            + line(with_case(expected_layer=["porter"]))
            + DEEP,
        },
    )
    result = pytester.runpytest("--qualbench")
    result.assert_outcomes(passed=1, errors=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert (pytester.path / ".qualbench/report.json").exists()


@pytest.mark.usefixtures("word_engine")
def test_ten_thousand_cases_collect(pytester: pytest.Pytester) -> None:
    (pytester.path / "bench_fixtures").mkdir()
    (pytester.path / "bench_fixtures/many.jsonl").write_text(
        jsonl(many_cases(10_000)), encoding="utf-8"
    )
    result = pytester.runpytest("--qualbench", "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        ["bench_fixtures/many.jsonl::txt_00000_q1", "10000 tests collected*"]
    )


@pytest.mark.usefixtures("word_engine")
def test_five_megabyte_haystack_is_searched(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    # Few, large paragraphs: the stand-in engine's cost is per chunk, the loader's per byte.
    haystack = ("filler words here " * 3_000 + "\n\n") * 100 + "the needle paragraph"
    write_fixture(
        "plaintext.jsonl",
        [
            entry(
                "txt_001",
                haystack,
                [case("txt_001_q1", "needle", ["needle paragraph"])],
                content_type="plaintext",
            )
        ],
    )
    assert len(haystack) > 5 * 1024 * 1024
    pytester.runpytest("--qualbench").assert_outcomes(passed=1)


def test_deeply_nested_json_haystack_does_not_take_down_its_content_type(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write_fixture(
        "json.jsonl",
        [
            entry(
                "json_001",
                '{"p99_latency_ms": 250}',
                [case("json_001_q1", "p99_latency_ms", ["p99_latency_ms"], ceiling=0)],
                content_type="json",
            ),
            entry("json_002", "[" * 3000 + "]" * 3000, [], content_type="json"),
        ],
    )
    # The built-in engine (no word_engine fixture); only needles are checked.
    pytester.runpytest("--qualbench", "--qualbench-checks=needles").assert_outcomes(passed=1)
