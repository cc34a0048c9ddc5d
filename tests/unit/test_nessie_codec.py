"""The Nessie object codec's own rules: round trips, what it refuses, and corrupt bytes.

Byte-for-byte agreement with Nessie is in ``test_nessie_codec_vectors.py``.
"""

from __future__ import annotations

import random

import pytest

from conformance.samples import (
    JsonTestObj,
    SimpleTestObj,
    VersionedTestObj,
    all_samples,
    sample_id,
    standard_samples,
)
from persist_spi.codec import DEFAULT_CODEC, CorruptObject, CorruptReferenceHistory
from persist_spi.errors import CorruptData, InputError
from persist_spi.ids import EMPTY_OBJ_ID, ObjId, random_obj_id
from persist_spi.nessie_codec import NessieObjCodec, NotStorableInNessieLayout, obj_frame
from persist_spi.nessie_custom import KEEP_UNCOMPRESSED
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
from persist_spi.protowire import ProtoWriter, iter_fields
from persist_spi.smile import encode_smile

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


CUSTOM_SAMPLES = [o for o in all_samples() if not type(o).__module__.startswith("persist_spi")]
CUSTOM_SAMPLES += [o for o in all_samples() if type(o) is GenericObj]


@pytest.mark.parametrize("codec", CODECS, ids=["column", "rocksdb"])
@pytest.mark.parametrize("obj", CUSTOM_SAMPLES, ids=sample_id)
def test_every_custom_sample_round_trips(codec: NessieObjCodec, obj: Obj) -> None:
    """lochkit's custom types, JSON-like values and generic objects: stored as Smile, read back
    equal, with their type, version token and ``referenced``."""
    encoded = codec.encode(obj.with_referenced(42))
    token = getattr(obj, "version_token", None)
    assert (encoded.type_short_name, encoded.version_token) == (obj.obj_type.short_name, token)
    column_token = None if codec.include_version_token else encoded.version_token
    decoded = codec.decode(obj.id, encoded.type_short_name, encoded.data, 0, column_token)
    assert decoded == obj
    assert type(decoded) is type(obj)
    assert decoded.referenced == 42
    assert getattr(decoded, "version_token", None) == token


def _custom_proto(data: bytes) -> dict[int, bytes | int]:
    """The CustomProto fields inside stored ObjProto bytes."""
    (custom,) = (f.as_bytes() for f in iter_fields(data) if f.number == 9)
    return {f.number: f.as_bytes() if f.number != 3 else f.as_uint() for f in iter_fields(custom)}


def test_a_lochkit_type_is_stored_as_the_map_nessie_reads_as_a_generic_object() -> None:
    obj = VersionedTestObj(id=random_obj_id(), version_token="t1", some_value="x", other_value=None)
    fields = _custom_proto(CODECS[1].encode(obj).data)
    assert fields[1] == b"lt-versioned"
    # Fields in declaration order, camelCase as Jackson names a Java property; no id, no token.
    assert fields[2] == encode_smile({"someValue": "x", "otherValue": None})
    assert fields[3] == 1  # CompressionProto NONE
    assert fields[4] == b"t1"


def test_custom_data_longer_than_8192_bytes_is_gzipped() -> None:
    for size, compression in ((KEEP_UNCOMPRESSED - 14, 1), (KEEP_UNCOMPRESSED - 13, 2)):
        obj = JsonTestObj(id=random_obj_id(), value="x" * size)  # 14 bytes of Smile around the text
        fields = _custom_proto(CODECS[0].encode(obj).data)
        assert fields[3] == compression
        assert CODECS[0].decode(obj.id, "lt-json", CODECS[0].encode(obj).data, 0, None) == obj


def test_generic_objects_read_back_with_lists_and_dicts() -> None:
    generic = GenericObj(
        id=random_obj_id(), type_name="x", attributes={"a": (1, {"b": (None,)}), "c": b"\x00"}
    )
    decoded = CODECS[1].decode(generic.id, "x", CODECS[1].encode(generic).data, 0, None)
    assert isinstance(decoded, GenericObj)
    assert decoded.attributes == {"a": [1, {"b": [None]}], "c": b"\x00"}


