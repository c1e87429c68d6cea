"""The built-in engine's index as data only: named numpy arrays and one JSON document.

This is what the on-disk index cache stores, so nothing in it can run code:
arrays are read with numpy's `allow_pickle=False` and everything else is JSON.
Reading checks shapes and ranges (ValueError when they are wrong), because the
bytes come from a directory anyone with write access to the project can fill.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from pytest_qualbench.engine.bm25 import ARRAY_NAMES as POSTING_ARRAY_NAMES
from pytest_qualbench.engine.bm25 import UNKNOWN_TERM, PostingIndex
from pytest_qualbench.engine.chunk_words import ARRAY_NAMES, ChunkWords
from pytest_qualbench.engine.porter import PorterLayer
from pytest_qualbench.engine.trigram import TrigramLayer
from pytest_qualbench.engine.types import Chunk, IndexState
from pytest_qualbench.fixtures.schema import frozen_mapping

FORMAT = "pytest_qualbench.engine.snapshot 8"
# The Chunk fields in order; every one but these two is a string.
CHUNK_FIELDS = ("text", "title", "source", "kind", "position", "entry_id", "metadata")
_COLUMN_TYPES = {"position": int, "metadata": dict}


@dataclass(frozen=True)
class Restored:
    """An engine's indexed state, rebuilt from an `IndexState`."""

    chunks: tuple[Chunk, ...]
    warnings: tuple[str, ...]
    porter: PorterLayer
    trigram: TrigramLayer


def chunk_columns(chunks: Sequence[Chunk]) -> dict[str, list[Any]]:
    """The chunks as one list per field: restored with a type check per column, not per chunk."""
    columns: dict[str, list[Any]] = {
        name: [getattr(chunk, name) for chunk in chunks] for name in CHUNK_FIELDS
    }
    columns["metadata"] = [dict(metadata) for metadata in columns["metadata"]]
    return columns


def chunks_of(columns: Any) -> tuple[Chunk, ...]:
    """The chunks `chunk_columns` stored; ValueError when the columns are not theirs.

    Checked and built column by column in C (`map`): one record at a time, the
    checks and calls took 1.5 s of restoring 10^5 chunks.
    """
    if not isinstance(columns, dict) or set(columns) != set(CHUNK_FIELDS):
        raise ValueError("the chunks are not one column per field")
    if not all(isinstance(column, list) for column in columns.values()):
        raise ValueError("a chunk column is not a list")
    if len({len(column) for column in columns.values()}) > 1:
        raise ValueError("the chunk columns differ in length")
    for name in CHUNK_FIELDS:
        if not set(map(type, columns[name])) <= {_COLUMN_TYPES.get(name, str)}:
            raise ValueError(f"the chunks' {name} column holds values of the wrong type")
    metadata = map(frozen_mapping, columns["metadata"])
    fields = [columns[name] for name in CHUNK_FIELDS[:-1]]
    return tuple(map(Chunk, *fields, metadata))


def text_arrays(name: str, texts: Sequence[str]) -> dict[str, npt.NDArray[Any]]:
    """Texts (the chunks', the trigram layer's words) as one UTF-8 array `name` and each
    text's end, in characters, as `name`_ends.

    As JSON strings they were most of a 160 MB document at 10^5 chunks, whose
    parse was a third of a load; decoding one array and slicing it is a tenth.
    """
    joined = "".join(texts).encode("utf-8", "surrogatepass")
    ends = itertools.accumulate(len(text) for text in texts)
    return {
        name: np.frombuffer(joined, dtype=np.uint8),
        f"{name}_ends": np.fromiter(ends, dtype=np.int64, count=len(texts)),
    }


def texts_of(arrays: Mapping[str, Any], name: str) -> list[str]:
    """The texts `text_arrays` stored as `name`; ValueError when the arrays are not theirs."""
    joined_bytes, ends = _array(arrays, name), _array(arrays, f"{name}_ends")
    if joined_bytes.dtype != np.uint8 or joined_bytes.ndim != 1 or ends.dtype != np.int64:
        raise ValueError(f"the {name} arrays have the wrong types")
    if ends.ndim != 1:
        raise ValueError(f"the {name} arrays have the wrong types")
    # Decoded straight from the array's buffer (a mapped cache file): no copy into bytes first.
    joined = str(np.ascontiguousarray(joined_bytes).data, "utf-8", "surrogatepass")
    bounds = [0, *ends.tolist()]
    if bounds[-1] != len(joined) or any(end < start for start, end in itertools.pairwise(bounds)):
        raise ValueError(f"the {name} ends do not span the texts")
    return [joined[start:end] for start, end in itertools.pairwise(bounds)]


