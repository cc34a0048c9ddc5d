"""What the REST tests send: a thin HTTP client, operations, and content documents of every type,
valid and invalid (each invalid one with what the answer must say)."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Any

import requests

from persist_spi.ids import EMPTY_OBJ_ID

SPEC2 = {"Nessie-Client-Spec": "2"}
EMPTY = str(EMPTY_OBJ_ID)


class Api:
    """Thin helpers over requests: JSON in, (status, JSON) out."""

    def __init__(self, base: str) -> None:
        self.base = base

    def call(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None, **params: Any
    ) -> tuple[int, Any]:
        response = requests.request(
            method, self.base + path, json=body, params=params or None, headers=headers or SPEC2, timeout=60
        )
        return response.status_code, response.json() if response.content else None

    def ok(self, method: str, path: str, body: Any = None, **params: Any) -> Any:
        status, doc = self.call(method, path, body, **params)
        assert status == 200, doc
        return doc

    def head(self, ref: str = "main") -> str:
        return str(self.ok("GET", f"/trees/{ref}")["reference"]["hash"])

    def commit(self, ref: str, *operations: dict[str, Any], message: str = "c", **meta: Any) -> str:
        body = {"commitMeta": {"message": message, **meta}, "operations": list(operations)}
        doc = self.ok("POST", f"/trees/{ref}@{self.head(ref)}/history/commit", body)
        return str(doc["targetBranch"]["hash"])

    def try_commit(self, ref: str, *operations: dict[str, Any]) -> tuple[int, Any]:
        body = {"commitMeta": {"message": "attempt"}, "operations": list(operations)}
        return self.call("POST", f"/trees/{ref}@{self.head(ref)}/history/commit", body)


def put(dotted: str, content: Any) -> dict[str, Any]:
    return {"type": "PUT", "key": {"elements": dotted.split(".")}, "content": content}


TABLE: dict[str, Any] = {
    "type": "ICEBERG_TABLE",
    "metadataLocation": "m1",
    "snapshotId": 1,
    "schemaId": 0,
    "specId": 0,
    "sortOrderId": 0,
}
VIEW: dict[str, Any] = {
    "type": "ICEBERG_VIEW",
    "metadataLocation": "v1",
    "versionId": 1,
    "schemaId": 0,
    "sqlText": "select 1",
    "dialect": "spark",
}
DELTA: dict[str, Any] = {
    "type": "DELTA_LAKE_TABLE",
    "metadataLocationHistory": ["a", "b"],
    "checkpointLocationHistory": ["c"],
    "lastCheckpoint": "c",
}
NAMESPACE: dict[str, Any] = {"type": "NAMESPACE", "elements": ["ns"], "properties": {"owner": "me"}}
UDF: dict[str, Any] = {"type": "UDF", "metadataLocation": "u1", "versionId": "1", "signatureId": "s1"}

#: Valid documents, each served back as sent (Nessie's server accepts them too).
VALID: dict[str, dict[str, Any]] = {
    "table": TABLE,
    "table-empty-location": {**TABLE, "metadataLocation": ""},  # Nessie does not check it is not blank
    "table-negative-ids": {**TABLE, "snapshotId": -1, "schemaId": -5},
    "table-longest-ids": {**TABLE, "snapshotId": 2**63 - 1, "schemaId": 2**31 - 1, "specId": -(2**31)},
    "table-unknown-field": {**TABLE, "somethingElse": 1},  # ignored, as Nessie ignores it
    "table-null-id": {**TABLE, "id": None},
    "view": VIEW,
    "view-without-sql": {k: v for k, v in VIEW.items() if k not in ("sqlText", "dialect")},
    "delta": DELTA,
    "delta-without-optional-fields": {"type": "DELTA_LAKE_TABLE"},
    "namespace": NAMESPACE,
    "namespace-without-properties": {"type": "NAMESPACE", "elements": ["ns"], "properties": None},
    "udf": UDF,
    "udf-without-fields": {"type": "UDF"},
}


def served_form(doc: dict[str, Any]) -> dict[str, Any]:
    """A content document as sent or served, to compare: without its id, null fields, unknown
    fields, and empty lists and objects (which a server writes or leaves out: a client reads
    the same either way)."""
    return {k: v for k, v in doc.items() if v not in (None, [], {}) and k not in ("id", "somethingElse")}


@dataclass(frozen=True)
class BadContent:
    """An invalid content document: ``says`` is part of lochkit's answer; ``both_say`` is part of
    lochkit's and of Nessie's (the field, mostly; None where Nessie's answer names nothing)."""

    content: Any
    says: str
    both_say: str | None


def _table(**changes: Any) -> dict[str, Any]:
    return {k: v for k, v in {**TABLE, **changes}.items() if v is not _DROP}


_DROP = object()
_NOT_SET = "some of required attributes are not set"
_TABLE_FIELDS = "metadataLocation, snapshotId, schemaId, specId, sortOrderId"

#: Invalid documents Nessie's server refuses too (HTTP 400, BAD_REQUEST).
INVALID: dict[str, BadContent] = {
    # ICEBERG_TABLE: metadataLocation (string) and four whole numbers are required
    "table-no-fields": BadContent(
        {"type": "ICEBERG_TABLE"},
        f"Cannot build IcebergTable, {_NOT_SET} [{_TABLE_FIELDS}]",
        _TABLE_FIELDS,
    ),
    "table-ids-missing": BadContent(
        _table(snapshotId=_DROP, schemaId=_DROP, specId=_DROP, sortOrderId=_DROP),
        f"{_NOT_SET} [snapshotId, schemaId, specId, sortOrderId]",
        "snapshotId, schemaId, specId, sortOrderId",
    ),
    "table-null-location": BadContent(
        _table(metadataLocation=None), f"{_NOT_SET} [metadataLocation]", "metadataLocation"
    ),
    "table-string-snapshot": BadContent(
        _table(snapshotId="abc"),
        "'snapshotId' must be a whole number (long), not the string \"abc\"",
        "snapshotId",
    ),
    "table-fraction-string-snapshot": BadContent(
        _table(snapshotId="1.5"), "'snapshotId' must be", "snapshotId"
    ),
    "table-boolean-snapshot": BadContent(_table(snapshotId=True), "not true", "snapshotId"),
    "table-array-snapshot": BadContent(_table(snapshotId=[1]), "not an array", "snapshotId"),
    "table-object-snapshot": BadContent(_table(snapshotId={"a": 1}), "not an object", "snapshotId"),
    "table-snapshot-too-big": BadContent(
        _table(snapshotId=2**63),
        "out of range of long (-9223372036854775808 - 9223372036854775807)",
        "snapshotId",
    ),
    "table-schema-too-big": BadContent(
        _table(schemaId=2**31), "out of range of int (-2147483648 - 2147483647)", "schemaId"
    ),
    "table-array-location": BadContent(
        _table(metadataLocation=["m"]),
        "'metadataLocation' must be a string, not an array",
        "metadataLocation",
    ),
    "table-object-location": BadContent(
        _table(metadataLocation={"a": 1}), "not an object", "metadataLocation"
    ),
    # ICEBERG_VIEW: metadataLocation, versionId (long) and schemaId (int) are required
    "view-no-fields": BadContent(
        {"type": "ICEBERG_VIEW"},
        f"Cannot build IcebergView, {_NOT_SET} [metadataLocation, versionId, schemaId]",
        "metadataLocation, versionId, schemaId",
    ),
    "view-string-version": BadContent(
        {**VIEW, "versionId": "x"}, "'versionId' must be a whole number", "versionId"
    ),
    "view-array-dialect": BadContent({**VIEW, "dialect": ["a"]}, "'dialect' must be a string", "dialect"),
    "view-object-sql": BadContent({**VIEW, "sqlText": {}}, "'sqlText' must be a string", "sqlText"),
    # NAMESPACE: elements, a list of strings; properties, an object of strings
    "namespace-string-elements": BadContent(
        {"type": "NAMESPACE", "elements": "abc"}, "'elements' must be a list of strings", "elements"
    ),
    "namespace-null-element": BadContent(
        {"type": "NAMESPACE", "elements": [None]}, "element 0 is null", "elements"
    ),
    "namespace-array-properties": BadContent(
        {**NAMESPACE, "properties": []}, "'properties' must be an object of strings", "properties"
    ),
    "namespace-string-properties": BadContent({**NAMESPACE, "properties": "s"}, "'properties'", "properties"),
    "namespace-null-property": BadContent(
        {**NAMESPACE, "properties": {"a": None}}, "'a' is null", "properties"
    ),
    "namespace-object-property": BadContent(
        {**NAMESPACE, "properties": {"a": {"b": 1}}}, "'a' is an object", "properties"
    ),
    # DELTA_LAKE_TABLE: two lists of strings and an optional string
    "delta-string-history": BadContent(
        {**DELTA, "metadataLocationHistory": "a"},
        "'metadataLocationHistory' must be a list",
        "metadataLocationHistory",
    ),
    "delta-null-in-history": BadContent(
        {**DELTA, "metadataLocationHistory": [None]}, "element 0 is null", "metadataLocationHistory"
    ),
    "delta-object-history": BadContent(
        {**DELTA, "checkpointLocationHistory": {"a": "b"}}, "not an object", "checkpointLocationHistory"
    ),
    "delta-object-checkpoint": BadContent(
        {**DELTA, "lastCheckpoint": {}}, "'lastCheckpoint'", "lastCheckpoint"
    ),
    # UDF: three optional strings
    "udf-array-location": BadContent(
        {**UDF, "metadataLocation": ["m"]}, "'metadataLocation'", "metadataLocation"
    ),
    "udf-object-version": BadContent({**UDF, "versionId": {}}, "'versionId'", "versionId"),
    "udf-array-signature": BadContent({**UDF, "signatureId": [1]}, "'signatureId'", "signatureId"),
    # the type
    "unknown-type": BadContent({**TABLE, "type": "NOPE"}, "unknown content type 'NOPE'", None),
    "lower-case-type": BadContent(
        {**TABLE, "type": "iceberg_table"}, "unknown content type 'iceberg_table'", None
    ),
    "number-type": BadContent({**TABLE, "type": 12}, "unknown content type 12", None),
    "no-type": BadContent({k: v for k, v in TABLE.items() if k != "type"}, "has no 'type'", "type"),
    "null-type": BadContent({**TABLE, "type": None}, "has no 'type'", "type"),
    # not an object
    "string-content": BadContent("a table", "must be a JSON object", "type"),
    "number-content": BadContent(5, "must be a JSON object", "type"),
    "array-content": BadContent([], "must be a JSON object", "type"),
    "null-content": BadContent(None, "missing required field 'content'", "content"),
    # the content id: a UUID
    "id-not-a-uuid": BadContent(
        {**TABLE, "id": "abc"}, "Invalid UUID string: abc", "Invalid UUID string: abc"
    ),
    "id-empty": BadContent({**TABLE, "id": ""}, "Invalid UUID string: ", "Invalid UUID string: "),
    "id-array": BadContent({**TABLE, "id": [1]}, "'id' must be a string", "id"),
}

#: Invalid documents Nessie's server converts and stores (lochkit refuses them: a deliberate
#: difference), with what Nessie stores instead of each.
CONVERTED_BY_NESSIE: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "number-for-string": (_table(metadataLocation=123), {"metadataLocation": "123"}),
    "boolean-for-string": (_table(metadataLocation=True), {"metadataLocation": "true"}),
    "string-for-number": (_table(snapshotId="12"), {"snapshotId": 12}),
    "fraction-for-whole-number": (_table(snapshotId=1.5), {"snapshotId": 1}),
    "null-for-number": (_table(snapshotId=None), {"snapshotId": 0}),
    "empty-string-for-number": (_table(snapshotId=""), {"snapshotId": 0}),
    "numbers-for-elements": ({"type": "NAMESPACE", "elements": [1, 2]}, {"elements": ["1", "2"]}),
    "number-for-property": ({**NAMESPACE, "properties": {"a": 1}}, {"properties": {"a": "1"}}),
    "number-in-history": ({**DELTA, "metadataLocationHistory": [1]}, {"metadataLocationHistory": ["1"]}),
    "number-for-udf-location": ({**UDF, "metadataLocation": 5}, {"metadataLocation": "5"}),
}


def read_raw_answer(client: socket.socket) -> bytes:
    """One HTTP answer read from a raw socket: status line, headers and its Content-Length of body."""
    received = b""
    while chunk := client.recv(65536):
        received += chunk
        head, _, body = received.partition(b"\r\n\r\n")
        length = [line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
        if length and len(body) >= int(length[0].split(b":")[1]):
            break
    return received
