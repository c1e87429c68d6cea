"""Engine options: KEY=VALUE from the command line and the ini, typed by the factory."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest

from pytest_qualbench.evaluation.engine_options import (
    EngineOptionError,
    converted,
    factory_keywords,
    merged_pairs,
    parse_pair,
)
from tests.conftest import WriteFixture, case, entry

ENTRIES = [
    entry(
        "md_001",
        "# Pool\n\nmaxIdleConns defaults to 10.",
        [
            case(
                "md_001_q1",
                "maxIdleConns defaults",
                ["defaults to 10"],
                layer="rrf(porter+trigram)",
            )
        ],
    ),
]

# An engine of the user's own whose factory takes keyword arguments.
TUNABLE_ENGINE = """
from typing import Literal

from pytest_qualbench.engine.types import Result

class Tunable:
    def __init__(self, *, depth: int = 3, boost: float | None = None,
                 mode: Literal["plain", "fancy"] = "plain", loud: bool = False, label="x"):
        self.config = {"depth": depth, "boost": boost, "mode": mode, "loud": loud, "label": label}

    def index(self, entries):
        self.texts = [entry.haystack for entry in entries]

    def search(self, query, *, limit=10, kinds=()):
        return [Result(text) for text in self.texts if query.split()[0] in text][:limit]