def index_state(
    chunks: Sequence[Chunk], warnings: Sequence[str], porter: PorterLayer, trigram: TrigramLayer
) -> IndexState:
    """Everything a search needs; derived state (the fuzzy vocabulary, kinds) is rebuilt."""
    arrays: dict[str, npt.NDArray[Any]] = {
        "porter.word_frequency": np.fromiter(porter.word_frequency.values(), dtype=np.int64),
        # Each word's term, UNKNOWN_TERM for stopwords (which are not indexed).
        "porter.word_terms": np.fromiter(
            (porter.word_terms.get(word, UNKNOWN_TERM) for word in porter.word_frequency),
            dtype=np.int64,
        ),
        "trigram.keys": trigram.keys,
    }
    for prefix, index in (("porter.", porter.index), ("trigram.", trigram.index)):
        arrays.update({prefix + name: array for name, array in index.arrays().items()})
    arrays.update(
        {f"trigram.words.{name}": array for name, array in trigram.words.arrays().items()}
    )
    arrays.update(text_arrays("trigram.words", trigram.words.words))
    columns = chunk_columns(chunks)
    arrays.update(text_arrays("chunks.text", columns["text"]))
    document = {
        "format": FORMAT,
        "chunks": {name: column for name, column in columns.items() if name != "text"},
        "warnings": list(warnings),
        # Both in id (insertion) order, so the dictionaries come back identical.
        "porter_words": list(porter.word_frequency),
        "porter_terms": list(porter.term_ids),
        "porter_identifier_parts": sorted(porter.identifier_parts),
    }
    return IndexState(arrays=arrays, document=document)


def restored(state: IndexState, *, k1: float, b: float, k3: float) -> Restored:
    """The engine's indexed state from `index_state`'s output; ValueError when malformed."""
    document = state.document
    if document.get("format") != FORMAT:
        raise ValueError("not an index snapshot of this format")
    columns = document.get("chunks")
    if not isinstance(columns, dict) or "text" in columns:
        raise ValueError("the chunks are not columns beside their texts")
    chunks = chunks_of({**columns, "text": texts_of(state.arrays, "chunks.text")})
    warnings = tuple(_strings(document, "warnings"))
    words = _strings(document, "porter_words")
    terms = _strings(document, "porter_terms")
    identifier_parts = frozenset(_strings(document, "porter_identifier_parts"))
    frequency = _array(state.arrays, "porter.word_frequency")
    if frequency.dtype != np.int64 or frequency.shape != (len(words),):
        raise ValueError("porter word frequencies do not match the words")
    word_terms = _array(state.arrays, "porter.word_terms")
    if word_terms.dtype != np.int64 or word_terms.shape != (len(words),):
        raise ValueError("porter word terms do not match the words")
    if len(words) and (word_terms.min() < UNKNOWN_TERM or word_terms.max() >= len(terms)):
        raise ValueError("porter word terms out of range")
    porter_index = PostingIndex.stored(_prefixed(state.arrays, "porter."), k1=k1, b=b)
    if porter_index.term_count != len(terms) or porter_index.size != len(chunks):
        raise ValueError("porter postings do not match the terms or the chunks")
    porter = PorterLayer.stored(
        dict(zip(words, frequency.tolist(), strict=True)),
        identifier_parts,
        {term: term_id for term_id, term in enumerate(terms)},
        {
            word: term
            for word, term in zip(words, word_terms.tolist(), strict=True)
            if term != UNKNOWN_TERM
        },
        porter_index,
        k3=k3,
    )
    trigram_index = PostingIndex.stored(_prefixed(state.arrays, "trigram."), k1=k1, b=b)
    trigram_words = ChunkWords.stored(
        texts_of(state.arrays, "trigram.words"),
        {name: _array(state.arrays, f"trigram.words.{name}") for name in ARRAY_NAMES},
        len(chunks),
    )
    trigram = TrigramLayer.stored(
        _array(state.arrays, "trigram.keys"), trigram_index, trigram_words
    )
    return Restored(chunks, warnings, porter, trigram)


def _prefixed(arrays: Mapping[str, Any], prefix: str) -> dict[str, npt.NDArray[Any]]:
    return {name: _array(arrays, prefix + name) for name in POSTING_ARRAY_NAMES}


def _array(arrays: Mapping[str, Any], name: str) -> npt.NDArray[Any]:
    array = arrays.get(name)
    if not isinstance(array, np.ndarray):
        raise ValueError(f"array {name!r} is missing")
    return array


def _list(document: Mapping[str, Any], name: str) -> list[Any]:
    value = document.get(name)
    if not isinstance(value, list):
        raise ValueError(f"{name!r} is not a list")
    return value


def _strings(document: Mapping[str, Any], name: str) -> list[str]:
    values = _list(document, name)
    if not all(isinstance(value, str) for value in values):
        raise ValueError(f"{name!r} holds something other than strings")
    return values
