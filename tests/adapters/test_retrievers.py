"""LangChain and LlamaIndex retrievers as engines, with the frameworks' in-memory stores.

The embedding is deterministic and offline: a hashed bag of lowercased words.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence

import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever as LangchainRetriever
from langchain_core.vectorstores import InMemoryVectorStore
from llama_index.core import VectorStoreIndex
from llama_index.core.base.base_retriever import BaseRetriever as LlamaRetriever
from llama_index.core.embeddings import BaseEmbedding

from pytest_qualbench.adapters import langchain, llamaindex
from pytest_qualbench.engine.types import ALL_KINDS
from pytest_qualbench.fixtures import Entry
from tests.adapters.conftest import MakeEntry

DIMENSIONS = 64


def hashed_words(text: str) -> list[float]:
    """Word counts hashed into DIMENSIONS buckets (md5, so stable across processes)."""
    vector = [0.0] * DIMENSIONS
    for word in re.findall(r"\w+", text.lower()):
        vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % DIMENSIONS] += 1.0
    return vector


class HashedWords(Embeddings):
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [hashed_words(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return hashed_words(text)


class LlamaHashedWords(BaseEmbedding):
    def _get_text_embedding(self, text: str) -> list[float]:
        return hashed_words(text)

    def _get_query_embedding(self, query: str) -> list[float]:
        return hashed_words(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return hashed_words(query)


def langchain_store(entries: Sequence[Entry]) -> LangchainRetriever:
    store = InMemoryVectorStore.from_documents(
        langchain.documents(entries), embedding=HashedWords()
    )
    retriever: LangchainRetriever = store.as_retriever(search_kwargs={"k": 3})
    return retriever


def llamaindex_store(entries: Sequence[Entry]) -> LlamaRetriever:
    index = VectorStoreIndex(llamaindex.nodes(entries), embed_model=LlamaHashedWords())
    return index.as_retriever(similarity_top_k=3)


def corpus(make_entry: MakeEntry) -> list[Entry]:
    return [
        make_entry("a", "# Failover\n\nPromote the replica when the primary is down."),
        make_entry("b", "# Cache\n\nEvictions spike when memory is full.", kind="ephemeral"),
        make_entry("c", "# Lunch\n\nPizza on fridays."),
    ]


def test_langchain_documents_become_results(make_entry: MakeEntry) -> None:
    engine = langchain.retriever(langchain_store)()
    engine.index(corpus(make_entry))
    first = engine.search("promote the replica", kinds=ALL_KINDS)[0]
    assert (first.text, first.title, first.source, first.position, first.layer) == (
        "# Failover\n\nPromote the replica when the primary is down.",
        "Failover",
        "bench-a",
        0,
        None,
    )


def test_llamaindex_nodes_become_results_with_their_scores(make_entry: MakeEntry) -> None:
    engine = llamaindex.retriever(llamaindex_store)()
    engine.index(corpus(make_entry))
    results = engine.search("promote the replica", kinds=ALL_KINDS)
    assert (results[0].source, results[0].title) == ("bench-a", "Failover")
    assert results[0].text.endswith("Promote the replica when the primary is down.")
    assert results[0].score > results[1].score


def test_kinds_and_limit_apply_to_the_retrieved_documents(make_entry: MakeEntry) -> None:
    for make_engine in (
        langchain.retriever(langchain_store),
        llamaindex.retriever(llamaindex_store),
    ):
        engine = make_engine()
        engine.index(corpus(make_entry))
        durable = {result.source for result in engine.search("evictions memory")}
        assert "bench-b" not in durable
        assert len(engine.search("evictions memory", limit=1, kinds=ALL_KINDS)) == 1


def test_config_names_the_framework_and_the_factory() -> None:
    config = langchain.retriever(langchain_store)().config
    assert config["factory"] == "tests.adapters.test_retrievers:langchain_store"
    assert str(config["library"]).startswith("langchain-core ")
    assert str(llamaindex.retriever(llamaindex_store)().config["library"]).startswith(
        "llama-index-core "
    )


RETRIEVER_MODULE = """
from tests.adapters.test_retrievers import langchain_store, llamaindex_store
from pytest_qualbench.adapters import langchain, llamaindex

langchain_engine = langchain.retriever(langchain_store)
llamaindex_engine = llamaindex.retriever(llamaindex_store)
"""


@pytest.mark.parametrize("engine", ["langchain_engine", "llamaindex_engine"])
def test_a_retriever_runs_the_benchmark_without_expected_layers(
    pytester: pytest.Pytester, engine: str
) -> None:
    pytester.makepyfile(myretrievers=RETRIEVER_MODULE)
    pytester.syspathinsert()
    cases = [
        {"case_id": "q1", "query": "promote the replica", "needles": ["Promote the replica"],
         "expected_rank_ceiling": 1},
        {"case_id": "q2", "query": "evictions when memory is full", "needles": ["Evictions spike"],
         "expected_rank_ceiling": 1},
    ]  # fmt: skip
    line = {
        "id": "md_001",
        "content_type": "markdown",
        "haystack": "# Failover\n\nPromote the replica.\n\n# Cache\n\nEvictions spike when memory is full.",
        "source_label": "runbook",
        "source_kind": "durable",
        "cases": cases,
    }
    (pytester.path / "bench_fixtures").mkdir()
    (pytester.path / "bench_fixtures" / "docs.jsonl").write_text(json.dumps(line) + "\n")
    result = pytester.runpytest("--qualbench", f"--qualbench-engine=myretrievers:{engine}")
    result.assert_outcomes(passed=2)
