"""Every system built over one scale's corpus, in this process, for the query benchmarks.

Only one scale's corpus and indexes are held at once: the 100k indexes take
gigabytes, and the tests run scale by scale (see conftest), so moving to the
next scale frees the previous one. Build times and memory are measured in
fresh processes instead (fresh_build), never on these.
"""

from __future__ import annotations

from benchmarks.corpus import SCALES, Corpus, build_corpus
from benchmarks.systems import MAKERS, SYSTEMS, System


class Workbench:
    def __init__(self) -> None:
        self._scale = ""
        self._corpus: Corpus | None = None
        self._built: dict[str, System] = {}

    def corpus(self, scale: str) -> Corpus:
        if scale != self._scale or self._corpus is None:
            # Free the previous scale before building the next one.
            self._built = {}
            self._corpus = None
            self._corpus = build_corpus(SCALES[scale])
            self._scale = scale
        return self._corpus

    def systems(self, scale: str) -> dict[str, System]:
        """Every system, built over the scale's corpus (once per scale)."""
        corpus = self.corpus(scale)
        for system in SYSTEMS:
            if system not in self._built:
                built = MAKERS[system]()
                built.build(corpus)
                self._built[system] = built
        return self._built
