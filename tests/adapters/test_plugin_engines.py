"""Short engine names through the plugin: `--qualbench-engine=NAME`, rankers, vocabulary."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.conftest import needs
from tests.conftest import WriteFixture, case, entry

DOCS = [
    entry(
        "md_001",
        "# Replica lag\n\nReplica lag grows while vacuum runs on the primary.",
        [case("md_001_q1", "replica lag", ["Replica lag grows"], layer="any")],
    ),
    entry(
        "md_002",
        "# Eviction storms\n\nThe cache evicts hot keys when memory is full.",
        [
            case("md_002_q1", "cache eviction", ["evicts hot keys"], layer="any"),
            case("md_002_q2", "zzzz", []),
        ],
    ),
]


def read_report(pytester: pytest.Pytester) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(
        (pytester.path / ".qualbench" / "report.json").read_text(encoding="utf-8")
    )
    return report


@pytest.fixture
def project(pytester: pytest.Pytester, write_fixture: WriteFixture) -> pytest.Pytester:
    write_fixture("docs.jsonl", DOCS)
    return pytester


@pytest.mark.parametrize(
    ("name", "library"),
    [
        ("builtin", "pytest-qualbench"),
        ("bm25s", "bm25s"),
        ("tantivy", "tantivy"),
        ("postgres", "psycopg"),
    ],
)
def test_each_short_name_runs_and_records_its_library(
    project: pytest.Pytester, postgres_dsn: str, name: str, library: str
) -> None:
    project.makeini(f"[pytest]\nqualbench_postgres_dsn = {postgres_dsn}\n")
    result = project.runpytest("--qualbench", f"--qualbench-engine={name}")
    result.assert_outcomes(passed=3)
    metadata = read_report(project)["metadata"]
    assert metadata["engine"]["config"]["library"] == f"{library} {version(library)}"
    # Named once, by the engine: the plugin's own libraries do not repeat it.
    assert library not in metadata["libraries"]
    assert {"numpy", "rank-bm25", "rapidfuzz"} <= set(metadata["libraries"])


def test_dense_finds_the_positives_and_cannot_return_nothing(project: pytest.Pytester) -> None:
    result = project.runpytest("--qualbench", "--qualbench-engine=dense")
    # Every chunk has some cosine to any query: the negative case gets results.
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["FAILED *md_002_q2*"])
    config = read_report(project)["metadata"]["engine"]["config"]
    assert config["embedding"]["identity"].startswith(f"wordllama {version('wordllama')} ")


def test_hybrid_runs_with_its_sides_in_the_config(project: pytest.Pytester) -> None:
    result = project.runpytest("--qualbench", "--qualbench-engine=hybrid")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["FAILED *md_002_q2*"])
    assert set(read_report(project)["metadata"]["engine"]["config"]) >= {"builtin", "dense"}


def test_the_ini_option_takes_a_short_name(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nqualbench_engine = bm25s\n")
    project.runpytest("--qualbench").assert_outcomes(passed=3)
    assert read_report(project)["metadata"]["engine"]["config"]["engine"] == "bm25s"


def test_a_missing_extra_is_a_usage_error_naming_it(project: pytest.Pytester) -> None:
    # As if tantivy were not installed: a None entry makes `import tantivy` fail.
    project.makeconftest(
        "import sys\n"
        "sys.modules.pop('pytest_qualbench.adapters.tantivy', None)\n"
        "sys.modules['tantivy'] = None\n"
    )
    result = project.runpytest("--qualbench", "--qualbench-engine=tantivy")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*engine 'tantivy' needs the tantivy extra: pip install 'pytest-qualbench[[]tantivy[]]'*"]
    )


def test_an_engines_declared_layers_are_checked(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write_fixture(
        "docs.jsonl",
        [
            entry(
                "md_001",
                "replica lag on the primary",
                [
                    case("md_001_q1", "replica", ["replica lag"], layer="bm25s"),
                    # A built-in name is accepted but not checked against bm25s.
                    case("md_001_q2", "primary", ["replica lag"], layer="porter"),
                ],
            )
        ],
    )
    result = pytester.runpytest("--qualbench", "--qualbench-engine=bm25s")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["layer: not checked — engine bm25s does not report the built-in layers (1 positive case)"]
    )
    overall = read_report(pytester)["overall"]
    assert overall["layer_accuracy"] == 1.0


def test_a_layer_the_engine_does_not_declare_names_what_it_accepts(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write_fixture(
        "docs.jsonl",
        [entry("md_001", "replica lag", [case("md_001_q1", "replica", ["replica"], layer="bm25")])],
    )
    result = pytester.runpytest("--qualbench", "--qualbench-engine=tantivy")
    result.stdout.fnmatch_lines(
        [
            "*cases[[]0[]].expected_layer: unknown value 'bm25'; expected one of tantivy, fuzzy, "
            "porter, *, any, none (what engine 'tantivy' accepts)*"
        ]
    )


FAQ_ENGINE = """
from pytest_qualbench.engine.types import Result

