"""Content values against the bytes Nessie's own serialisers write.

``tests/vectors/nessie-content.json`` holds, for every content type with optional fields set and
unset, extreme numbers, unicode and namespace properties in a non-sorted insertion order, the bytes
``DefaultStoreWorker.toStoreOnReferenceState`` gives and the VALUE id Nessie derives from them
(``tests/vectors/README.md``). lochkit must write the same bytes, derive the same id, and read
Nessie's bytes back to the same content.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

from persist_spi.errors import CorruptData, InputError
from persist_spi.objs import content_value
from persist_spi.versionstore.content import (
    UDF,
    Content,
    DeltaLakeTable,
    IcebergTable,
    IcebergView,
    Namespace,
    content_from_bytes,
)
from persist_spi.versionstore.nessie_json import content_from_json

VECTORS_FILE = Path(__file__).resolve().parents[1] / "vectors" / "nessie-content.json"
VECTORS: dict[str, Any] = json.loads(VECTORS_FILE.read_text(encoding="utf-8"))
ALL = [pytest.param(v, id=v["name"]) for v in VECTORS["vectors"]]


def _content(vector: dict[str, Any]) -> Content:
    # Nessie's REST JSON, minus the id: one vector has a content id that is not a UUID (as imported
    # repositories may have), which lochkit's REST parser refuses but its store reads.
    doc = {k: v for k, v in vector["content"].items() if k != "id"}
    return content_from_json(doc).with_id(vector["content"]["id"])


def test_the_matrix_covers_every_content_type_with_optional_fields_set_and_unset() -> None:
    assert VECTORS["nessie_version"] == "0.108.1"
    contents = [_content(v) for v in VECTORS["vectors"]]
    assert {type(c) for c in contents} == {IcebergTable, IcebergView, DeltaLakeTable, Namespace, UDF}
    views = [c for c in contents if isinstance(c, IcebergView)]
    assert any(v.sql_text is None for v in views)
    assert any(v.sql_text is not None for v in views)
    udfs = [c for c in contents if isinstance(c, UDF)]
    assert any(u.metadata_location is None for u in udfs)
    assert any(u.dialect is not None for u in udfs)
    properties = [list(c.properties) for c in contents if isinstance(c, Namespace)]
    assert any(len(p) > 2 and p != sorted(p) for p in properties)


@pytest.mark.parametrize("vector", ALL)
def test_lochkit_writes_nessies_bytes_and_value_id(vector: dict[str, Any]) -> None:
    content = _content(vector)
    assert vector["payload"] == content.PAYLOAD
    data = content.to_bytes()
    assert data.hex() == vector["data_hex"]
    assert content.id is not None
    assert str(content_value(content.id, content.PAYLOAD, data).id) == vector["value_id"]


@pytest.mark.parametrize("vector", ALL)
def test_lochkit_reads_nessies_bytes(vector: dict[str, Any]) -> None:
    expected = _content(vector)
    assert expected.id is not None
    read = content_from_bytes(vector["payload"], expected.id, bytes.fromhex(vector["data_hex"]))
    assert read == expected
    assert list(getattr(read, "properties", {})) == list(getattr(expected, "properties", {}))


def test_values_lochkit_stored_as_json_are_still_read() -> None:
    legacy = (
        b'{"elements":["db"],"properties":{"a":"1","b":"2"},"type":"NAMESPACE"}',
        (
            b'{"metadata_location":"s3://t","schema_id":1,"snapshot_id":5,"sort_order_id":0,'
            b'"spec_id":0,"type":"ICEBERG_TABLE"}'
        ),
    )
    assert content_from_bytes(4, "cid", legacy[0]) == Namespace(
        id="cid", elements=("db",), properties={"a": "1", "b": "2"}
    )
    assert content_from_bytes(1, "cid", legacy[1]) == IcebergTable(
        id="cid", metadata_location="s3://t", snapshot_id=5, schema_id=1
    )


def test_the_id_comes_from_the_caller_when_the_content_has_none() -> None:
    table = IcebergTable(metadata_location="s3://t")
    with pytest.raises(InputError, match="needs a content id"):
        table.to_bytes()
    assert table.to_bytes("x") == table.with_id("x").to_bytes()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (IcebergTable(id="c", metadata_location="m", schema_id=2**31), "outside the range of a protobuf"),
        (IcebergTable(id="c", metadata_location="m", snapshot_id=-(2**63) - 1), "int64"),
        (IcebergView(id="c", metadata_location="m", version_id=2**63), "int64"),
        (IcebergTable(id="c", metadata_location="\ud800"), "unpaired surrogate"),
        (Namespace(id="c", elements=("a",), properties={"k": "\udfff"}), "unpaired surrogate"),
    ],
)
def test_what_nessies_message_cannot_carry_is_refused(content: Content, message: str) -> None:
    with pytest.raises(InputError, match=message):
        content.to_bytes()


@pytest.mark.parametrize(
    ("payload", "data", "message"),
    [
        (9, b"", "unknown payload 9"),
        (1, bytes.fromhex("2a0178"), "has no metadata_location"),  # only an id: legacy global state
        (1, bytes.fromhex("0a03 0a0161".replace(" ", "")), "global state"),
        (4, bytes.fromhex("1200"), "another content type"),
        (4, bytes.fromhex("32020801"), "wire type 0"),
        (1, b"{not json", "neither protobuf nor JSON"),
    ],
)
def test_undecodable_values_are_corrupt_data(payload: int, data: bytes, message: str) -> None:
    with pytest.raises(CorruptData, match=message):
        content_from_bytes(payload, "cid", data)


@dataclasses.dataclass(frozen=True, slots=True)
class _SlottedTable(Content):
    """A content class of a user's that keeps its fields in slots (its base still has a __dict__)."""

    PAYLOAD: ClassVar[int] = 1
    TYPE_NAME: ClassVar[str] = "ICEBERG_TABLE"

    metadata_location: str = ""
    snapshot_id: int = -1
    schema_id: int = 0
    spec_id: int = 0
    sort_order_id: int = 0


def test_a_content_class_keeping_its_fields_in_slots_stores_the_same_bytes() -> None:
    plain = IcebergTable(id="cid", metadata_location="s3://b/t/v1.json", snapshot_id=42, schema_id=3)
    slotted = _SlottedTable(id="cid", metadata_location="s3://b/t/v1.json", snapshot_id=42, schema_id=3)
    assert slotted.to_bytes() == plain.to_bytes()
    assert slotted.to_bytes("other") == plain.to_bytes("other")
