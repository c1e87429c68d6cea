"""A comparison cannot lie: qualstat checks what it is given before it trusts it.

Issue 16. The reports come from real `pytest --qualbench` sessions; a test that
needs a malformed or lying report edits one written by such a session.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import WriteFixture, case, entry

CASES = [
    entry("md_a", "alpha beta\n\ngamma delta", [case("md_a_q1", "alpha", ["alpha beta"])]),
    entry("md_b", "omega kappa\n\nsigma theta", [case("md_b_q1", "sigma", ["sigma theta"])]),
    entry("md_c", "iota rho\n\nmu nu", [case("md_c_q1", "mu", ["mu nu"])]),
]

# Puts the needle's chunk second: every case still passes a ceiling of 2, with a lower mrr.
SECOND_ENGINE = """
from pytest_qualbench.engine.types import Result
import wordengine

class Second(wordengine.WordEngine):
    def search(self, query, *, limit=10, kinds=()):
        hits = super().search(query, limit=limit, kinds=kinds)
        return [Result("filler", "porter", "f", 2.0, "f", 99), *hits]
"""

EMPTY_ENGINE = """
import wordengine

class Empty(wordengine.WordEngine):
    def search(self, query, *, limit=10, kinds=()):
        return []
"""


# The `qualstat` console script's own entry point: the public surface, wherever it lives.
qualstat: Callable[[Sequence[str]], int] = entry_points(group="console_scripts", name="qualstat")[
    "qualstat"
].load()


def run_report(pytester: pytest.Pytester, name: str, *args: str) -> dict[str, Any]:
    pytester.runpytest("--qualbench", f"--qualbench-report={name}", *args)
    report: dict[str, Any] = json.loads((pytester.path / name).read_text(encoding="utf-8"))
    return report


def write(path: Path, report: dict[str, Any]) -> Path:
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


def run_qualstat(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    capsys.readouterr()  # what the pytest sessions printed before is not qualstat's output
    code = qualstat([str(arg) for arg in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def base(pytester: pytest.Pytester, write_fixture: WriteFixture, word_engine: None) -> Path:
    write_fixture(
        "markdown.jsonl",
        [{**e, "cases": [{**c, "expected_rank_ceiling": 2} for c in e["cases"]]} for e in CASES],
    )
    run_report(pytester, "base.json")
    return pytester.path / "base.json"


def _set(report: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(report)
    target: Any = changed
    keys = path.split(".")
    for key in keys[:-1]:
        target = target[int(key)] if isinstance(target, list) else target[key]
    last = keys[-1]
    if isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return changed


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("overall", []),
        ("by_content_type", "markdown"),
        ("negatives", 3),
        ("negatives.by_content_type", [1]),
        ("cases.0.metrics.mrr", "high"),
        ("cases.0.case_id", 7),
        ("cases.0.rank", "first"),
        ("cases.0.passed", "yes"),
        ("cases.0.content_type", None),
        ("metadata", "x"),
        ("failures", {"a": 1}),
        ("overall.mrr", "0.9"),
    ],
)
def test_wrongly_shaped_report_exits_2_with_a_reason_not_a_traceback(
    base: Path, capsys: pytest.CaptureFixture[str], path: str, value: Any
) -> None:
    report = json.loads(base.read_text())
    broken = write(base.parent / "broken.json", _set(report, path, value))
    for args in ((base, broken), (broken, base), (broken,), ("--format", "markdown", base, broken)):
        code, _, err = run_qualstat(capsys, *args)
        assert code == 2, (args, err)
        assert "broken.json" in err
        assert "Traceback" not in err


def test_aggregates_that_disagree_with_the_cases_are_not_trusted(
    base: Path, pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    pytester.makepyfile(second=SECOND_ENGINE)
    head = run_report(pytester, "head.json", "--qualbench-engine=second:Second")
    assert all(c["passed"] for c in head["cases"])
    lying = copy.deepcopy(head)
    original = json.loads(base.read_text())
    for key in ("overall", "by_content_type", "by_layer"):
        lying[key] = original[key]
    code, out, err = run_qualstat(capsys, base, write(pytester.path / "lying.json", lying))
    # Either refused (2), or the cases' own values show the mrr drop (1).
    assert code in (1, 2), out
    assert "no regression" not in out
    if code == 2:
        assert "lying.json" in err


def test_intersect_with_no_shared_case_exits_2(
    base: Path, pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    report = json.loads(base.read_text())
    renamed = copy.deepcopy(report)
    for record in renamed["cases"]:
        record["case_id"] = "other_" + record["case_id"]
    renamed["dataset_hash"] = "sha256:" + "0" * 64
    other = write(pytester.path / "other.json", renamed)
    code, out, err = run_qualstat(capsys, "--intersect", base, other)
    assert code == 2, out
    assert "no case" in err or "no shared" in err


def test_shared_case_whose_definition_changed_is_listed_and_left_out(
    base: Path,
    pytester: pytest.Pytester,
    write_fixture: WriteFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    edited = [
        {**e, "cases": [{**c, "expected_rank_ceiling": 2} for c in e["cases"]]} for e in CASES
    ]
    # Same case id, another question: a comparison must not pair the two.
    edited[1]["cases"][0] = case("md_b_q1", "omega", ["omega kappa"], ceiling=2)
    write_fixture("markdown.jsonl", edited)
    run_report(pytester, "head.json")
    _code, out, _ = run_qualstat(capsys, "--intersect", base, pytester.path / "head.json")
    assert "md_b_q1" in out
    assert "changed" in out.lower()
    data = json.loads(
        run_qualstat(capsys, "--intersect", "--format", "json", base, pytester.path / "head.json")[
            1
        ]
    )
    assert data["shared_cases"] == 2
    assert "md_b_q1" in json.dumps(data.get("changed_cases"))


def test_dataset_hash_counts_file_boundaries(
    pytester: pytest.Pytester, write_fixture: WriteFixture, word_engine: None
) -> None:
    first, second, third = (json.dumps(line) + "\n" for line in CASES)
    write_fixture("markdown.jsonl", [])
    folder = pytester.path / "bench_fixtures"
    (folder / "markdown.jsonl").write_text(first + second)
    (folder / "more.jsonl").write_text(third)
    one = run_report(pytester, "one.json")
    (folder / "markdown.jsonl").write_text(first)
    (folder / "more.jsonl").write_text(second + third)
    two = run_report(pytester, "two.json")
    assert one["dataset_hash"] != two["dataset_hash"]
    assert one["schema_version"] >= 2
    manifest = {row["path"]: row for row in two["dataset_files"]}
    assert manifest["bench_fixtures/more.jsonl"]["bytes"] == len((second + third).encode())
    assert len(manifest["bench_fixtures/more.jsonl"]["sha256"]) == 64


def test_report_of_an_older_schema_is_refused_with_a_rerun_hint(
    base: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = write(base.parent / "old.json", _set(json.loads(base.read_text()), "schema_version", 1))
    code, _, err = run_qualstat(capsys, old, base)
    assert code == 2
    assert "old.json" in err
    assert "re-run" in err or "rerun" in err


def test_compare_under_pytest_with_another_dataset_names_the_pytest_remedy(
    base: Path, pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    edited = copy.deepcopy(CASES)
    edited[2]["haystack"] += "\n\nan added paragraph"
    write_fixture("markdown.jsonl", edited)
    result = pytester.runpytest("--qualbench", "--qualbench-compare=base.json")
    assert result.ret != pytest.ExitCode.OK
    text = result.stdout.str()
    assert "bench_fixtures/markdown.jsonl" in text
    assert "run the base engine on these fixtures" in text


def test_base_made_in_another_checkout_over_the_heads_fixtures_compares_clean(
    base: Path, pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # docs/qualstat.md's pull-request recipe: the base code runs in its own checkout
    # over the head's fixture files; only paths relative to the project may count.
    other = tmp_path_factory.mktemp("base_checkout")
    (other / "bench_fixtures").mkdir()
    (other / "bench_fixtures" / "markdown.jsonl").write_bytes(
        (pytester.path / "bench_fixtures" / "markdown.jsonl").read_bytes()
    )
    (other / "tox.ini").write_text((pytester.path / "tox.ini").read_text())
    (other / "wordengine.py").write_text((pytester.path / "wordengine.py").read_text())
    subprocess.run(
        [sys.executable, "-m", "pytest", "--qualbench", "--qualbench-report=base.json", "-q"],
        cwd=other,
        env={**os.environ, "PYTHONPATH": str(other)},
        capture_output=True,
        check=False,
        timeout=120,
    )
    result = pytester.runpytest("--qualbench", f"--qualbench-compare={other / 'base.json'}")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(["*no regression*"])
    recipe = (Path(__file__).parents[1] / "docs" / "qualstat.md").read_text()
    assert "fixtures" in recipe.split("CI recipe", 1)[1].split("```")[1]


def test_markdown_escapes_every_text_qualstat_did_not_write(
    pytester: pytest.Pytester,
    write_fixture: WriteFixture,
    word_engine: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hostile = [
        entry(
            "md_x",
            "alpha beta",
            [
                case("x<img src=x onerror=alert(1)>", "alpha", ["alpha beta"]),
                case("y</details><script>", "beta", ["alpha beta"]),
                case("z`@octocat|[link](http://e.x)", "alpha beta", ["alpha beta"]),
            ],
        )
    ]
    write_fixture("markdown.jsonl", hostile)
    run_report(pytester, "base.json")
    pytester.makepyfile(empty=EMPTY_ENGINE)
    run_report(pytester, "head.json", "--qualbench-engine=empty:Empty")
    for args in (("base.json", "head.json"), ("head.json",)):
        _code, out, _ = run_qualstat(
            capsys, "--format", "markdown", *(pytester.path / a for a in args)
        )
        assert "<img" not in out
        assert "<script" not in out
        assert out.count("</details>") == out.count("<details")
        assert "@octocat" not in out
        assert "[link](http" not in out


def test_qualstat_output_over_one_of_its_reports_is_refused(
    base: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = base.read_bytes()
    code, _, _err = run_qualstat(capsys, base, base, "-o", base)
    assert code == 2
    assert base.read_bytes() == before


def test_qualstat_output_that_is_not_a_regular_file_is_refused(
    base: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = base.parent / "out.fifo"
    os.mkfifo(fifo)
    code, _, err = run_qualstat(capsys, base, "-o", fifo)
    assert code == 2
    assert "regular file" in err


@pytest.mark.parametrize(
    ("key", "planted"),
    [
        # The first copy is what a reader of the file sees; json kept the last one.
        ("dataset_hash", '{"dataset_hash": "sha256:' + "0" * 64 + '", '),
        ("mrr", '"metrics": {"mrr": 0.0, '),
    ],
)
def test_a_report_with_a_repeated_key_is_refused_naming_the_key(
    base: Path, capsys: pytest.CaptureFixture[str], key: str, planted: str
) -> None:
    text = base.read_text(encoding="utf-8")
    start = "{" if key == "dataset_hash" else '"metrics": {'
    assert start in text
    repeated = base.parent / "repeated.json"
    repeated.write_text(text.replace(start, planted, 1), encoding="utf-8")
    for args in ((base, repeated), (repeated, base), (repeated,)):
        code, out, err = run_qualstat(capsys, *args)
        assert code == 2, (args, out, err)
        assert f"repeated.json: not valid JSON: duplicate key {key!r}" in err
        assert "Traceback" not in err
