"""Serialisation of objects and reference history: round trips, unknown types, corrupt data."""

from __future__ import annotations

import pytest

from conformance.samples import all_samples, sample_id
from persist_spi.codec import (
    DEFAULT_CODEC,
    CorruptObject,
    decode_previous_pointers,
    encode_previous_pointers,
)
from persist_spi.ids import ObjId, random_obj_id
from persist_spi.objs import GenericObj, Obj
from persist_spi.references import PreviousPointer


@pytest.mark.parametrize("obj", all_samples(), ids=sample_id)
def test_every_sample_round_trips(obj: Obj) -> None:
    encoded = DEFAULT_CODEC.encode(obj.with_referenced(42))
    decoded = DEFAULT_CODEC.decode(obj.id, encoded.type_short_name, encoded.data, 42, encoded.version_token)
    assert decoded == obj
    assert type(decoded) is type(obj)
    assert decoded.referenced == 42
    assert encoded.data[0] == 1  # format version


def test_an_unregistered_type_decodes_as_generic() -> None:
    obj_id = random_obj_id()
    data = DEFAULT_CODEC.encode(GenericObj(id=obj_id, type_name="x", attributes={"a": [1, {"b": None}]})).data
    decoded = DEFAULT_CODEC.decode(obj_id, "never-registered", data, 0, "t")
    assert decoded == GenericObj(
        id=obj_id, type_name="never-registered", attributes={"a": [1, {"b": None}]}, version_token="t"
    )


def test_corrupt_or_unknown_format_bytes_fail_clearly() -> None:
    obj_id = ObjId(bytes(32))
    with pytest.raises(CorruptObject, match=f"Object {obj_id} cannot be decoded"):
        DEFAULT_CODEC.decode(obj_id, "c", b"\x01\x93", 0, None)
    with pytest.raises(CorruptObject, match="unknown format version 9"):
        DEFAULT_CODEC.decode(obj_id, "c", b"\x09abc", 0, None)
    with pytest.raises(CorruptObject, match="no bytes"):
        DEFAULT_CODEC.decode(obj_id, "v", b"", 0, None)


def test_previous_pointers_round_trip() -> None:
    entries = (PreviousPointer(random_obj_id(), 5), PreviousPointer(random_obj_id(), 3))
    assert decode_previous_pointers(encode_previous_pointers(entries)) == entries
    assert encode_previous_pointers(()) == b""
    assert decode_previous_pointers(None) == ()
