"""Serialisation of objects and reference history: round trips, unknown types, corrupt data."""

from __future__ import annotations

import msgpack
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


@pytest.mark.parametrize("length", [1, 2, 15, 16, 20, 255, 65_535, 65_536])
def test_a_history_is_packed_as_msgpack_packs_the_whole_list(length: int) -> None:
    """The encoder packs entries one by one and joins them under an array header it writes itself;
    the bytes must be those of packing the list at once, for every header size and timestamp."""
    timestamps = [0, 1, 127, 128, 255, 256, 65_536, 2**32, 1_764_300_000_000_000, -1, -33, -(2**40)]
    entries = tuple(
        PreviousPointer(ObjId(bytes([i % 256]) * (32 if i % 7 else 5)), timestamps[i % len(timestamps)])
        for i in range(length)
    )
    expected = _packed_at_once(entries)
    assert encode_previous_pointers(entries) == expected
    assert encode_previous_pointers(entries) == expected  # remembered: the same bytes again


def test_a_history_sharing_entries_with_an_earlier_one_is_packed_in_full() -> None:
    """A commit's new history is the old one with an entry in front and the oldest dropped; the
    entries remembered from the old one must land in the new bytes in their new places."""
    old = tuple(PreviousPointer(random_obj_id(), 1_000 - i) for i in range(20))
    encode_previous_pointers(old)
    new = (PreviousPointer(random_obj_id(), 1_001), *old[:19])
    expected = _packed_at_once(new)
    assert encode_previous_pointers(new) == expected
    assert decode_previous_pointers(expected) == new
    # An equal history built from other objects encodes to the same bytes.
    copy = tuple(PreviousPointer(ObjId(bytes(e.pointer)), e.timestamp_micros) for e in new)
    assert encode_previous_pointers(copy) == expected


def _packed_at_once(entries: tuple[PreviousPointer, ...]) -> bytes:
    """The format byte, then the whole history packed by msgpack in one call."""
    return b"\x01" + msgpack.packb(
        [[bytes(e.pointer), e.timestamp_micros] for e in entries], use_bin_type=True
    )


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
