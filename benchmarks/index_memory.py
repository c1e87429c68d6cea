"""What a built engine's retained memory is made of, part by part, in a fresh process.

`python -m benchmarks.index_memory CORPUS CHUNKS` builds the built-in engine over the
first CHUNKS chunks of CORPUS (`benchmarks.corpora`) as `fresh_build` does (a ten-entry
warm-up build first, RSS taken just before the build and again after it and a
`gc.collect()`), then walks the engine's objects and prints one JSON line: the
retained RSS, and the bytes each part holds (`memory_parts`), largest first.

A part is the path of attributes from the engine to what it holds, to the depth
where the big arrays sit (`porter.index.weights`, `trigram.words`); each object is
counted once, at the shallowest path that reaches it (the first of those in
attribute order), and a numpy array counts its own
buffer (a view counts nothing: its base is counted where the base is reached).
What the corpus itself holds (texts the chunks share with the entries) is the
benchmark's, below the RSS baseline, and is counted for no part. The RSS not in any
part is the allocator's: free pages it keeps, and its per-block overhead.
"""

from __future__ import annotations

import gc
import json
import sys
import types
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from benchmarks.corpora import CORPORA
from benchmarks.corpus import Corpus
from benchmarks.fresh_build import WARM_UP_CHUNKS, reset_peak, status_mb
from pytest_qualbench.engine import Engine

MB = 1024 * 1024
# Parts are named down to this many attributes below the engine.
PART_DEPTH = 3
# Shared by every object of a kind, not held by one index: never counted (None and the
# booleans are the interpreter's too).
SHARED_TYPES = (
    type,
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    bool,
    types.NoneType,
)


@dataclass(frozen=True)
class Part:
    """Bytes held under one path of attributes from the engine."""

    path: str
    nbytes: int


def own_bytes(value: object) -> int:
    """The bytes an object holds itself: an array its buffer when it owns one, else
    `sys.getsizeof` (which, for an array that owns its data, includes the buffer)."""
    if isinstance(value, np.ndarray):
        return sys.getsizeof(value) if value.base is None else sys.getsizeof(value) - value.nbytes
    return sys.getsizeof(value)


def children(value: object) -> Iterator[tuple[str, object]]:
    """The objects `value` holds, each with the name it is held under: attributes by
    name, container items by their kind (`[]` for a sequence's or set's items, `{}`
    for a mapping's keys and values), an array's base as `base`."""
    if isinstance(value, np.ndarray):
        if value.base is not None:
            yield "base", value.base
        return
    if isinstance(value, dict | types.MappingProxyType):
        for key, item in value.items():
            yield "{}", key
            yield "{}", item
        return
    if isinstance(value, list | tuple | set | frozenset):
        fields = getattr(value, "_fields", None)
        if fields is not None:
            yield from zip(fields, value, strict=True)
            return
        for item in value:
            yield "[]", item
        return
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict):
        yield from ((name.lstrip("_"), item) for name, item in attributes.items())
    for slot in getattr(type(value), "__slots__", ()):
        if hasattr(value, slot):
            yield slot.lstrip("_"), getattr(value, slot)


def reachable(roots: Iterable[object]) -> set[int]:
    """The ids of every object reachable from the roots through `children`."""
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        value = stack.pop()
        if id(value) in seen or isinstance(value, SHARED_TYPES):
            continue
        seen.add(id(value))
        stack.extend(item for _, item in children(value))
    return seen


def memory_parts(root: object, excluded: Iterable[object] = ()) -> list[Part]:
    """The bytes held under each path from `root` (PART_DEPTH attributes deep), largest
    first; an object reachable from `excluded` is nobody's part."""
    seen = reachable(excluded)
    totals: dict[str, int] = {}
    # Breadth first, so that an object two parts share is counted at the shallower one
    # (the vocabulary's words under the porter layer, not under the corrector's list).
    queue: deque[tuple[str, object]] = deque(children(root))
    seen.add(id(root))
    while queue:
        path, value = queue.popleft()
        if id(value) in seen or isinstance(value, SHARED_TYPES):
            continue
        seen.add(id(value))
        totals[path] = totals.get(path, 0) + own_bytes(value)
        for name, item in children(value):
            named = [*path.split("."), name] if name not in ("[]", "{}") else path.split(".")
            queue.append((".".join(named[:PART_DEPTH]), item))
    parts = [Part(path, nbytes) for path, nbytes in totals.items()]
    return sorted(parts, key=lambda part: (-part.nbytes, part.path))


def measure(corpus_name: str, chunks: int) -> dict[str, object]:
    corpus = CORPORA[corpus_name](chunks)
    Engine().index(Corpus(corpus.entries[:WARM_UP_CHUNKS], corpus.queries).entries)
    gc.collect()
    engine = Engine()
    baseline = status_mb("VmRSS")
    reset_peak()
    engine.index(corpus.entries)
    gc.collect()
    retained = status_mb("VmRSS") - baseline
    parts = memory_parts(engine, excluded=[corpus])
    counted = sum(part.nbytes for part in parts) / MB
    return {
        "corpus": corpus_name,
        "chunks": chunks,
        "retained_mb": round(retained, 1),
        "parts_mb": round(counted, 1),
        "allocator_mb": round(retained - counted, 1),
        "parts": {part.path: round(part.nbytes / MB, 2) for part in parts if part.nbytes >= MB},
        "smaller_parts_mb": round(sum(p.nbytes for p in parts if p.nbytes < MB) / MB, 2),
    }


def main() -> None:
    corpus_name, chunks = sys.argv[1], int(sys.argv[2])
    sys.stdout.write(json.dumps(measure(corpus_name, chunks)) + "\n")


if __name__ == "__main__":
    main()
