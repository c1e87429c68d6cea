"""Every system built over one corpus at one scale, in this process, for the query benchmarks.

Only one (corpus, scale) and its indexes are held at once: the 100k indexes take
gigabytes, and the tests run scale by scale and corpus by corpus (see conftest),
so moving to the next frees the previous one. Build times and memory are
measured in fresh processes instead (fresh_build), never on these.
"""

from __future__ import annotations

from benchmarks.corpora import CORPORA
from benchmarks.corpus import SCALES, Corpus
from benchmarks.systems import MAKERS, SYSTEMS, System


class Workbench:
    def __init__(self) -> None:
        self._held: tuple[str, str] = ("", "")
        self._corpus: Corpus | None = None
        self._built: dict[str, System] = {}

    def corpus(self, corpus_name: str, scale: str) -> Corpus:
        if (corpus_name, scale) != self._held or self._corpus is None:
            # Free the previous corpus and scale before building the next one.
            self._built = {}
            self._corpus = None
            self._corpus = CORPORA[corpus_name](SCALES[scale])
            self._held = (corpus_name, scale)
        return self._corpus

    def systems(self, corpus_name: str, scale: str) -> dict[str, System]:
        """Every system, built over the corpus at the scale (once per corpus and scale)."""
        corpus = self.corpus(corpus_name, scale)
        for system in SYSTEMS:
            if system not in self._built:
                built = MAKERS[system]()
                built.build(corpus)
                self._built[system] = built
        return self._built
