"""Keys sort as Nessie sorts them (Java's ``String.compareTo``: by UTF-16 code unit), checked against
Nessie 0.108.1's own order, index bytes, index divisions and commit ids for keys where that order
differs from code-point order (tests/vectors/nessie-key-order.json, see tests/vectors/README.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backends.inmemory import InMemoryBackendFactory
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.indexes.elements import IndexElement
from persist_spi.indexes.layered import LayeredIndex
from persist_spi.indexes.store_index import deserialize_index, index_from_elements, new_index
from persist_spi.indexes.striped import StripedIndex
from persist_spi.keys import StoreKey, key
from persist_spi.logic.commit_logic import CommitLogic

from .test_commit_vectors import replay_chain
from .test_index_vectors import element

VECTORS = json.loads((Path(__file__).parents[1] / "vectors" / "nessie-key-order.json").read_text())
GIVEN = [key(*k) for k in VECTORS["given_keys"]]
SORTED = [key(*k) for k in VECTORS["sorted_keys"]]
INDEX = VECTORS["index"]


def test_the_vectors_order_differs_from_code_point_order() -> None:
    assert sorted(SORTED) != SORTED
    assert sorted(GIVEN, key=lambda k: k.encode("utf-16-be", "surrogatepass")) == SORTED


def test_index_keys_sort_as_nessie_sorts_them() -> None:
    elements = [element(e) for e in INDEX["elements"]]
    assert [e.key for e in elements] == SORTED
    assert index_from_elements(list(reversed(elements))).keys() == SORTED
    added = new_index()
    for e in sorted(elements, key=lambda e: GIVEN.index(e.key)):
        added.add(e)
    assert added.keys() == SORTED


def test_index_bytes_match_nessie() -> None:
    elements = [element(e) for e in INDEX["elements"]]
    built = index_from_elements(elements)
    assert built.serialize().hex() == INDEX["serialized_hex"]
    assert built.estimated_serialized_size() == INDEX["estimated_serialized_size"]
    decoded = deserialize_index(bytes.fromhex(INDEX["serialized_hex"]))
    assert list(decoded) == elements


def test_lookups_and_ranges_find_every_key_of_nessies_index() -> None:
    index = deserialize_index(bytes.fromhex(INDEX["serialized_hex"]))
    _check_lookups_and_ranges(index)


@pytest.mark.parametrize("division", VECTORS["divisions"], ids=lambda d: f"{d['parts_requested']}-parts")
def test_divide_splits_like_nessie(division: dict[str, Any]) -> None:
    index = deserialize_index(bytes.fromhex(INDEX["serialized_hex"]))
    parts = index.divide(division["parts_requested"])
    for part, expected in zip(parts, division["parts"], strict=True):
        assert (part.first(), part.last()) == (key(*expected["first_key"]), key(*expected["last_key"]))
        assert part.element_count() == expected["element_count"]
        assert part.serialize().hex() == expected["serialized_hex"]
    # Nessie's stripes, as one striped index: every lookup and range finds what the flat index has.
    _check_lookups_and_ranges(StripedIndex(parts))


def test_layered_index_merges_in_nessies_order() -> None:
    elements = [element(e) for e in INDEX["elements"]]
    reference = index_from_elements(elements[0::2])
    updates = index_from_elements(elements[1::2])
    layered = LayeredIndex(reference, updates)
    assert layered.keys() == SORTED
    assert (layered.first(), layered.last()) == (SORTED[0], SORTED[-1])


def test_diff_merges_two_indexes_in_nessies_order() -> None:
    elements = [element(e) for e in INDEX["elements"]]
    changed = {e.key for e in elements[1::3]}
    before = index_from_elements([e for i, e in enumerate(elements) if i % 4 != 0])
    after = index_from_elements(
        [e if e.key not in changed else IndexElement(e.key, e.op._replace(value=None)) for e in elements]
    )
    logic = CommitLogic(AdapterPersist(InMemoryBackendFactory().create(), StoreConfig()))
    diff = [d.key for d in logic.diff(before, after)]
    assert diff == [k for i, k in enumerate(SORTED) if i % 4 == 0 or k in changed]


@pytest.mark.parametrize("chain", VECTORS["chains"], ids=lambda c: c["name"])
def test_commit_chain_replays_with_nessies_ids(chain: dict[str, Any]) -> None:
    replay_chain(chain)


def _check_lookups_and_ranges(index: Any) -> None:
    for i, k in enumerate(SORTED):
        found = index.get(k)
        assert found is not None, k
        assert found.key == k
        assert index.contains(k)
        assert [e.key for e in index.iterate(k)] == SORTED[i:]
        assert [e.key for e in index.iterate(SORTED[0], k)] == SORTED[: i + 1]
    assert index.get(StoreKey("\U0001f600\U0001f600")) is None
    assert [e.key for e in index.iterate(key("k"), key("k"))] == [k for k in SORTED if k.startswith("k")]
