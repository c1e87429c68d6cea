"""LlamaIndex retrievers as engines (extra: llamaindex).

# my_retriever.py; run with --qualbench-engine=my_retriever:engine
from llama_index.core import VectorStoreIndex
from pytest_qualbench.adapters.llamaindex import nodes, retriever

def build(entries):
    index = VectorStoreIndex(nodes(entries), embed_model=MyEmbedding())
    return index.as_retriever(similarity_top_k=10)

engine = retriever(build)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from importlib.metadata import version
from typing import Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import TextNode

from pytest_qualbench.adapters.retrievers import RetrieverEngine, chunk_metadata
from pytest_qualbench.engine.chunking import chunk_entries
from pytest_qualbench.fixtures import Entry

RetrieverFactory = Callable[[Sequence[Entry]], BaseRetriever]


def nodes(entries: Sequence[Entry]) -> list[TextNode]:
    """The built-in chunks of the entries as TextNodes; only the title is embedded with the text."""
    chunks, _ = chunk_entries(entries)
    made = []
    for chunk in chunks:
        metadata = chunk_metadata(chunk)
        made.append(
            TextNode(
                id_=f"{chunk.source}#{chunk.position}",
                text=chunk.text,
                metadata=metadata,
                excluded_embed_metadata_keys=[key for key in metadata if key != "title"],
                excluded_llm_metadata_keys=list(metadata),
            )
        )
    return made


class LlamaindexEngine(RetrieverEngine[BaseRetriever]):
    """`retriever.retrieve(query)`; each node's text, metadata and score become a Result."""

    @property
    def config(self) -> dict[str, object]:
        return {
            "engine": "llamaindex",
            "library": f"llama-index-core {version('llama-index-core')}",
            "factory": self.factory_name(),
        }

    def _retrieve(
        self, retriever: BaseRetriever, query: str
    ) -> list[tuple[str, Mapping[str, Any], float | None]]:
        return [
            (found.node.get_content(), found.node.metadata, found.score)
            for found in retriever.retrieve(query)
        ]


def retriever(factory: RetrieverFactory) -> Callable[[], LlamaindexEngine]:
    """An engine factory for `--qualbench-engine`: builds the retriever with `factory(entries)`."""

    def make_engine() -> LlamaindexEngine:
        return LlamaindexEngine(factory)

    return make_engine
