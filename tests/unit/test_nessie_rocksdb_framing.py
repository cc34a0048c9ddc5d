"""Moving objects between the column form the core writes and the value Nessie's RocksDB backend
stores (version token and ``referenced`` inside), checked against the bytes Nessie's jars wrote.

Every object of ``tests/vectors/nessie-objproto.json`` has three stored forms: the column form
(``referenced`` 0, no token inside), RocksDB's (``referenced`` set, token inside) and one with
``referenced`` -1 and no token.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from persist_spi.errors import CorruptData, InputError
from persist_spi.ids import ObjId
from persist_spi.nessie_codec import (
    NessieObjCodec,
    ObjFrame,
    column_obj_data,
    obj_frame,
    restamped_obj_value,
    stored_obj_value,
)
from persist_spi.objs import tag_obj
from persist_spi.protowire import ProtoWriter

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[1] / "vectors" / "nessie-objproto.json").read_text(encoding="utf-8")
)
COLUMN_CODEC = NessieObjCodec(include_version_token=False)


def _forms(vector: dict[str, Any]) -> tuple[bytes, bytes, int, bytes]:
    """Column form, RocksDB form, the RocksDB form's ``referenced``, and the -1 form."""
    column, rocksdb, minus_one = vector["serialized"]
    assert (column["referenced"], column["include_version_token"]) == (0, False)
    assert rocksdb["include_version_token"]
    assert rocksdb["referenced"] not in (0, -1)
    assert (minus_one["referenced"], minus_one["include_version_token"]) == (-1, False)
    return (
        bytes.fromhex(column["hex"]),
        bytes.fromhex(rocksdb["hex"]),
        rocksdb["referenced"],
        bytes.fromhex(minus_one["hex"]),
    )


def _type_name(vector: dict[str, Any], column: bytes) -> str:
    token = vector.get("version_token")
    obj = COLUMN_CODEC.decode(ObjId.from_hex(vector["id"]), "", column, 0, token)
    return obj.obj_type.short_name


@pytest.mark.parametrize("vector", VECTORS["objects"], ids=lambda v: v["name"])
def test_column_form_with_token_and_referenced_is_nessies_rocksdb_value(vector: dict[str, Any]) -> None:
    column, rocksdb, referenced, minus_one = _forms(vector)
    token = vector.get("version_token")
    assert stored_obj_value(column, token, referenced) == rocksdb
    # Without a token, the value differs from the column form only in field 11.
    assert stored_obj_value(column, None, -1) == minus_one


@pytest.mark.parametrize("vector", VECTORS["objects"], ids=lambda v: v["name"])
def test_rocksdb_value_gives_back_the_column_form_and_the_frame(vector: dict[str, Any]) -> None:
    column, rocksdb, referenced, minus_one = _forms(vector)
    token = vector.get("version_token")
    frame = ObjFrame(_type_name(vector, column), token, referenced)
    assert obj_frame(rocksdb) == frame
    assert column_obj_data(rocksdb) == (column, frame)
    assert column_obj_data(minus_one) == (column, ObjFrame(frame.type_short_name, None, -1))


@pytest.mark.parametrize("vector", VECTORS["objects"], ids=lambda v: v["name"])
def test_restamping_changes_only_referenced(vector: dict[str, Any]) -> None:
    column, rocksdb, referenced, _ = _forms(vector)
    token = vector.get("version_token")
    restamped = restamped_obj_value(rocksdb, 42)
    assert obj_frame(restamped) == ObjFrame(_type_name(vector, column), token, 42)
    assert restamped_obj_value(restamped, referenced) == rocksdb


def test_a_token_on_a_standard_object_is_refused() -> None:
    column = COLUMN_CODEC.encode(tag_obj("t")).data
    with pytest.raises(InputError, match="only inside custom objects"):
        stored_obj_value(column, "vt-1", 5)


def test_bytes_that_hold_no_object_are_corrupt() -> None:
    for data in (b"", ProtoWriter().varint_field(11, 5).to_bytes()):
        with pytest.raises(CorruptData):
            stored_obj_value(data, None, 1)
        with pytest.raises(CorruptData):
            column_obj_data(data)


def test_fields_unknown_here_are_kept() -> None:
    """A field a later Nessie might add must survive lochkit moving the value between forms."""
    column = COLUMN_CODEC.encode(tag_obj("t")).data
    extra = ProtoWriter().bytes_field(15, b"later").varint_field(16, 7).to_bytes()
    extra += bytes([(13 << 3) | 1]) + (12345).to_bytes(8, "little")
    stored = stored_obj_value(column + extra, None, 99)
    assert stored.endswith(ProtoWriter().varint_field(11, 99).to_bytes())
    assert extra in stored
    assert column_obj_data(stored)[0] == column[:-2] + extra + b"\x58\x00"