"""


def report(pytester: pytest.Pytester) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((pytester.path / ".qualbench/report.json").read_text())
    return data


@pytest.fixture
def project(pytester: pytest.Pytester, write_fixture: WriteFixture) -> pytest.Pytester:
    write_fixture("markdown.jsonl", ENTRIES)
    pytester.makepyfile(tunable=TUNABLE_ENGINE)
    pytester.syspathinsert()
    return pytester


def test_builtin_engine_takes_typed_options_and_the_report_records_them(
    project: pytest.Pytester,
) -> None:
    project.makeini("[pytest]\nqualbench_engine_options =\n    k1 = 1.5\n    rrf_k = 30\n")
    result = project.runpytest(
        "--qualbench",
        "--qualbench-engine-option",
        "fuzzy=fallback",
        "--qualbench-engine-option=rrf_k=20",
    )
    result.assert_outcomes(passed=1)
    engine = report(project)["metadata"]["engine"]
    assert engine["options"] == {"k1": 1.5, "rrf_k": 20, "fuzzy": "fallback"}
    assert engine["config"]["porter"]["bm25_k1"] == 1.5
    assert engine["config"]["fusion"]["rrf_k"] == 20
    assert engine["config"]["fuzzy"]["mode"] == "fallback"


def test_a_custom_factory_gets_its_own_keyword_arguments(project: pytest.Pytester) -> None:
    result = project.runpytest(
        "--qualbench",
        "--qualbench-engine=tunable:Tunable",
        "--qualbench-engine-option=depth=5",
        "--qualbench-engine-option=boost=none",
        "--qualbench-engine-option=mode=fancy",
        "--qualbench-engine-option=loud=yes",
        "--qualbench-engine-option=label=7",
    )
    result.assert_outcomes(passed=1)
    engine = report(project)["metadata"]["engine"]
    assert engine["config"] == {
        "depth": 5,
        "boost": None,
        "mode": "fancy",
        "loud": True,
        "label": "7",
    }


def test_without_options_the_report_records_none(project: pytest.Pytester) -> None:
    project.runpytest("--qualbench").assert_outcomes(passed=1)
    assert report(project)["metadata"]["engine"]["options"] == {}


def test_unknown_key_is_a_usage_error_listing_the_accepted_keys(project: pytest.Pytester) -> None:
    result = project.runpytest("--qualbench", "--qualbench-engine-option=k9=1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*engine option 'k9': pytest_qualbench.engine:Engine accepts b, fusion_depth, fuzzy,"
            " k1, k3, labels, rrf_k, score_gap_weight, title_weight, trigram_full_weight_words*"
        ]
    )


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("k1=fast", "*engine option k1='fast': expected float*"),
        ("rrf_k=1.5", "*engine option rrf_k='1.5': expected int*"),
        ("fuzzy=sometimes", "*engine option fuzzy='sometimes': expected one of eager, fallback*"),
    ],
)
def test_a_value_of_the_wrong_type_is_a_usage_error(
    project: pytest.Pytester, option: str, message: str
) -> None:
    result = project.runpytest("--qualbench", f"--qualbench-engine-option={option}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_an_option_without_equals_sign_is_a_usage_error(project: pytest.Pytester) -> None:
    result = project.runpytest("--qualbench", "--qualbench-engine-option=fuzzy")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*engine option 'fuzzy': expected KEY=VALUE*"])
    project.makeini("[pytest]\nqualbench_engine_options =\n    fuzzy\n")
    result = project.runpytest("--qualbench")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini qualbench_engine_options: engine option 'fuzzy'*"])


def test_pairs_split_at_the_first_equals_sign_and_the_command_line_wins() -> None:
    assert parse_pair(" label = a=b ") == ("label", "a=b")
    assert merged_pairs(["k1=1", "", "b=0.5"], [("k1", "2")]) == {"k1": "2", "b": "0.5"}
    with pytest.raises(EngineOptionError, match="expected KEY=VALUE"):
        parse_pair("=1")


@pytest.mark.parametrize(
    ("text", "annotation", "value"),
    [
        ("3", int, 3),
        ("0.5", float, 0.5),
        ("3", float, 3.0),
        ("off", bool, False),
        ("True", bool, True),
        ("x", str, "x"),
        ("x", Any, "x"),
        ("fallback", Literal["eager", "fallback"], "fallback"),
        ("2", Literal[1, 2], 2),
        ("none", int | None, None),
        ("4", int | None, 4),
        ("4.5", int | float, 4.5),
    ],
)
def test_text_converts_to_the_annotated_type(text: str, annotation: Any, value: Any) -> None:
    result = converted(text, annotation)
    assert result == value
    assert type(result) is type(value)


@pytest.mark.parametrize(
    ("text", "annotation"),
    [("maybe", bool), ("1.5", int), ("x", Literal["a"]), ("x", int | None), ("[]", list[int])],
)
def test_text_the_type_refuses_raises(text: str, annotation: Any) -> None:
    with pytest.raises(ValueError):
        converted(text, annotation)


def test_keywords_come_from_the_factorys_signature() -> None:
    def factory(depth: int = 1, *, name: str = "") -> None: ...

    assert factory_keywords(factory, {"depth": "2"}, "f") == {"depth": 2}
    assert factory_keywords(factory, {}, "f") == {}
    with pytest.raises(EngineOptionError, match="'extra': f accepts depth, name"):
        factory_keywords(factory, {"extra": "1"}, "f")


def test_a_factory_taking_any_keyword_gets_every_key_typed_by_its_annotation() -> None:
    def forwarding(*, depth: int = 1, **library_options: float) -> None: ...

    assert factory_keywords(forwarding, {"depth": "2", "k1": "1.1"}, "f") == {
        "depth": 2,
        "k1": 1.1,
    }


def test_labels_fts5_labels_a_case_as_sqlite_would(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    # capy's porter MATCH requires "of", which the chunk lacks: trigram alone returns it
    # (tests/engine/test_capy_layers.py checks the rule against SQLite). The default
    # labels by the fusion, for which both layers match it in full.
    write_fixture(
        "plaintext.jsonl",
        [
            entry(
                "txt_001",
                "Connection pooling settings: maxIdleConns defaults to 10.",
                [case("txt_001_q1", "settings of pooling", ["maxIdleConns"], layer="trigram")],
                content_type="plaintext",
            ),
            entry(
                "txt_002",
                "Structured logging ships every record to the collector.",
                content_type="plaintext",
            ),
        ],
    )
    by_default = pytester.runpytest("--qualbench")
    by_default.assert_outcomes(failed=1)
    by_default.stdout.fnmatch_lines(["*layer*rrf(porter+trigram)*"])
    by_fts5 = pytester.runpytest("--qualbench", "--qualbench-engine-option", "labels=fts5")
    by_fts5.assert_outcomes(passed=1)
    assert report(pytester)["metadata"]["engine"]["options"] == {"labels": "fts5"}
