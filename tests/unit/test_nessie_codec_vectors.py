"""The Nessie object codec against the bytes Nessie's ``ProtoSerialization`` wrote.

``tests/vectors/nessie-objproto.json`` holds, for every object of the object-id vectors and for a
few commits, custom objects and references, what Nessie's jars serialise (see
``tests/vectors/README.md``). lochkit must write exactly those bytes and read them back to equal
objects, in both stored forms: the column backends' (version token in its own column, ``referenced``
0) and RocksDB's (token and write time inside the blob).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from persist_spi.headers import CommitHeaders
from persist_spi.ids import ObjId
from persist_spi.keys import key
from persist_spi.nessie_codec import NessieObjCodec
from persist_spi.nessie_references import (
    decode_nessie_previous_pointers,
    decode_reference_proto,
    encode_nessie_previous_pointers,
    encode_reference_proto,
)
from persist_spi.objs import (
    CommitObj,
    CommitType,
    Compression,
    ContentValueObj,
    GenericObj,
    IndexObj,
    IndexSegmentsObj,
    IndexStripe,
    Obj,
    RefObj,
    StringObj,
    TagObj,
    UniqueIdObj,
)
from persist_spi.references import PreviousPointer, Reference

VECTORS_DIR = Path(__file__).resolve().parents[1] / "vectors"
VECTORS: dict[str, Any] = json.loads((VECTORS_DIR / "nessie-objproto.json").read_text(encoding="utf-8"))
OBJECT_ID_VECTORS: dict[str, dict[str, Any]] = {
    v["name"]: v
    for v in json.loads((VECTORS_DIR / "nessie-object-ids.json").read_text(encoding="utf-8"))["vectors"]
}

COLUMN_CODEC = NessieObjCodec(include_version_token=False)
ROCKSDB_CODEC = NessieObjCodec(include_version_token=True)


def _codec(serialization: dict[str, Any]) -> NessieObjCodec:
    return ROCKSDB_CODEC if serialization["include_version_token"] else COLUMN_CODEC


def _id(hex_text: str | None) -> ObjId | None:
    return None if hex_text is None else ObjId.from_hex(hex_text)


def _bytes(hex_text: str | None) -> bytes | None:
    return None if hex_text is None else bytes.fromhex(hex_text)


def _headers(vector: dict[str, Any]) -> CommitHeaders | None:
    """The headers in the order Nessie's Java map iterated them, which is the order it writes them.
    lochkit writes headers in the order its CommitHeaders holds them, so this is the input that must
    give Nessie's bytes."""
    pairs = vector["headers"]
    if pairs is None:
        return None
    order = {name: i for i, name in enumerate(vector["java_header_order"])}
    return CommitHeaders(sorted(((n, v) for n, v in pairs), key=lambda p: order[p[0].lower()]))


def _stripes(raw: list[dict[str, Any]]) -> tuple[IndexStripe, ...]:
    return tuple(
        IndexStripe(key(*s["first_key"]), key(*s["last_key"]), ObjId.from_hex(s["segment"])) for s in raw
    )


def _ids(raw: list[str]) -> tuple[ObjId, ...]:
    return tuple(ObjId.from_hex(i) for i in raw)


