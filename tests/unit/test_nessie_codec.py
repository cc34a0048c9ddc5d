"""The Nessie object codec's own rules: round trips, what it refuses, and corrupt bytes.

Byte-for-byte agreement with Nessie is in ``test_nessie_codec_vectors.py``.
"""

from __future__ import annotations

import random

import pytest

from conformance.samples import SimpleTestObj, all_samples, sample_id, standard_samples
from persist_spi.codec import DEFAULT_CODEC, CorruptObject, CorruptReferenceHistory
from persist_spi.errors import CorruptData, InputError
from persist_spi.ids import EMPTY_OBJ_ID, ObjId, random_obj_id
from persist_spi.nessie_codec import NessieObjCodec, NotStorableInNessieLayout, obj_frame
from persist_spi.nessie_references import (
    decode_nessie_previous_pointers,
    decode_reference_proto,
    encode_nessie_previous_pointers,
)
from persist_spi.objs import (
    CommitObj,
    Compression,
    GenericObj,
    Obj,
    OpaqueCustomObj,
    index_obj,
    tag_obj,
)
from persist_spi.protowire import ProtoWriter

CODECS = [NessieObjCodec(include_version_token=False), NessieObjCodec(include_version_token=True)]


def _custom(token: str | None = "vt") -> OpaqueCustomObj:
    return OpaqueCustomObj(
        id=random_obj_id(),
        type_name="c-e",
        data=b":)\n\x05\xfa",
        compression=Compression.NONE,
        version_token=token,
    )


@pytest.mark.parametrize("codec", CODECS, ids=["column", "rocksdb"])
@pytest.mark.parametrize("obj", standard_samples(random.Random(4711)), ids=sample_id)
def test_every_standard_sample_round_trips(codec: NessieObjCodec, obj: Obj) -> None:
    encoded = codec.encode(obj.with_referenced(42))
    decoded = codec.decode(obj.id, encoded.type_short_name, encoded.data, 0, encoded.version_token)
    assert decoded == obj
    assert type(decoded) is type(obj)
    assert decoded.referenced == 42


def test_the_column_value_of_referenced_wins_unless_it_is_zero() -> None:
    obj = index_obj(b"\x02\x00").with_referenced(7)
    data = CODECS[1].encode(obj).data
    assert CODECS[1].decode(obj.id, "i", data, 0, None).referenced == 7
    assert CODECS[1].decode(obj.id, "i", data, 99, None).referenced == 99


def test_the_version_token_goes_inside_only_when_asked() -> None:
    obj = _custom("vt")
    column, rocksdb = (codec.encode(obj) for codec in CODECS)
    assert (column.version_token, rocksdb.version_token) == ("vt", "vt")
    assert b"vt" not in column.data
    assert rocksdb.data.endswith(b"\x22\x02vt\x58\x00")
    assert obj_frame(column.data) == ("c-e", None, 0)
    assert obj_frame(rocksdb.data) == ("c-e", "vt", 0)
    # The column's token wins; without one, the token inside is used.
    other = CODECS[1].decode(obj.id, "c-e", rocksdb.data, 0, "other")
    assert isinstance(other, OpaqueCustomObj)
    assert other.version_token == "other"
    assert CODECS[1].decode(obj.id, "", rocksdb.data, 0, None) == obj


def test_obj_frame_names_standard_types() -> None:
    tag = tag_obj("m").with_referenced(5)
    assert obj_frame(CODECS[1].encode(tag).data) == ("t", None, 5)


@pytest.mark.parametrize(
    "obj",
    [o for o in all_samples() if not type(o).__module__.startswith("persist_spi")],
    ids=sample_id,
)
def test_lochkit_custom_types_are_refused_with_the_reason(obj: Obj) -> None:
    with pytest.raises(NotStorableInNessieLayout, match=r"Jackson Smile.*use lochkit's own layout"):
        CODECS[0].encode(obj)


def test_generic_objects_with_attributes_are_refused() -> None:
    generic = GenericObj(id=random_obj_id(), type_name="x", attributes={"a": 1})
    with pytest.raises(
        NotStorableInNessieLayout, match=f"GenericObj {generic.id} .type 'x'. cannot be stored"
    ):
        CODECS[1].encode(generic)


def test_lochkits_own_codec_refuses_opaque_custom_objects() -> None:
    """Their bytes are Nessie's Smile: lochkit's format would store an empty attribute map instead."""
    with pytest.raises(
        InputError, match=r"Jackson Smile\), which lochkit cannot decode; only Nessie's layout"
    ):
        DEFAULT_CODEC.encode(_custom())


def _proto(number: int, message: bytes, referenced: int = 0) -> bytes:
    return ProtoWriter().bytes_field(number, message).varint_field(11, referenced).to_bytes()


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "hold no object"),
        (ProtoWriter().varint_field(11, 3).to_bytes(), "hold no object"),
        (b"\x12\x05\x01", "runs past the end"),
        (_proto(2, b""), "no commit type"),
        (_proto(2, ProtoWriter().varint_field(11, 0).to_bytes()), "commit type 0 is not one Nessie writes"),
        (_proto(7, b""), "no compression"),
        (_proto(7, ProtoWriter().varint_field(2, 9).to_bytes()), "compression 9"),
        (_proto(9, ProtoWriter().varint_field(3, 1).to_bytes()), "names no type"),
        (_proto(4, ProtoWriter().bytes_field(1, b"\xff").to_bytes()), "not UTF-8"),
        (_proto(3, ProtoWriter().bytes_field(2, bytes(300)).to_bytes()), "maximum is 256 bytes"),
        (_proto(6, b""), "the row says type 'c', the bytes hold type 'i'"),
    ],
)
def test_corrupt_bytes_fail_clearly(data: bytes, reason: str) -> None:
    obj_id = ObjId(bytes(32))
    with pytest.raises(CorruptObject, match=f"Object {obj_id} cannot be decoded: .*{reason}"):
        CODECS[0].decode(obj_id, "c", data, 0, None)


def test_obj_frame_of_corrupt_bytes() -> None:
    with pytest.raises(CorruptData, match="hold no object"):
        obj_frame(b"")


def test_commits_keep_their_header_order_on_a_round_trip() -> None:
    """Nessie writes headers in its map's order; lochkit keeps the order it read, so bytes read from
    Nessie are written back unchanged whatever that order was."""
    from persist_spi.headers import CommitHeaders

    commit = CommitObj(
        id=random_obj_id(), seq=1, tail=(EMPTY_OBJ_ID,), headers=CommitHeaders([("b", "1"), ("a", "2")])
    )
    data = CODECS[0].encode(commit).data
    decoded = CODECS[0].decode(commit.id, "c", data, 0, None)
    assert isinstance(decoded, CommitObj)
    assert list(decoded.headers) == ["b", "a"]
    assert CODECS[0].encode(decoded).data == data


def test_history_corrupt_or_empty() -> None:
    assert encode_nessie_previous_pointers(()) is None
    assert decode_nessie_previous_pointers(None) == ()
    assert decode_nessie_previous_pointers(b"") == ()
    with pytest.raises(CorruptReferenceHistory, match="runs past the end"):
        decode_nessie_previous_pointers(b"\x05\x0a")
    with pytest.raises(CorruptData, match="A stored reference cannot be decoded"):
        decode_reference_proto(b"\x0a\x05ab")


def test_sample_ids_cover_the_custom_samples() -> None:
    """The refusal test above is parametrised over lochkit's custom sample types: make sure there are
    some, so it cannot pass by testing nothing."""
    assert any(isinstance(o, SimpleTestObj) for o in all_samples())