class FaqEngine:
    layers = ("exact",)
    content_types = ("faq",)

    def index(self, entries):
        self.texts = [entry.haystack for entry in entries]

    def search(self, query, *, limit=10, kinds=()):
        return [Result(text, "exact") for text in self.texts if query in text][:limit]
"""


def test_declared_content_types_load_and_take_floors(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    pytester.makepyfile(faqengine=FAQ_ENGINE)
    pytester.syspathinsert()
    write_fixture(
        "faq.jsonl",
        [
            entry(
                "faq_001",
                "how do I reset my password",
                [case("faq_001_q1", "reset", ["reset my password"], layer="exact")],
                content_type="faq",
            )
        ],
    )
    result = pytester.runpytest(
        "--qualbench", "--qualbench-engine=faqengine:FaqEngine", "--qualbench-floor=faq.mrr:0.9"
    )
    result.assert_outcomes(passed=1)
    assert read_report(pytester)["by_content_type"]["faq"]["mrr"] == 1.0
    builtin = pytester.runpytest("--qualbench", "--qualbench-floor=faq.mrr:0.9")
    assert builtin.ret == pytest.ExitCode.USAGE_ERROR
    builtin.stderr.fnmatch_lines(
        ["*unknown content type 'faq'; known: markdown, *, curated (what engine *accepts)*"]
    )


@pytest.fixture
def installed_faqengines(pytester: pytest.Pytester) -> Iterator[None]:
    """An installed distribution `faqengines` with an entry point, in a site folder of its own.

    Not in the working directory: an xdist worker has '' on sys.path, and
    importlib.metadata caches what it lists there.
    """
    site = pytester.path / "site"
    site.mkdir()
    (site / "faqengine.py").write_text(FAQ_ENGINE.replace('"exact"', '"porter"'))
    info = site / "faqengines-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: faqengines\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[pytest_qualbench.engines]\nfaq = faqengine:FaqEngine\n"
    )
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    yield
    sys.path.remove(str(site))
    importlib.invalidate_caches()


@pytest.mark.usefixtures("installed_faqengines")
def test_an_entry_point_registers_a_short_name(
    pytester: pytest.Pytester, write_fixture: WriteFixture
) -> None:
    write_fixture("docs.jsonl", [entry("md_001", "alpha beta", [case("q1", "alpha", ["alpha"])])])
    result = pytester.runpytest("--qualbench", "--qualbench-engine=faq")
    result.assert_outcomes(passed=1)
    assert read_report(pytester)["metadata"]["engine"]["name"] == "faqengine:FaqEngine"


def test_engine_names_rank_the_same_chunks_in_one_table(
    project: pytest.Pytester, postgres_dsn: str
) -> None:
    project.makeini(f"[pytest]\nqualbench_postgres_dsn = {postgres_dsn}\n")
    names = "flatfile,bm25,engine,bm25s,tantivy,dense,hybrid,postgres"
    result = project.runpytest("--qualbench", f"--qualbench-rankers={names}")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "head-to-head over 2 positive cases*",
            "metric *flatfile*bm25*engine*bm25s*tantivy*dense*hybrid*postgres",
            "p50 ms *",
        ]
    )
    section = read_report(project)["rankers"]
    assert section["rankers"] == names.split(",")
    assert section["metrics"]["mrr"]["bm25s"] == 1.0
    assert set(section["p50_ms"]) == set(names.split(","))


def test_xdist_workers_share_one_schema_and_the_last_drops_it(
    project: pytest.Pytester, postgres_dsn: str
) -> None:
    import psycopg

    project.makeini(f"[pytest]\nqualbench_postgres_dsn = {postgres_dsn}\n")
    result = project.runpytest_subprocess(
        "--qualbench", "--qualbench-engine=postgres", "-p", "xdist", "-n", "2",
        "--testrunuid=sharedrun1",
    )  # fmt: skip
    result.assert_outcomes(passed=3)
    with psycopg.connect(postgres_dsn) as connection:
        left = connection.execute(
            "SELECT count(*) FROM pg_namespace WHERE nspname = 'qualbench_sharedrun1'"
        ).fetchone()
    assert left == (0,)


BENCH_FIXTURES = Path(__file__).resolve().parents[2] / "bench_fixtures"


@pytest.mark.parametrize("name", ["bm25s", "tantivy", "postgres", "dense", "hybrid"])
def test_each_short_name_runs_the_shipped_benchmark_without_an_error_item(
    pytester: pytest.Pytester, postgres_dsn: str, name: str
) -> None:
    # Floors and known failures are the built-in engine's: only errors count here.
    pytester.makeini(f"[pytest]\nqualbench_postgres_dsn = {postgres_dsn}\n")
    for path in BENCH_FIXTURES.glob("*.jsonl"):
        (pytester.path / "bench_fixtures").mkdir(exist_ok=True)
        (pytester.path / "bench_fixtures" / path.name).write_bytes(path.read_bytes())
    result = pytester.runpytest("--qualbench", f"--qualbench-engine={name}", "-q")
    outcomes = result.parseoutcomes()
    assert outcomes.get("errors", 0) == 0
    assert outcomes.get("passed", 0) > 250


@pytest.mark.parametrize(
    ("name", "library"), [("chroma", "chromadb"), ("lancedb", "lancedb"), ("faiss", "faiss")]
)
def test_a_missing_vector_store_is_a_usage_error_naming_its_extra(
    project: pytest.Pytester, name: str, library: str
) -> None:
    project.makeconftest(
        "import sys\n"
        f"sys.modules.pop('pytest_qualbench.adapters.{name}', None)\n"
        f"sys.modules['{library}'] = None\n"
    )
    result = project.runpytest("--qualbench", f"--qualbench-engine={name}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*engine '{name}' needs the {name} extra: pip install 'pytest-qualbench[[]{name}[]]'*"]
    )


@needs("chromadb")
@needs("lancedb")
@needs("faiss")
@pytest.mark.parametrize(
    ("name", "library"), [("chroma", "chromadb"), ("lancedb", "lancedb"), ("faiss", "faiss-cpu")]
)
def test_each_vector_store_passes_the_negative_with_min_similarity(
    project: pytest.Pytester, name: str, library: str
) -> None:
    result = project.runpytest(
        "--qualbench",
        f"--qualbench-engine={name}",
        "--qualbench-engine-option=min_similarity=0.5",
        "--qualbench-rankers=engine,dense,chroma,lancedb,faiss",
    )
    result.assert_outcomes(passed=3)
    report = read_report(project)
    config = report["metadata"]["engine"]["config"]
    assert config["library"] == f"{library} {version(library)}"
    assert config["min_similarity"] == 0.5
    assert report["rankers"]["rankers"] == ["engine", "dense", "chroma", "lancedb", "faiss"]
    assert not report["rankers"].get("skipped")
    # Each engine ranker names its library and embedding; `engine` is metadata.engine's.
    rankers = report["rankers"]["config"]
    assert {ranker: config["library"] for ranker, config in rankers.items()} == {
        "dense": f"numpy {version('numpy')}",
        "chroma": f"chromadb {version('chromadb')}",
        "lancedb": f"lancedb {version('lancedb')}",
        "faiss": f"faiss-cpu {version('faiss-cpu')}",
    }
    for config in rankers.values():
        assert config["embedding"]["identity"].startswith(f"wordllama {version('wordllama')} ")
