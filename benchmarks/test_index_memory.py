"""The memory account: each object counted once, at the shallowest path, arrays by buffer."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from benchmarks.index_memory import memory_parts, own_bytes
from pytest_qualbench.engine import Engine
from pytest_qualbench.fixtures.schema import Entry


@dataclass
class Holder:
    first: object
    second: object


def parts_of(root: object, excluded: list[object] | None = None) -> dict[str, int]:
    return {part.path: part.nbytes for part in memory_parts(root, excluded or [])}


def test_an_array_owning_its_buffer_counts_it_and_a_view_counts_only_its_header() -> None:
    owner = np.zeros(1000, dtype=np.int64)
    view = owner[10:20]
    assert own_bytes(owner) == sys.getsizeof(owner) >= 8000
    assert own_bytes(view) == sys.getsizeof(view) - view.nbytes < 200


def test_a_shared_object_is_counted_once_at_the_shallower_path() -> None:
    array = np.zeros(1000, dtype=np.int64)
    root = Holder(first=Holder(first=[array], second=None), second=array)
    parts = parts_of(root)
    # `second` reaches the array one level up from `first`'s list.
    assert parts == {
        "second": own_bytes(array),
        "first": sys.getsizeof(root.first),
        "first.first": sys.getsizeof([array]),
    }


def test_a_view_leads_to_its_base_which_is_counted_under_the_view_path() -> None:
    base = np.zeros(1000, dtype=np.int64)
    root = Holder(first=base[:10], second=None)
    parts = parts_of(root)
    assert parts["first.base"] == own_bytes(base)
    assert parts["first"] == own_bytes(root.first)


def test_what_the_excluded_objects_reach_is_nobodys() -> None:
    text = "x" * 10_000
    shared = [text]
    root = Holder(first=shared, second="y" * 100)
    parts = parts_of(root, excluded=[text])
    assert parts["first"] == sys.getsizeof(shared)
    assert parts["second"] == sys.getsizeof("y" * 100)


def test_a_built_engine_is_mostly_its_two_layers() -> None:
    entries = [
        Entry(
            f"e{number}",
            "plaintext",
            f"alpha beta_{number} gamma delta {number} epsilon",
            f"s{number}",
            "durable",
            (),
            "f.jsonl",
            number + 1,
        )
        for number in range(200)
    ]
    engine = Engine()
    engine.index(entries)
    parts = parts_of(engine, excluded=[entries])
    layers = sum(n for path, n in parts.items() if path.startswith(("porter", "trigram")))
    assert layers > 0.5 * sum(parts.values())
    assert all(n > 0 for n in parts.values())
