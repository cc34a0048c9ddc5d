"""lochkit's id builders against object ids derived by Nessie's own jars.

The vectors in ``tests/vectors/nessie-object-ids.json`` were written by the generator in
``tests/vectors/generator`` (see ``tests/vectors/README.md``). Every vector must be reproduced
exactly. Header names go into the hash in the iteration order of Nessie's Java ``HashMap``, which
lochkit computes (``persist_spi.java_order``): every tag vector also checks that the computed order
is the one the JVM recorded, sorted or not.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from persist_spi.headers import CommitHeaders
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.java_order import java_header_order
from persist_spi.keys import key
from persist_spi.objs import (
    Compression,
    IndexStripe,
    content_value,
    index_obj,
    index_segments,
    ref_obj,
    string_data,
    tag_obj,
    unique_id,
    unique_id_for_uuid,
)

VECTORS_FILE = Path(__file__).resolve().parents[1] / "vectors" / "nessie-object-ids.json"
VECTORS: dict[str, Any] = json.loads(VECTORS_FILE.read_text(encoding="utf-8"))


def _vectors(*types: str) -> list[Any]:
    selected = [v for v in VECTORS["vectors"] if v["type"] in types]
    return [pytest.param(v, id=v["name"]) for v in selected]


def _id(hex_text: str | None) -> ObjId | None:
    return None if hex_text is None else ObjId.from_hex(hex_text)


def _bytes(hex_text: str | None) -> bytes | None:
    return None if hex_text is None else bytes.fromhex(hex_text)


def _headers(vector: dict[str, Any]) -> CommitHeaders | None:
    pairs = vector["headers"]
    return None if pairs is None else CommitHeaders([(name, value) for name, value in pairs])


def test_file_shape() -> None:
    assert VECTORS["nessie_version"] == "0.108.1"
    names = [v["name"] for v in VECTORS["vectors"]]
    assert len(names) == len(set(names)), "vector names must be unique"
    assert len(names) >= 60
    types = {v["type"] for v in VECTORS["vectors"]}
    assert types == {"EMPTY_OBJ_ID", "VALUE", "REF", "TAG", "STRING", "INDEX", "INDEX_SEGMENTS", "UNIQUE"}


@pytest.mark.parametrize("vector", _vectors("EMPTY_OBJ_ID"))
def test_empty_obj_id(vector: dict[str, Any]) -> None:
    assert EMPTY_OBJ_ID.hex() == vector["id"]


@pytest.mark.parametrize("vector", _vectors("VALUE"))
def test_content_value(vector: dict[str, Any]) -> None:
    obj = content_value(vector["content_id"], vector["payload"], bytes.fromhex(vector["data_hex"]))
    assert obj.id.hex() == vector["id"]


@pytest.mark.parametrize("vector", _vectors("REF"))
def test_ref(vector: dict[str, Any]) -> None:
    obj = ref_obj(
        vector["ref_name"],
        ObjId.from_hex(vector["initial_pointer"]),
        vector["created_at_micros"],
        _id(vector["extended_info_obj"]),
    )
    assert obj.id.hex() == vector["id"]


@pytest.mark.parametrize("vector", _vectors("STRING"))
def test_string(vector: dict[str, Any]) -> None:
    compression = Compression[vector["compression"]]
    assert compression.value == vector["compression_code"]
    obj = string_data(
        vector["content_type"],
        compression,
        vector["filename"],
        [ObjId.from_hex(p) for p in vector["predecessors"]],
        bytes.fromhex(vector["text_hex"]),
    )
    assert obj.id.hex() == vector["id"]


@pytest.mark.parametrize("vector", _vectors("INDEX"))
def test_index(vector: dict[str, Any]) -> None:
    assert index_obj(bytes.fromhex(vector["index_hex"])).id.hex() == vector["id"]


@pytest.mark.parametrize("vector", _vectors("INDEX_SEGMENTS"))
def test_index_segments(vector: dict[str, Any]) -> None:
    stripes = [
        IndexStripe(key(*s["first_key"]), key(*s["last_key"]), ObjId.from_hex(s["segment"]))
        for s in vector["stripes"]
    ]
    assert index_segments(stripes).id.hex() == vector["id"]


@pytest.mark.parametrize("vector", _vectors("UNIQUE"))
def test_unique_id(vector: dict[str, Any]) -> None:
    value = bytes.fromhex(vector["value_hex"])
    assert unique_id(vector["space"], value).id.hex() == vector["id"]
    if vector["uuid"] is not None:
        obj = unique_id_for_uuid(vector["space"], uuid.UUID(vector["uuid"]))
        assert obj.value == value
        assert obj.id.hex() == vector["id"]


@pytest.mark.parametrize("vector", _vectors("TAG"))
def test_tag(vector: dict[str, Any]) -> None:
    headers = _headers(vector)
    obj = tag_obj(vector["message"], headers, _bytes(vector["signature_hex"]))
    if headers is None:
        assert obj.id.hex() == vector["id"]
        return

    # lochkit lowercases names the way the JVM did (Locale.ROOT), including beyond ASCII.
    assert sorted(headers) == sorted(vector["java_header_order"])
    assert vector["java_header_order_is_sorted"] == (vector["java_header_order"] == sorted(headers))

    assert list(java_header_order(tuple(headers))) == vector["java_header_order"]
    assert obj.id.hex() == vector["id"]


def test_some_vectors_have_headers_whose_java_order_is_not_sorted() -> None:
    tags = [v for v in VECTORS["vectors"] if v["type"] == "TAG" and v["headers"]]
    assert any(v["java_header_order_is_sorted"] for v in tags if len(v["java_header_order"]) > 1)
    assert any(not v["java_header_order_is_sorted"] for v in tags)
