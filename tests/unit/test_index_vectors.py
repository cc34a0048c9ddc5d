"""lochkit's index serialisation against Nessie 0.108.1's, byte for byte (tests/vectors/README.md)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from persist_spi.ids import ObjId
from persist_spi.indexes.action import Action
from persist_spi.indexes.elements import CommitOp, IndexElement
from persist_spi.indexes.store_index import (
    EMPTY_IMMUTABLE_INDEX,
    deserialize_index,
    index_from_elements,
    new_index,
)
from persist_spi.keys import key

VECTORS = json.loads((Path(__file__).parents[1] / "vectors" / "nessie-index.json").read_text())
_ACTIONS = {a.value: a for a in Action}


def element(raw: dict[str, Any]) -> IndexElement:
    return IndexElement(
        key(*raw["key"]),
        CommitOp(
            _ACTIONS[raw["action"]],
            raw["payload"],
            ObjId.from_hex(raw["value"]) if raw["value"] else None,
            uuid.UUID(raw["content_id"]) if raw["content_id"] else None,
        ),
    )


def _vectors(version: int) -> list[dict[str, Any]]:
    """Every vector of a format, including ``utf16_order_differs`` ones (keys whose UTF-16 order,
    Nessie's and lochkit's, differs from code-point order)."""
    return [v for v in VECTORS["vectors"] if v["format_version"] == version]


@pytest.mark.parametrize("vector", _vectors(2), ids=lambda v: v["name"])
def test_serialisation_matches_nessie(vector: dict[str, Any]) -> None:
    elements = [element(e) for e in vector["elements"]]
    built = index_from_elements(elements) if elements else new_index()
    assert built.serialize().hex() == vector["serialized_hex"]
    decoded = deserialize_index(bytes.fromhex(vector["serialized_hex"]))
    assert list(decoded) == elements
    assert decoded.estimated_serialized_size() == vector["deserialized_estimated_serialized_size"]


@pytest.mark.parametrize("vector", _vectors(2), ids=lambda v: v["name"])
def test_fresh_size_estimate_matches_nessie(vector: dict[str, Any]) -> None:
    index = new_index()
    for raw in vector["elements"]:
        index.add(element(raw))
    assert index.estimated_serialized_size() == vector["estimated_serialized_size"]


@pytest.mark.parametrize("vector", _vectors(1), ids=lambda v: v["name"])
def test_legacy_version_one_is_read(vector: dict[str, Any]) -> None:
    decoded = deserialize_index(bytes.fromhex(vector["serialized_hex"]))
    assert list(decoded) == [element(e) for e in vector["elements"]]


def test_empty_immutable_index() -> None:
    assert EMPTY_IMMUTABLE_INDEX.serialize().hex() == VECTORS["empty_immutable"]["serialized_hex"]
    assert (
        EMPTY_IMMUTABLE_INDEX.estimated_serialized_size()
        == VECTORS["empty_immutable"]["estimated_serialized_size"]
    )


@pytest.mark.parametrize(
    "division", VECTORS["divisions"], ids=lambda d: f"{d['index']}-{d['parts_requested']}"
)
def test_divide_splits_like_nessie(division: dict[str, Any]) -> None:
    source = next(v for v in VECTORS["vectors"] if v["name"] == division["index"])
    index = deserialize_index(bytes.fromhex(source["serialized_hex"]))
    parts = index.divide(division["parts_requested"])
    assert len(parts) == len(division["parts"])
    for part, expected in zip(parts, division["parts"], strict=True):
        assert part.first() == key(*expected["first_key"])
        assert part.last() == key(*expected["last_key"])
        assert part.element_count() == expected["element_count"]
        assert part.serialize().hex() == expected["serialized_hex"]


@pytest.mark.parametrize("history", VECTORS["estimate_histories"], ids=lambda h: h["name"])
def test_size_estimates_evolve_like_nessie(history: dict[str, Any]) -> None:
    start = history["start_serialized_hex"]
    index = deserialize_index(bytes.fromhex(start)) if start else new_index()
    assert index.estimated_serialized_size() == history["start_estimated_serialized_size"]
    for step in history["steps"]:
        if step["op"] == "add":
            returned = index.add(element(step["element"]))
        elif step["op"] == "remove":
            returned = index.remove(key(*step["key"]))
        else:
            raise AssertionError(f"unknown step {step['op']}")
        assert returned == step["returned"]
        assert index.estimated_serialized_size() == step["estimated_serialized_size"], step
