"""The model's JSON form converts both ways without loss."""

from __future__ import annotations

import dataclasses
import datetime
import uuid

import pytest

from persist_spi.errors import InputError, ObjTooLarge
from persist_spi.ids import ObjId
from persist_spi.versionstore import nessie_json as nj
from persist_spi.versionstore.content import (
    CONTENT_TYPES,
    UDF,
    ContentKey,
    DeltaLakeTable,
    IcebergTable,
    IcebergView,
    Namespace,
)
from persist_spi.versionstore.errors import (
    Conflict,
    ConflictType,
    ReferenceConflictError,
    ReferenceNotFoundError,
)
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Delete, Put, Unchanged

IDS = [str(uuid.UUID(int=i)) for i in range(1, 6)]
CONTENTS = [
    IcebergTable(id=IDS[0], metadata_location="m", snapshot_id=-5, schema_id=1, spec_id=2, sort_order_id=3),
    IcebergView(id=IDS[1], metadata_location="m", version_id=4, schema_id=5, sql_text="s", dialect="d"),
    DeltaLakeTable(id=IDS[2], metadata_location_history=("a", "b"), last_checkpoint="c"),
    UDF(id=IDS[3], metadata_location="m", version_id="v", signature_id="s"),
    Namespace(id=IDS[4], elements=("a", "b"), properties={"k": "v"}),
]


@pytest.mark.parametrize("content", CONTENTS, ids=lambda c: c.TYPE_NAME)
def test_content_round_trips(content: object) -> None:
    assert nj.content_from_json(nj.content_to_json(content)) == content  # type: ignore[arg-type]


def test_iceberg_table_uses_nessies_field_names() -> None:
    doc = nj.content_to_json(CONTENTS[0])
    assert doc == {
        "type": "ICEBERG_TABLE",
        "id": IDS[0],
        "metadataLocation": "m",
        "snapshotId": -5,
        "schemaId": 1,
        "specId": 2,
        "sortOrderId": 3,
    }


def test_commit_meta_keeps_multi_valued_properties() -> None:
    when = datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    meta = CommitMeta("msg", authors=("a", "b"), author_time=when, all_properties={"p": ("1", "2")})
    doc = nj.meta_to_json(meta)
    assert doc["allProperties"] == {"p": ["1", "2"]}
    back = nj.meta_from_json(doc)
    assert back.all_properties == {"p": ("1", "2")}
    assert back.authors == ("a", "b")
    assert back.author_time == when


def test_operations_round_trip() -> None:
    key = ContentKey.of("a", "b")
    for op in (Put(key, CONTENTS[0]), Delete(key), Unchanged(key)):
        assert nj.operation_from_json(nj.operation_to_json(op)) == op


def test_conflict_errors_round_trip_with_their_conflicts() -> None:
    error = ReferenceConflictError([Conflict.of(ConflictType.KEY_EXISTS, ContentKey.of("t"))])
    status, body = nj.error_to_json(error)
    assert status == 409
    back = nj.error_from_json(status, body)
    assert isinstance(back, ReferenceConflictError)
    assert back.conflicts[0].conflict_type is ConflictType.KEY_EXISTS
    assert back.conflicts[0].key == ContentKey.of("t")


def test_not_found_and_bad_request_map_to_the_models_errors() -> None:
    assert isinstance(
        nj.error_from_json(404, {"errorCode": "REFERENCE_NOT_FOUND", "message": "x"}), ReferenceNotFoundError
    )
    assert isinstance(nj.error_from_json(400, {"errorCode": "BAD_REQUEST", "message": "x"}), ValueError)


def test_a_value_over_the_size_limit_is_a_bad_request_and_comes_back_as_the_same_error() -> None:
    error = ObjTooLarge(16_711_839, 16_711_680, what="content value of key 'huge'")
    status, body = nj.error_to_json(error)
    assert (status, body["errorCode"]) == (400, "BAD_REQUEST")
    back = nj.error_from_json(status, body)
    assert isinstance(back, ObjTooLarge)
    assert (back.size, back.limit, str(back)) == (error.size, error.limit, str(error))
    # Any other bad request is a plain InputError (a ValueError).
    assert (
        type(nj.error_from_json(400, {"errorCode": "BAD_REQUEST", "message": "The key is odd"})) is InputError
    )


def test_a_document_missing_a_field_names_it() -> None:
    with pytest.raises(nj.NessieJsonError, match="'elements'"):
        nj.key_from_json({})
    assert nj.hash_from_json("ab" * 32) == ObjId.from_hex("ab" * 32)


@pytest.mark.parametrize("cls", list(nj.CONTENT_FIELDS), ids=lambda c: c.TYPE_NAME)
def test_every_field_of_every_content_type_has_its_json_type(cls: type) -> None:
    """A field added to a content type must be added to the table that checks documents too."""
    attributes = {f.name for f in dataclasses.fields(cls)} - {"id"}
    assert {f.attribute for f in nj.CONTENT_FIELDS[cls]} == attributes
    assert set(nj.CONTENT_FIELDS) == set(CONTENT_TYPES.values())


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            {"type": "ICEBERG_TABLE"},
            r"not set \[metadataLocation, snapshotId, schemaId, specId, sortOrderId\]",
        ),
        (
            {"type": "ICEBERG_VIEW", "metadataLocation": "m", "versionId": None},
            r"not set \[versionId, schemaId\]",
        ),
        (
            {"type": "NAMESPACE", "elements": ["a", 1]},
            "'elements' must be a list of strings: element 1 is the number 1",
        ),
        ({"type": "UDF", "versionId": 1}, "'versionId' must be a string, not the number 1"),
        (
            {"type": "DELTA_LAKE_TABLE", "lastCheckpoint": False},
            "'lastCheckpoint' must be a string, not false",
        ),
        ({"type": "udf"}, "unknown content type 'udf'"),
        ({"type": "UDF", "id": "nope"}, "Invalid UUID string: nope"),
    ],
)
def test_a_content_document_of_the_wrong_shape_names_the_field(doc: dict[str, object], message: str) -> None:
    with pytest.raises(nj.NessieJsonError, match=message):
        nj.content_from_json(doc)


def test_whole_numbers_are_checked_against_their_java_range() -> None:
    table = {"type": "ICEBERG_TABLE", "metadataLocation": "m", "snapshotId": -(2**63), "specId": 0}
    ok = nj.content_from_json({**table, "schemaId": 2**31 - 1, "sortOrderId": 7.0})
    assert ok == IcebergTable(
        metadata_location="m", snapshot_id=-(2**63), schema_id=2**31 - 1, sort_order_id=7
    )
    assert isinstance(ok, IcebergTable)
    assert type(ok.sort_order_id) is int
    for field, value, java in (("schemaId", 2**31, "int"), ("snapshotId", -(2**63) - 1, "long")):
        with pytest.raises(nj.NessieJsonError, match=f"'{field}': Numeric value .* out of range of {java}"):
            nj.content_from_json({**table, "schemaId": 0, "sortOrderId": 0, field: value})
    with pytest.raises(
        nj.NessieJsonError, match=r"'sortOrderId' must be a whole number \(int\), not the number 0\.5"
    ):
        nj.content_from_json({**table, "schemaId": 0, "sortOrderId": 0.5})
