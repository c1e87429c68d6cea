"""An engine's optional capabilities: declared protocols, asked for in one place.

mypy --strict checks this module too (pyproject.toml): `_shipped_engines_conform`
fails type checking when a shipped engine loses a capability it is documented to have.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, TypeVar

import pytest

from pytest_qualbench.engine import capabilities
from pytest_qualbench.engine.types import (
    Chunk,
    Closes,
    Configured,
    CorrectsQueries,
    IndexesChunks,
    ListsChunks,
    Result,
    Results,
    SearchEngine,
    Warns,
)
from pytest_qualbench.fixtures.schema import Entry
from tests.conftest import WriteFixture, case, entry

if TYPE_CHECKING:
    from pytest_qualbench.adapters.chunked import ChunkedEngine
    from pytest_qualbench.adapters.postgres import PostgresEngine
    from pytest_qualbench.adapters.tantivy import TantivyEngine
    from pytest_qualbench.engine.builtin import Engine


def _shipped_engines_conform(
    builtin: Engine, chunked: ChunkedEngine, tantivy: TantivyEngine, postgres: PostgresEngine
) -> list[object]:
    """Never called: mypy checks that each assignment type-checks."""
    searches: list[SearchEngine] = [builtin, chunked, tantivy, postgres]
    lists: list[ListsChunks] = [builtin, chunked]
    corrects: CorrectsQueries = builtin
    configured: list[Configured] = [builtin, chunked]
    warns: list[Warns] = [builtin, chunked]
    closes: list[Closes] = [chunked, tantivy, postgres]
    indexes: list[IndexesChunks] = [builtin, chunked]
    return [searches, lists, corrects, configured, warns, closes, indexes]


class Bare:
    """Only the required protocol: index and search, a plain list back."""

    def index(self, entries: Sequence[Entry]) -> None:
        self.texts = [entry.haystack for entry in entries]

    def search(self, query: str, *, limit: int = 10, kinds: Iterable[str] = ()) -> Sequence[Result]:
        return [Result(text) for text in self.texts if query in text][:limit]


EngineT = TypeVar("EngineT", bound=Bare)


class Correcting(Bare):
    """A third-party engine of the older kind: a plain list, the correction by method."""

    asked: list[str]

    def corrected_query(self, query: str) -> str | None:
        self.asked.append(query)
        return query.replace("aplha", "alpha")

    def search(self, query: str, *, limit: int = 10, kinds: Iterable[str] = ()) -> Sequence[Result]:
        return super().search(query.replace("aplha", "alpha"), limit=limit, kinds=kinds)


class CarriesCorrection(Correcting):
    """Results carry the correction; the method is then never asked."""

    def search(self, query: str, *, limit: int = 10, kinds: Iterable[str] = ()) -> Sequence[Result]:
        found = super().search(query, limit=limit, kinds=kinds)
        return Results(found, corrected_query="from the results")


class Everything(Bare):
    def __init__(self) -> None:
        self.config: object = {"kind": "everything"}
        self.warnings = ("txt_001: odd", 7)
        self.closed = 0

    def chunks(self) -> Iterable[Chunk]:
        return iter([Chunk(text, "", "s", "durable", 0) for text in self.texts])

    def close(self) -> None:
        self.closed += 1

    def index_chunks(self, chunks: Sequence[Chunk]) -> None:
        self.texts = [chunk.text for chunk in chunks]


def indexed(engine: EngineT) -> EngineT:
    engine.index([Entry("txt_001", "plaintext", "alpha beta", "s", "durable", (), "f.jsonl", 1)])
    return engine


def test_a_bare_engine_has_no_capability_and_still_searches() -> None:
    engine = indexed(Bare())
    found = capabilities.search(engine, "alpha", limit=10, kinds=())
    assert isinstance(found, Results) and found == [Result("alpha beta")]
    assert found.corrected_query is None
    assert capabilities.listed_chunks(engine) is None
    assert not capabilities.lists_chunks(engine) and not capabilities.indexes_chunks(engine)
    assert capabilities.config(engine) == {} and capabilities.warnings(engine) == ()
    capabilities.close(engine)  # nothing to close: no error


def test_a_correcting_engine_is_asked_after_a_plain_list() -> None:
    engine = indexed(Correcting())
    engine.asked = []
    found = capabilities.search(engine, "aplha", limit=10, kinds=())
    assert found.corrected_query == "alpha" and found == [Result("alpha beta")]
    assert engine.asked == ["aplha"]


def test_results_carry_the_correction_without_asking_the_engine() -> None:
    engine = indexed(CarriesCorrection())
    engine.asked = []
    found = capabilities.search(engine, "aplha", limit=10, kinds=())
    assert found.corrected_query == "from the results"
    assert engine.asked == []


def test_every_capability_is_read_through_its_protocol() -> None:
    engine = indexed(Everything())
    protocols = (ListsChunks, Configured, Warns, Closes, IndexesChunks)
    assert all(isinstance(engine, protocol) for protocol in protocols)
    assert not any(isinstance(indexed(Bare()), protocol) for protocol in protocols)
    listed = capabilities.listed_chunks(engine)
    assert listed is not None and [chunk.text for chunk in listed] == ["alpha beta"]
    assert capabilities.config(engine) == {"kind": "everything"}
    assert capabilities.warnings(engine) == ("txt_001: odd", "7")
    assert capabilities.indexes_chunks(engine)
    capabilities.close(engine)
    assert engine.closed == 1


def test_a_config_that_is_no_mapping_is_left_out() -> None:
    engine = indexed(Everything())
    engine.config = ["not", "a", "mapping"]
    assert capabilities.config(engine) == {}


def test_the_builtin_engine_returns_its_correction_with_the_results() -> None:
    from pytest_qualbench.engine.builtin import Engine

    engine = Engine()
    text = "# Setup\n\nservice configuration"
    engine.index([Entry("md_001", "markdown", text, "s", "durable", (), "f.md.jsonl", 1)])
    found = engine.search("cnofiguration", limit=3)
    assert found.corrected_query == "configuration"
    assert engine.search("configuration").corrected_query is None


ENGINES = """
from pytest_qualbench.engine.types import Result, Results

class Method:
    def index(self, entries):
        self.texts = [entry.haystack for entry in entries]

    def search(self, query, *, limit=10, kinds=()):
        query = query.replace("aplha", "alpha")
        return [Result(text) for text in self.texts if query in text][:limit]

    def corrected_query(self, query):
        return query.replace("aplha", "alpha")

class Carried(Method):
    def search(self, query, *, limit=10, kinds=()):
        return Results(super().search(query, limit=limit, kinds=kinds), corrected_query="alpha!")
"""


@pytest.mark.parametrize(("engine", "corrected"), [("Method", "alpha"), ("Carried", "alpha!")])
def test_the_correction_reaches_the_failure_and_the_report(
    pytester: pytest.Pytester, write_fixture: WriteFixture, engine: str, corrected: str
) -> None:
    write_fixture(
        "plaintext.jsonl",
        [
            entry(
                "txt_001",
                "alpha beta",
                [case("txt_001_q1", "aplha", ["not there"])],
                content_type="plaintext",
            )
        ],
    )
    pytester.makepyfile(engines=ENGINES)
    pytester.syspathinsert()
    result = pytester.runpytest("--qualbench", f"--qualbench-engine=engines:{engine}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*corrected: {corrected!r}*"])
    report = json.loads((pytester.path / ".qualbench/report.json").read_text())
    assert report["cases"][0]["corrected_query"] == corrected