def _lochkit_object(vector: dict[str, Any]) -> Obj:
    """The object a vector describes, built field by field (its id as Nessie derived it)."""
    fields = OBJECT_ID_VECTORS.get(vector["name"], vector)
    obj_id = ObjId.from_hex(vector["id"])
    match fields["type"]:
        case "VALUE":
            return ContentValueObj(
                id=obj_id,
                content_id=fields["content_id"],
                payload=fields["payload"],
                data=bytes.fromhex(fields["data_hex"]),
            )
        case "REF":
            return RefObj(
                id=obj_id,
                name=fields["ref_name"],
                initial_pointer=ObjId.from_hex(fields["initial_pointer"]),
                created_at_micros=fields["created_at_micros"],
                extended_info_obj=_id(fields["extended_info_obj"]),
            )
        case "TAG":
            return TagObj(
                id=obj_id,
                message=fields["message"],
                headers=_headers(fields),
                signature=_bytes(fields["signature_hex"]),
            )
        case "STRING":
            return StringObj(
                id=obj_id,
                content_type=fields["content_type"],
                compression=Compression[fields["compression"]],
                filename=fields["filename"],
                predecessors=_ids(fields["predecessors"]),
                text=bytes.fromhex(fields["text_hex"]),
            )
        case "INDEX":
            return IndexObj(id=obj_id, index=bytes.fromhex(fields["index_hex"]))
        case "INDEX_SEGMENTS":
            return IndexSegmentsObj(id=obj_id, stripes=_stripes(fields["stripes"]))
        case "UNIQUE":
            return UniqueIdObj(id=obj_id, space=fields["space"], value=bytes.fromhex(fields["value_hex"]))
        case "COMMIT":
            headers = _headers(fields)
            assert headers is not None
            return CommitObj(
                id=obj_id,
                created=fields["created"],
                seq=fields["seq"],
                tail=_ids(fields["tail"]),
                secondary_parents=_ids(fields["secondary_parents"]),
                headers=headers,
                message=fields["message"],
                incremental_index=bytes.fromhex(fields["incremental_index_hex"]),
                reference_index=_id(fields["reference_index"]),
                reference_index_stripes=_stripes(fields["reference_index_stripes"]),
                incomplete_index=fields["incomplete_index"],
                commit_type=CommitType[fields["commit_type"]],
            )
    raise AssertionError(f"no builder for {fields['type']}")


def _as_nessie_reads_it(obj: Obj) -> Obj:
    """Nessie reads a tag's empty header list as no headers at all."""
    if isinstance(obj, TagObj) and obj.headers is not None and not obj.headers:
        return TagObj(id=obj.id, message=obj.message, headers=None, signature=obj.signature)
    return obj


def _cases(*, custom: bool) -> list[Any]:
    return [
        pytest.param(
            v, s, id=f"{v['name']}-ref{s['referenced']}-{'token' if s['include_version_token'] else 'column'}"
        )
        for v in VECTORS["objects"]
        if (v.get("type") == "CUSTOM") == custom
        for s in v["serialized"]
    ]


def test_file_shape() -> None:
    assert VECTORS["nessie_version"] == "0.108.1"
    names = [v["name"] for v in VECTORS["objects"]]
    assert len(names) == len(set(names))
    # Every object of the object-id vectors is covered, and every standard type.
    assert set(OBJECT_ID_VECTORS) - set(names) == {"empty-obj-id"}
    types = {OBJECT_ID_VECTORS.get(v["name"], v)["type"] for v in VECTORS["objects"]}
    assert types == {"VALUE", "REF", "TAG", "STRING", "INDEX", "INDEX_SEGMENTS", "UNIQUE", "COMMIT", "CUSTOM"}
    forms = {
        (s["referenced"] != 0, s["include_version_token"])
        for v in VECTORS["objects"]
        for s in v["serialized"]
    }
    assert forms == {(False, False), (True, True), (True, False)}


@pytest.mark.parametrize(("vector", "serialization"), _cases(custom=False))
def test_lochkit_writes_nessies_bytes(vector: dict[str, Any], serialization: dict[str, Any]) -> None:
    obj = _lochkit_object(vector).with_referenced(serialization["referenced"])
    encoded = _codec(serialization).encode(obj)
    assert encoded.data.hex() == serialization["hex"]
    assert encoded.type_short_name == obj.obj_type.short_name
    assert encoded.version_token is None


