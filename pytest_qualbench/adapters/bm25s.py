"""`bm25s`: the bm25s library's BM25 over the built-in chunks (extra: bm25s).

Tokens are bm25s's own (lowercased `\\w\\w+` words); stemming and stopwords are
options: nltk's Porter stemmer, as the built-in engine's porter layer uses, or
none; bm25s's English stopword list, or none.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any, ClassVar, Literal

import bm25s
import numpy as np

from pytest_qualbench.adapters.chunked import ChunkedEngine, searchable_text, top_docs
from pytest_qualbench.engine.analysis import porter_stemmer
from pytest_qualbench.engine.types import Chunk

LAYER = "bm25s"

Stemming = Literal["porter", "none"]
Stopwords = Literal["en", "none"]
Method = Literal["lucene", "robertson", "atire", "bm25l", "bm25+"]


def porter_stems(words: list[str]) -> list[str]:
    """nltk's Porter stem of each word (bm25s hands its stemmer the whole vocabulary)."""
    stemmer = porter_stemmer()
    return [stemmer.stem(word) for word in words]


class Bm25sEngine(ChunkedEngine):
    """bm25s BM25 (default: Lucene's variant, k1 1.5, b 0.75) over title and text."""

    layers: ClassVar[tuple[str, ...]] = (LAYER,)

    def __init__(
        self,
        *,
        k1: float = 1.5,
        b: float = 0.75,
        delta: float = 0.5,
        method: Method = "lucene",
        stemmer: Stemming = "porter",
        stopwords: Stopwords = "en",
    ) -> None:
        super().__init__()
        self.k1 = k1
        self.b = b
        self.delta = delta
        self.method = method
        self.stemmer = stemmer
        self.stopwords = stopwords
        self._model: Any = None

    @property
    def config(self) -> dict[str, object]:
        return {
            "engine": "bm25s",
            "library": f"bm25s {version('bm25s')}",
            "method": self.method,
            "k1": self.k1,
            "b": self.b,
            "delta": self.delta,
            "stemmer": "nltk PorterStemmer" if self.stemmer == "porter" else "none",
            "stopwords": "bm25s English list" if self.stopwords == "en" else "none",
            "fields": "title and text as one document",
            "tie_break": "(source, position)",
        }

    def _tokens(self, texts: list[str], *, as_ids: bool) -> Any:
        return bm25s.tokenize(
            texts,
            stopwords=self.stopwords if self.stopwords == "en" else None,
            stemmer=porter_stems if self.stemmer == "porter" else None,
            return_ids=as_ids,
            show_progress=False,
        )

    def _build(self, chunks: tuple[Chunk, ...]) -> None:
        self._model = None
        if not chunks:
            return
        model = bm25s.BM25(k1=self.k1, b=self.b, delta=self.delta, method=self.method)
        texts = [searchable_text(chunk) for chunk in chunks]
        model.index(self._tokens(texts, as_ids=True), show_progress=False)
        self._model = model

    def ranked(self, query: str, kinds: frozenset[str], limit: int) -> list[tuple[int, float, str]]:
        if self._model is None:
            return []
        terms: list[str] = self._tokens([query], as_ids=False)[0]
        if not terms:
            return []
        scores = np.asarray(self._model.get_scores(terms), dtype=np.float64)
        return [
            (doc, float(scores[doc]), LAYER) for doc in top_docs(scores, self.visible(kinds), limit)
        ]