def test_a_nessie_generic_objects_token_attribute_is_no_field_of_a_lochkit_type() -> None:
    """Nessie writes a generic object's version token into its data as ``versionToken``: read as
    a lochkit type, the token comes from the row and the attribute is dropped."""
    obj = VersionedTestObj(id=random_obj_id(), version_token="t1", some_value="x")
    as_nessie = GenericObj(
        id=obj.id,
        type_name="lt-versioned",
        attributes={"someValue": "x", "otherValue": None, "versionToken": "t1"},
        version_token="t1",
    )
    data = CODECS[0].encode(as_nessie).data
    assert CODECS[0].decode(obj.id, "lt-versioned", data, 0, "t1") == obj


@pytest.mark.parametrize(
    ("obj", "where"),
    [
        (JsonTestObj(id=ObjId(bytes(32)), value={"a": {1, 2}}), r"value of type set at \$\.value\.a"),
        (SimpleTestObj(id=ObjId(bytes(32)), flags={1: "x"}), r"key 1 \(int\) at \$\.flags"),  # type: ignore[dict-item]
        (GenericObj(id=ObjId(bytes(32)), type_name="g", attributes={"a": object()}), r"object at \$\.a"),
    ],
    ids=["set", "int-key", "object"],
)
def test_values_smile_has_no_form_for_are_refused_with_the_reason(obj: Obj, where: str) -> None:
    what = f"{type(obj).__name__} {obj.id} .type '{obj.obj_type.name}'. cannot be stored in Nessie's layout"
    with pytest.raises(NotStorableInNessieLayout, match=f"{what}.*{where}"):
        CODECS[0].encode(obj)


def test_field_names_that_clash_in_camel_case_are_refused() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True, kw_only=True)
    class Clashing(Obj):
        some_value: int = 0
        someValue: int = 0

    with pytest.raises(NotStorableInNessieLayout, match="some_value, someValue have the same camelCase"):
        CODECS[0].encode(Clashing(id=random_obj_id()))


def _custom_bytes(type_name: str, data: bytes, compression: int) -> bytes:
    custom = ProtoWriter().string_field(1, type_name).bytes_field(2, data).varint_field(3, compression)
    return _proto(9, custom.to_bytes())


@pytest.mark.parametrize(
    ("data", "compression"),
    [
        (encode_smile({"a": 1}), 6),  # Snappy: lochkit cannot undo it
        (b"not smile", 1),
        (encode_smile([1, 2]), 1),  # Smile, but no object's map
        (b"\x1f\x8b broken gzip", 2),
    ],
    ids=["snappy", "not-smile", "array", "broken-gzip"],
)
def test_unknown_types_lochkit_cannot_read_are_carried_verbatim(data: bytes, compression: int) -> None:
    stored = _custom_bytes("nessie-type", data, compression)
    decoded = CODECS[0].decode(ObjId(bytes(32)), "nessie-type", stored, 0, "vt")
    assert isinstance(decoded, OpaqueCustomObj)
    assert (decoded.data, decoded.version_token) == (data, "vt")
    assert CODECS[0].encode(decoded).data == stored


@pytest.mark.parametrize(
    ("data", "compression", "reason"),
    [
        (encode_smile({"text": "x"}), 6, "compressed with SNAPPY, which lochkit cannot undo"),
        (b"not smile", 1, "does not start with Smile's header"),
        (encode_smile([1]), 1, "holds an array, not the map of an object's fields"),
        (encode_smile({"txt": "x"}), 1, "the attribute 'txt', which is no field of SimpleTestObj"),
        (encode_smile({"parent": "x"}), 1, "does not fit SimpleTestObj"),
        (b"\x1f\x8b broken gzip", 2, "not valid GZIP data"),
    ],
    ids=["snappy", "not-smile", "array", "unknown-field", "wrong-shape", "broken-gzip"],
)
def test_a_lochkit_type_that_does_not_decode_is_corrupt(data: bytes, compression: int, reason: str) -> None:
    obj_id = ObjId(bytes(32))
    with pytest.raises(CorruptObject, match=f"Object {obj_id} cannot be decoded: .*{reason}"):
        CODECS[0].decode(obj_id, "lt-simple", _custom_bytes("lt-simple", data, compression), 0, None)


def test_lochkits_own_codec_refuses_opaque_custom_objects() -> None:
    """Their bytes are Nessie's data: lochkit's format would store an empty attribute map instead."""
    with pytest.raises(InputError, match=r"Nessie server stored that lochkit cannot decode; only Nessie"):
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
    """The round-trip test above is parametrised over lochkit's custom sample types: make sure there
    are some of each kind, so it cannot pass by testing nothing."""
    kinds = {type(o) for o in CUSTOM_SAMPLES}
    assert {SimpleTestObj, VersionedTestObj, JsonTestObj, GenericObj} <= kinds
