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
from persist_spi.keys import StoreKey
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


def test_index_segments_decode_once_per_distinct_bytes() -> None:
    """The stripe list of a reference index is read by every commit; equal bytes share one decoded
    (immutable) tuple, while id and referenced still come from each row."""
    from persist_spi.ids import EMPTY_OBJ_ID
    from persist_spi.objs import IndexSegmentsObj, IndexStripe

    stripes = tuple(
        IndexStripe(StoreKey(f"k{i:03}a"), StoreKey(f"k{i:03}z"), random_obj_id()) for i in range(60)
    )
    encoded = DEFAULT_CODEC.encode(IndexSegmentsObj(id=EMPTY_OBJ_ID, referenced=0, stripes=stripes))
    first_id, second_id = random_obj_id(), random_obj_id()
    first = DEFAULT_CODEC.decode(first_id, encoded.type_short_name, bytes(encoded.data), 1, None)
    second = DEFAULT_CODEC.decode(second_id, encoded.type_short_name, bytes(encoded.data), 2, None)
    assert isinstance(first, IndexSegmentsObj)
    assert isinstance(second, IndexSegmentsObj)
    assert first.stripes == stripes
    assert second.stripes is first.stripes
    assert (first.id, first.referenced, second.id, second.referenced) == (first_id, 1, second_id, 2)