@pytest.mark.parametrize(("vector", "serialization"), _cases(custom=False))
def test_lochkit_reads_nessies_bytes(vector: dict[str, Any], serialization: dict[str, Any]) -> None:
    expected = _as_nessie_reads_it(_lochkit_object(vector))
    short_name = expected.obj_type.short_name
    decoded = _codec(serialization).decode(
        expected.id, short_name, bytes.fromhex(serialization["hex"]), 0, None
    )
    assert decoded == expected
    assert type(decoded) is type(expected)
    assert decoded.referenced == serialization["referenced"]


@pytest.mark.parametrize(("vector", "serialization"), _cases(custom=True))
def test_nessies_custom_objects_are_read_and_written_back_byte_for_byte(
    vector: dict[str, Any], serialization: dict[str, Any]
) -> None:
    """Nessie's generic objects of types lochkit does not know: read as a GenericObj with the
    attributes of their Smile data, and written back to the very bytes Nessie wrote (gzip too).
    Every attribute value is checked against Jackson's own output in ``test_smile_vectors.py``."""
    stored = bytes.fromhex(serialization["hex"])
    codec = _codec(serialization)
    # The column backends keep the token in a column; RocksDB finds it inside the blob.
    column_token = None if serialization["include_version_token"] else vector["version_token"]
    decoded = codec.decode(ObjId.from_hex(vector["id"]), vector["obj_type"], stored, 0, column_token)
    assert type(decoded) is GenericObj
    assert decoded.type_name == vector["obj_type"]
    assert decoded.obj_type.short_name == vector["obj_type"]
    assert decoded.version_token == vector["version_token"]
    assert decoded.referenced == serialization["referenced"]
    # Nessie's GenericObj keeps its token as an attribute, so it is in the data too.
    assert decoded.attributes.get("versionToken") == vector["version_token"]
    if vector["name"] == "custom-small":
        assert decoded.attributes == {
            "text": "hello",
            "number": 42,
            "list": [1, "two", None],
            "map": {"k": "v"},
        }
    encoded = codec.encode(decoded)
    assert encoded.data == stored
    assert (encoded.type_short_name, encoded.version_token) == (vector["obj_type"], vector["version_token"])


def test_a_custom_object_read_from_a_column_moves_to_rocksdb_byte_for_byte() -> None:
    """Read with the column backends' form (token from the column), written in RocksDB's form: the
    token goes inside and the bytes are Nessie's RocksDB bytes."""
    vector = next(v for v in VECTORS["objects"] if v["name"] == "custom-versioned")
    column, rocksdb, _ = vector["serialized"]
    decoded = COLUMN_CODEC.decode(
        ObjId.from_hex(vector["id"]), vector["obj_type"], bytes.fromhex(column["hex"]), 0, "vt-1"
    )
    moved = ROCKSDB_CODEC.encode(decoded.with_referenced(rocksdb["referenced"]))
    assert moved.data.hex() == rocksdb["hex"]


@pytest.mark.parametrize("vector", VECTORS["references"], ids=lambda v: v["name"])
def test_references_as_nessie_writes_and_reads_them(vector: dict[str, Any]) -> None:
    history = tuple(
        PreviousPointer(ObjId.from_hex(p["pointer"]), p["timestamp"]) for p in vector["previous_pointers"]
    )
    ref = Reference(
        name=vector["ref_name"],
        pointer=ObjId.from_hex(vector["pointer"]),
        deleted=vector["deleted"],
        created_at_micros=vector["created_at_micros"],
        extended_info_obj=_id(vector["extended_info_obj"]),
        previous_pointers=history,
    )
    assert encode_reference_proto(ref).hex() == vector["reference_hex"]
    decoded = decode_reference_proto(bytes.fromhex(vector["reference_hex"]))
    assert decoded == ref
    assert decoded.previous_pointers == history

    encoded_history = encode_nessie_previous_pointers(history)
    assert (None if encoded_history is None else encoded_history.hex()) == vector["previous_pointers_hex"]
    assert decode_nessie_previous_pointers(_bytes(vector["previous_pointers_hex"])) == history
