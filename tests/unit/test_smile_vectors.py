"""The Smile codec and the custom-object codec against what Nessie's jars wrote.

``tests/vectors/nessie-smile.json`` holds generic objects whose attributes cover every JSON type
Jackson writes (see ``tests/vectors/README.md``), each serialised by Nessie's
``SmileSerialization`` (the Smile data, gzipped above 8192 bytes) and ``ProtoSerialization`` (the
stored ``ObjProto``, in the column backends' form and in RocksDB's). lochkit must read every one
back to the same values, and write the same bytes for every value it has a form of its own for
(``lochkit_writes_same_bytes``; the exceptions are a Java float and a BigInteger that fits a long,
which lochkit reads as a float and an int and writes back as a double and an int).
"""

from __future__ import annotations

import json
import struct
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from conformance.samples import SimpleTestObj, VersionedTestObj
from persist_spi.ids import ObjId
from persist_spi.nessie_codec import NessieObjCodec
from persist_spi.nessie_custom import KEEP_UNCOMPRESSED, compress_as_nessie
from persist_spi.objs import Compression, GenericObj, Obj
from persist_spi.smile import decode_smile, encode_smile

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[1] / "vectors" / "nessie-smile.json").read_text(encoding="utf-8")
)
BY_NAME: dict[str, dict[str, Any]] = {v["name"]: v for v in VECTORS["objects"]}
CODECS = {
    False: NessieObjCodec(include_version_token=False),
    True: NessieObjCodec(include_version_token=True),
}


def _value(tagged: Any) -> Any:
    """An attribute value as the vector records it with its Java type, as a Python value."""
    if isinstance(tagged, list):
        return [_value(v) for v in tagged]
    if not isinstance(tagged, dict):
        return tagged  # null, booleans, ints, longs and strings are plain JSON
    ((tag, raw),) = tagged.items()
    match tag:
        case "map":
            return {name: _value(v) for name, v in raw}
        case "double":
            return struct.unpack(">d", int(raw, 16).to_bytes(8, "big"))[0]
        case "float":
            return struct.unpack(">f", int(raw, 16).to_bytes(4, "big"))[0]
        case "big_integer":
            return int(raw)
        case "big_decimal":
            return Decimal(raw)
        case "binary":
            return bytes.fromhex(raw)
    raise AssertionError(f"unknown tag {tag}")


def _attributes(vector: dict[str, Any]) -> dict[str, Any]:
    attributes = _value(vector["attributes"])
    assert isinstance(attributes, dict)
    return attributes


def _objects(*, lochkit_writes: bool | None = None) -> list[Any]:
    return [
        pytest.param(v, id=v["name"])
        for v in VECTORS["objects"]
        if lochkit_writes is None or v["lochkit_writes_same_bytes"] == lochkit_writes
    ]


def _generic_serializations(*, lochkit_writes: bool | None = None) -> list[Any]:
    """Both stored forms of the objects of types lochkit does not know (not ``lt-...``)."""
    return [
        pytest.param(v, s, id=f"{v['name']}-{'token' if s['include_version_token'] else 'column'}")
        for v in VECTORS["objects"]
        if lochkit_writes is None or v["lochkit_writes_same_bytes"] == lochkit_writes
        if not v["obj_type"].startswith("lt-")
        for s in v["serialized"]
    ]


def test_file_shape() -> None:
    assert VECTORS["nessie_version"] == "0.108.1"
    assert VECTORS["keep_uncompressed"] == KEEP_UNCOMPRESSED
    assert len(BY_NAME) == len(VECTORS["objects"])
    assert {v["compression"] for v in VECTORS["objects"]} == {"NONE", "GZIP"}
    assert BY_NAME["threshold-8192"]["smile_length"] == 8192
    assert BY_NAME["threshold-8192"]["compression"] == "NONE"
    assert BY_NAME["threshold-8193"]["compression"] == "GZIP"
    assert [v["name"] for v in VECTORS["objects"] if not v["lochkit_writes_same_bytes"]] == [
        "read-only-forms"
    ]


@pytest.mark.parametrize("vector", _objects())
def test_lochkit_reads_jacksons_smile(vector: dict[str, Any]) -> None:
    smile = bytes.fromhex(vector["smile_hex"])
    assert len(smile) == vector["smile_length"]
    assert decode_smile(smile) == _attributes(vector)


