"""LangChain retrievers as engines (extra: langchain).

# my_retriever.py; run with --qualbench-engine=my_retriever:engine
from langchain_core.vectorstores import InMemoryVectorStore
from pytest_qualbench.adapters.langchain import documents, retriever

def build(entries):
    store = InMemoryVectorStore.from_documents(documents(entries), embedding=MyEmbeddings())
    return store.as_retriever(search_kwargs={"k": 10})

engine = retriever(build)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from importlib.metadata import version
from typing import Any

from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from pytest_qualbench.adapters.retrievers import RetrieverEngine, chunk_metadata
from pytest_qualbench.engine.chunking import chunk_entries
from pytest_qualbench.fixtures import Entry

RetrieverFactory = Callable[[Sequence[Entry]], BaseRetriever]


def documents(entries: Sequence[Entry]) -> list[Document]:
    """The built-in chunks of the entries as Documents, their keys in the metadata."""
    chunks, _ = chunk_entries(entries)
    return [Document(page_content=chunk.text, metadata=chunk_metadata(chunk)) for chunk in chunks]


class LangchainEngine(RetrieverEngine[BaseRetriever]):
    """`retriever.invoke(query)`; page_content becomes the text, metadata title and source."""

    @property
    def config(self) -> dict[str, object]:
        return {
            "engine": "langchain",
            "library": f"langchain-core {version('langchain-core')}",
            "factory": self.factory_name(),
        }

    def _retrieve(
        self, retriever: BaseRetriever, query: str
    ) -> list[tuple[str, Mapping[str, Any], float | None]]:
        return [
            (document.page_content, document.metadata, None) for document in retriever.invoke(query)
        ]


def retriever(factory: RetrieverFactory) -> Callable[[], LangchainEngine]:
    """An engine factory for `--qualbench-engine`: builds the retriever with `factory(entries)`."""

    def make_engine() -> LangchainEngine:
        return LangchainEngine(factory)

    return make_engine
