"""The benchmark corpora by name, each a seeded builder of a `Corpus` of N chunks.

The corpus is a dimension of the peer benchmarks and their ledger (`--corpus`),
like the scale. Another generator is one more line in CORPORA: a function of
the chunk count returning entries of one chunk each and queries naming the
entry they were drawn from (corpus.Corpus).
"""

from __future__ import annotations

from collections.abc import Callable

from benchmarks import compound_corpus
from benchmarks.corpus import Corpus, build_corpus

CORPORA: dict[str, Callable[[int], Corpus]] = {
    # Software docs, log excerpts and JSON records over a Zipfian vocabulary (corpus.py).
    "prose": build_corpus,
    # Compound identifiers glued from 46 morphemes, so trigrams are shared widely: the
    # overlap that makes candidate checks costly (compound_corpus.py).
    "compound": compound_corpus.build_corpus,
}