@pytest.mark.parametrize("vector", _objects(lochkit_writes=True))
def test_lochkit_writes_jacksons_smile(vector: dict[str, Any]) -> None:
    assert encode_smile(_attributes(vector)).hex() == vector["smile_hex"]


@pytest.mark.parametrize("vector", _objects())
def test_lochkit_compresses_as_nessie(vector: dict[str, Any]) -> None:
    """Up to 8192 bytes as they are, above gzipped byte for byte as Java's GZIPOutputStream."""
    data, compression = compress_as_nessie(bytes.fromhex(vector["smile_hex"]))
    assert compression is Compression[vector["compression"]]
    assert data.hex() == vector["data_hex"]


def test_values_lochkit_reads_but_writes_in_its_own_forms() -> None:
    """A float and BigIntegers that fit a long: read as their values; written back as a double and
    as ints, which Nessie reads as the same numbers (as a Double and Integers)."""
    vector = BY_NAME["read-only-forms"]
    attributes = decode_smile(bytes.fromhex(vector["smile_hex"]))
    assert attributes == {
        "float": 1.5,
        "negativeFloat": -0.25,
        "smallBigInteger": 5,
        "zeroBigInteger": 0,
        "negativeBigInteger": -129,
    }
    assert encode_smile(attributes).hex() != vector["smile_hex"]


def _generic(vector: dict[str, Any]) -> GenericObj:
    """The object as Nessie held it: its version token is an attribute too."""
    return GenericObj(
        id=ObjId.from_hex(vector["id"]),
        type_name=vector["obj_type"],
        attributes=_attributes(vector),
        version_token=vector["version_token"],
    )


@pytest.mark.parametrize(("vector", "serialization"), _generic_serializations(lochkit_writes=True))
def test_lochkit_stores_generic_objects_as_nessie(
    vector: dict[str, Any], serialization: dict[str, Any]
) -> None:
    obj = _generic(vector).with_referenced(serialization["referenced"])
    encoded = CODECS[serialization["include_version_token"]].encode(obj)
    assert encoded.data.hex() == serialization["hex"]
    assert (encoded.type_short_name, encoded.version_token) == (vector["obj_type"], vector["version_token"])


@pytest.mark.parametrize(("vector", "serialization"), _generic_serializations())
def test_lochkit_reads_generic_objects_nessie_stored(
    vector: dict[str, Any], serialization: dict[str, Any]
) -> None:
    with_token = serialization["include_version_token"]
    column_token = None if with_token else vector["version_token"]
    decoded = CODECS[with_token].decode(
        ObjId.from_hex(vector["id"]), vector["obj_type"], bytes.fromhex(serialization["hex"]), 0, column_token
    )
    assert decoded == _generic(vector)
    assert type(decoded) is GenericObj
    assert decoded.referenced == serialization["referenced"]


def _lochkit_object(vector: dict[str, Any]) -> Obj:
    attributes = _attributes(vector)
    obj_id = ObjId.from_hex(vector["id"])
    if vector["name"] == "lochkit-simple":
        return SimpleTestObj(
            id=obj_id,
            parent=ObjId(attributes["parent"]),
            text="hello",
            number=42,
            numbers=(1, 2, 3),
            flags={"a": "b"},
            blob=b"\x00\x01",
        )
    return VersionedTestObj(id=obj_id, version_token="v1", some_value="some", other_value=None)


@pytest.mark.parametrize("name", ["lochkit-simple", "lochkit-versioned"])
def test_lochkit_types_are_the_generic_objects_nessie_writes(name: str) -> None:
    """A lochkit dataclass is stored as Nessie stores a generic object with its fields in camelCase,
    and Nessie's bytes read back into the dataclass. (An updateable type keeps its token out of the
    data, as Nessie's own updateable types do; compared in the column backends' form, where the
    token is in a column.)"""
    vector = BY_NAME[name]
    obj = _lochkit_object(vector)
    column = next(s for s in vector["serialized"] if not s["include_version_token"])
    assert CODECS[False].encode(obj).data.hex() == column["hex"]
    token = getattr(obj, "version_token", None)
    decoded = CODECS[False].decode(obj.id, vector["obj_type"], bytes.fromhex(column["hex"]), 0, token)
    assert decoded == obj
    assert type(decoded) is type(obj)
    assert isinstance(getattr(decoded, "parent", ObjId()), ObjId)
