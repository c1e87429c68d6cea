"""The compound corpus is deterministic, and a smaller scale is a prefix of a larger one."""

from __future__ import annotations

from benchmarks.compound_corpus import SCALES, build_corpus
from benchmarks.corpus import BLOCK_CHUNKS
from pytest_qualbench.engine.chunking import chunk_entries


def test_same_corpus_twice() -> None:
    assert build_corpus(SCALES["1k"]) == build_corpus(SCALES["1k"])


def test_1k_is_a_prefix_of_a_larger_scale() -> None:
    # A scale ending mid-block as well: chunk i must not depend on how many follow it.
    small = build_corpus(SCALES["1k"])
    large = build_corpus(2 * BLOCK_CHUNKS + BLOCK_CHUNKS // 2)
    assert large.entries[: len(small.entries)] == small.entries
    assert large.queries == small.queries
    assert len({entry.id for entry in large.entries}) == len(large.entries)


def test_queries_come_from_their_source_chunk() -> None:
    corpus = build_corpus(SCALES["1k"])
    texts = {entry.id: entry.haystack for entry in corpus.entries}
    typos = 0
    for query in corpus.queries:
        words = query.text.split()
        assert 2 <= len(words) <= 4
        missing = [word for word in words if word not in texts[query.source_entry_id]]
        # A word with a dropped letter may still be a substring of the chunk.
        assert len(missing) <= query.has_typo
        typos += query.has_typo
    assert 0.15 < typos / len(corpus.queries) < 0.35


def test_one_entry_is_one_chunk() -> None:
    entries = build_corpus(SCALES["1k"]).entries
    chunks, _ = chunk_entries(entries)
    assert len(chunks) == len(entries)
