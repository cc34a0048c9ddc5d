"""The JSON form of the version-store model in Nessie's REST API v2, both ways.

One module serialises and parses every shape a v2 client or server exchanges: content (Iceberg
table and view, Delta Lake table, UDF, namespace), content keys, commit meta with multi-valued
``allProperties``, operations, references, log entries, entries, diffs, conflicts, commit and
merge responses, and error bodies (turned into the version store's own exceptions). The REST
client and a REST server use it alike, so the two cannot drift apart.

Field names follow Nessie's OpenAPI document (``api/model/src/main/resources/META-INF/openapi.yaml``).
What a server answers has Nessie 0.99's exact shape (fields present or null, and their order, as
recorded from its server in ``tests/rest/data``); in requests, absent optional fields are left out.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import http
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Final

from persist_spi.errors import InputError, LochkitError, ObjTooLarge, unexpected_error_message
from persist_spi.ids import ObjId
from persist_spi.versionstore.content import (
    CONTENT_TYPES,
    UDF,
    Content,
    ContentKey,
    DeltaLakeTable,
    IcebergTable,
    IcebergView,
    Namespace,
    content_type_named,
)
from persist_spi.versionstore.errors import (
    Conflict,
    ConflictType,
    InvalidOperation,
    ReferenceAlreadyExistsError,
    ReferenceConflictError,
    ReferenceNotFoundError,
    ReferenceRetryFailureError,
)
from persist_spi.versionstore.key_hash_order import hash_map_order
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import (
    Delete,
    MergeBehavior,
    MergeKeyBehavior,
    Operation,
    Put,
    Unchanged,
)
from persist_spi.versionstore.refs import NamedRef, ReferenceInfo, RefKind
from persist_spi.versionstore.results import (
    CommitConsistency,
    CommitResult,
    Diff,
    KeyDetails,
    KeyEntry,
    LogEntry,
    MergeResult,
    ReferenceHistory,
    ReferenceHistoryEntry,
    ReferenceMetadata,
)

Json = dict[str, Any]

_REF_TYPES: Final = {RefKind.BRANCH: "BRANCH", RefKind.TAG: "TAG"}
_REF_KINDS: Final = {v: k for k, v in _REF_TYPES.items()}


class NessieJsonError(InputError):
    """A JSON document that does not have the shape the API defines (names the field)."""


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _require(doc: Mapping[str, Any], name: str, what: str) -> Any:
    if not isinstance(doc, Mapping) or name not in doc or doc[name] is None:
        raise NessieJsonError(f"{what}: missing required field '{name}'")
    return doc[name]


# --- keys and content ----------------------------------------------------------------------------


def key_to_json(key: ContentKey) -> Json:
    return {"elements": list(key.elements)}


def key_from_json(doc: Any) -> ContentKey:
    elements = _require(doc, "elements", "content key")
    if not isinstance(elements, list) or not all(isinstance(e, str) for e in elements):
        raise NessieJsonError(f"content key: 'elements' must be a list of strings, got {elements!r}")
    try:
        return ContentKey(tuple(elements))
    except InputError as e:
        raise NessieJsonError(f"content key {elements!r}: {e}") from None


def content_to_json(content: Content) -> Json:
    doc: Json = {"type": content.TYPE_NAME}
    if content.id is not None:
        doc["id"] = content.id
    for f in dataclasses.fields(content):
        if f.name == "id":
            continue
        value = getattr(content, f.name)
        if value is None:
            continue
        if isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, Mapping):
            if not value:
                continue  # as Nessie writes a namespace without properties
            value = dict(value)
        doc[_camel(f.name)] = value
    return doc


# What each content type's fields are in JSON, as Nessie's model classes declare them (IcebergTable,
# IcebergView, DeltaLakeTable, Namespace, UDF): a field's JSON type, and whether it is required.
# A parsed document is checked against this before it becomes content, so nothing of another type
# is ever stored. Where Nessie's JSON parser converts a value (123 for a string, "12" or 1.5 for a
# whole number, null for 0), lochkit refuses it: docs/nessie-differences.md, "Content field types".


class FieldKind(enum.Enum):
    STRING = "a string"
    INT = "a whole number (int)"
    LONG = "a whole number (long)"
    STRINGS = "a list of strings"
    STRING_MAP = "an object of strings"


@dataclasses.dataclass(frozen=True)
class ContentField:
    json_name: str
    kind: FieldKind
    required: bool = False

    @property
    def attribute(self) -> str:
        """The content dataclass's field."""
        return _snake(self.json_name)


_S, _I, _L = FieldKind.STRING, FieldKind.INT, FieldKind.LONG
CONTENT_FIELDS: Final[dict[type[Content], tuple[ContentField, ...]]] = {
    IcebergTable: (
        ContentField("metadataLocation", _S, required=True),
        ContentField("snapshotId", _L, required=True),
        ContentField("schemaId", _I, required=True),
        ContentField("specId", _I, required=True),
        ContentField("sortOrderId", _I, required=True),
    ),
    IcebergView: (
        ContentField("metadataLocation", _S, required=True),
        ContentField("versionId", _L, required=True),
        ContentField("schemaId", _I, required=True),
        ContentField("sqlText", _S),
        ContentField("dialect", _S),
    ),
    DeltaLakeTable: (
        ContentField("metadataLocationHistory", FieldKind.STRINGS),
        ContentField("checkpointLocationHistory", FieldKind.STRINGS),
        ContentField("lastCheckpoint", _S),
    ),
    Namespace: (
        ContentField("elements", FieldKind.STRINGS),
        ContentField("properties", FieldKind.STRING_MAP),
    ),
    UDF: (
        ContentField("metadataLocation", _S),
        ContentField("versionId", _S),
        ContentField("signatureId", _S),
        ContentField("sqlText", _S),
        ContentField("dialect", _S),
    ),
}
_TYPES_BY_NAME: Final = {cls.TYPE_NAME: cls for cls in CONTENT_FIELDS}
_RANGES: Final = {FieldKind.INT: ("int", 2**31), FieldKind.LONG: ("long", 2**63)}


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def _described(value: Any) -> str:
    """A JSON value as a message names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the string {json.dumps(value)}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    return "an array" if isinstance(value, list) else "an object"


def content_from_json(doc: Any, where: str = "content") -> Content:
    """The content ``doc`` describes; :class:`NessieJsonError` naming ``where`` and the field when a
    required field is missing or null, a field has another JSON type, the type is unknown or the
    content id is not a UUID."""
    subject = where[:1].upper() + where[1:]
    if not isinstance(doc, Mapping):
        raise NessieJsonError(f"{subject} must be a JSON object with a 'type', not {_described(doc)}")
    type_name = doc.get("type")
    if type_name is None:
        raise NessieJsonError(f"{subject} has no 'type': give one of {', '.join(_TYPES_BY_NAME)}")
    cls = _TYPES_BY_NAME.get(type_name) if isinstance(type_name, str) else None
    if cls is None:
        raise NessieJsonError(
            f"{subject}: unknown content type {type_name!r}; the types are {', '.join(_TYPES_BY_NAME)}"
        )
    fields = CONTENT_FIELDS[cls]
    missing = [f.json_name for f in fields if f.required and doc.get(f.json_name) is None]
    if missing:
        raise NessieJsonError(
            f"Cannot build {cls.__name__}, some of required attributes are not set [{', '.join(missing)}] "
            f"in {where} (null counts as not set)"
        )
    kwargs = {
        f.attribute: _field_value(f, doc[f.json_name], f"{subject} ({type_name}): field '{f.json_name}'")
        for f in fields
        if doc.get(f.json_name) is not None
    }
    return cls(id=_content_id(doc.get("id"), subject), **kwargs)


def _field_value(field: ContentField, value: Any, what: str) -> Any:
    kind = field.kind
    if kind is FieldKind.STRING and isinstance(value, str):
        return value
    if kind in _RANGES and not isinstance(value, bool) and isinstance(value, (int, float)):
        if isinstance(value, float) and not value.is_integer():
            raise NessieJsonError(f"{what} must be {kind.value}, not {_described(value)}")
        name, bound = _RANGES[kind]
        if not -bound <= value < bound:
            raise NessieJsonError(
                f"{what}: Numeric value ({value}) out of range of {name} ({-bound} - {bound - 1})"
            )
        return int(value)
    if kind is FieldKind.STRINGS and isinstance(value, list):
        for i, element in enumerate(value):
            if not isinstance(element, str):
                raise NessieJsonError(f"{what} must be {kind.value}: element {i} is {_described(element)}")
        return tuple(value)
    if kind is FieldKind.STRING_MAP and isinstance(value, Mapping):
        for name, element in value.items():
            if not isinstance(element, str):
                raise NessieJsonError(f"{what} must be {kind.value}: {name!r} is {_described(element)}")
        return dict(value)
    raise NessieJsonError(f"{what} must be {kind.value}, not {_described(value)}")


def _content_id(value: Any, subject: str) -> str | None:
    """A content id is a UUID, as Nessie requires (and as lochkit's store assigns them)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise NessieJsonError(f"{subject}: field 'id' must be a string (a UUID), not {_described(value)}")
    try:
        uuid.UUID(value)
    except ValueError:
        raise NessieJsonError(f"{subject}: Invalid UUID string: {value}") from None
    return value


def content_type_name(payload: int) -> str:
    cls = CONTENT_TYPES.get(payload)
    return cls.TYPE_NAME if cls is not None else "UNKNOWN"


def payload_of_type(type_name: str) -> int:
    return content_type_named(type_name).PAYLOAD


# --- commit meta and operations ------------------------------------------------------------------


def _time_to_json(value: datetime.datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(datetime.UTC).isoformat().replace("+00:00", "Z")


def _time_from_json(value: Any) -> datetime.datetime | None:
    if not value:
        return None
    try:
        return datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise NessieJsonError(f"commit meta: '{value}' is not an ISO-8601 time") from None


def meta_to_json(meta: CommitMeta) -> Json:
    doc: Json = {"message": meta.message}
    if meta.hash is not None:
        doc["hash"] = meta.hash
    if meta.committer is not None:
        doc["committer"] = meta.committer
    if meta.authors:
        doc["authors"] = list(meta.authors)
    if meta.signed_off_by:
        doc["allSignedOffBy"] = list(meta.signed_off_by)
    for name, value in (("commitTime", meta.commit_time), ("authorTime", meta.author_time)):
        if value is not None:
            doc[name] = _time_to_json(value)
    merged = meta.merged_properties()
    if merged:
        doc["allProperties"] = {n: list(v) for n, v in merged.items()}
    if meta.parent_hashes:
        doc["parentCommitHashes"] = list(meta.parent_hashes)
    return doc


def served_meta_to_json(meta: CommitMeta) -> Json:
    """Commit meta as Nessie's server answers it (logs, reference metadata, reference history): its
    fields in Nessie's order, ``committer`` ``""`` and ``authors`` ``[""]`` when the commit names
    none, ``allSignedOffBy`` always, ``allProperties`` and ``parentCommitHashes`` only when not empty.
    (:func:`meta_to_json` is the request form: Nessie refuses a committer set by the client.)"""
    doc: Json = {
        "hash": meta.hash,
        "committer": meta.committer or "",
        "authors": list(meta.authors) or [""],
        "allSignedOffBy": list(meta.signed_off_by),
        "message": meta.message,
        "commitTime": _time_to_json(meta.commit_time),
        "authorTime": _time_to_json(meta.author_time),
    }
    merged = meta.merged_properties()
    if merged:
        doc["allProperties"] = {n: list(v) for n, v in merged.items()}
    if meta.parent_hashes:
        doc["parentCommitHashes"] = list(meta.parent_hashes)
    return doc


def meta_from_json(doc: Any) -> CommitMeta:
    if not isinstance(doc, Mapping):
        raise NessieJsonError("commit meta: expected an object")
    all_properties: dict[str, tuple[str, ...]] = {
        n: tuple(v) for n, v in (doc.get("allProperties") or {}).items()
    }
    for name, value in (doc.get("properties") or {}).items():  # the v1, single-valued form
        all_properties.setdefault(name, (value,))
    authors = doc.get("authors") or ([doc["author"]] if doc.get("author") else [])
    signed = doc.get("allSignedOffBy") or ([doc["signedOffBy"]] if doc.get("signedOffBy") else [])
    return CommitMeta(
        message=doc.get("message") or "",
        authors=tuple(a for a in authors if a),
        committer=doc.get("committer") or None,
        signed_off_by=tuple(signed),
        author_time=_time_from_json(doc.get("authorTime")),
        commit_time=_time_from_json(doc.get("commitTime")),
        properties={n: v[0] for n, v in all_properties.items() if v},
        all_properties=all_properties,
        hash=doc.get("hash"),
        parent_hashes=tuple(doc.get("parentCommitHashes") or ()),
    )


def operation_to_json(op: Operation) -> Json:
    if isinstance(op, Put):
        return {"type": "PUT", "key": key_to_json(op.key), "content": content_to_json(op.content)}
    if isinstance(op, Delete):
        return {"type": "DELETE", "key": key_to_json(op.key)}
    return {"type": "UNCHANGED", "key": key_to_json(op.key)}


def operation_from_json(doc: Any) -> Operation:
    kind = _require(doc, "type", "operation")
    key = key_from_json(_require(doc, "key", "operation"))
    if kind == "PUT":
        where = f"PUT operation on '{key}'"
        return Put(key, content_from_json(_require(doc, "content", where), f"the content of the {where}"))
    if kind == "DELETE":
        return Delete(key)
    if kind == "UNCHANGED":
        return Unchanged(key)
    raise NessieJsonError(f"operation on '{key}': unknown type '{kind}' (PUT, DELETE or UNCHANGED)")


def commit_request_to_json(meta: CommitMeta, operations: Sequence[Operation]) -> Json:
    return {"commitMeta": meta_to_json(meta), "operations": [operation_to_json(o) for o in operations]}


def commit_request_from_json(doc: Any) -> tuple[CommitMeta, list[Operation]]:
    meta = meta_from_json(doc.get("commitMeta") or {}) if isinstance(doc, Mapping) else CommitMeta()
    ops = _require(doc, "operations", "commit request")
    return meta, [operation_from_json(o) for o in ops]


# --- references ----------------------------------------------------------------------------------


def reference_to_json(info: ReferenceInfo, metadata: ReferenceMetadata | None = None) -> Json:
    doc: Json = {"type": _REF_TYPES[info.named_ref.kind], "name": info.named_ref.name}
    if metadata is not None and metadata != ReferenceMetadata():  # Nessie leaves empty metadata out
        doc["metadata"] = reference_metadata_to_json(metadata)
    doc["hash"] = str(info.hash)
    return doc


def detached_to_json(hash_: ObjId) -> Json:
    """A commit addressed by its hash alone (Nessie's ``Detached`` reference)."""
    return {"type": "DETACHED", "hash": str(hash_)}


def reference_metadata_to_json(metadata: ReferenceMetadata) -> Json:
    ancestor = metadata.common_ancestor
    doc: Json = {
        "numCommitsAhead": metadata.commits_ahead,
        "numCommitsBehind": metadata.commits_behind,
        "commitMetaOfHEAD": served_meta_to_json(metadata.head_meta)
        if metadata.head_meta is not None
        else None,
        "commonAncestorHash": str(ancestor) if ancestor is not None else None,
    }
    if metadata.total_commits:
        doc["numTotalCommits"] = metadata.total_commits
    return doc


def reference_metadata_from_json(doc: Any) -> ReferenceMetadata:
    if not isinstance(doc, Mapping):
        return ReferenceMetadata()
    head = doc.get("commitMetaOfHEAD")
    ancestor = doc.get("commonAncestorHash")
    return ReferenceMetadata(
        head_meta=meta_from_json(head) if head is not None else None,
        total_commits=int(doc.get("numTotalCommits") or 0),
        commits_ahead=doc.get("numCommitsAhead"),
        commits_behind=doc.get("numCommitsBehind"),
        common_ancestor=hash_from_json(ancestor) if ancestor else None,
    )


def reference_history_to_json(history: ReferenceHistory, head: ReferenceInfo) -> Json:
    return {
        "reference": reference_to_json(head),
        "current": _history_entry_to_json(history.current),
        "previous": [_history_entry_to_json(e) for e in history.previous],
        "commitLogConsistency": history.log_consistency.value,
    }


def _history_entry_to_json(entry: ReferenceHistoryEntry) -> Json:
    return {
        "commitHash": str(entry.hash),
        "commitConsistency": entry.consistency.value,
        "meta": served_meta_to_json(entry.meta) if entry.meta is not None else None,
    }


def reference_history_from_json(doc: Any) -> ReferenceHistory:
    ref = named_ref_from_json(_require(doc, "reference", "reference history"))
    return ReferenceHistory(
        ref,
        _history_entry_from_json(_require(doc, "current", "reference history")),
        tuple(_history_entry_from_json(e) for e in doc.get("previous") or []),
        _consistency(doc.get("commitLogConsistency")),
    )


def _history_entry_from_json(doc: Any) -> ReferenceHistoryEntry:
    meta = doc.get("meta")
    return ReferenceHistoryEntry(
        hash_from_json(_require(doc, "commitHash", "reference history entry")),
        _consistency(doc.get("commitConsistency")),
        meta_from_json(meta) if meta is not None else None,
    )


def _consistency(value: Any) -> CommitConsistency:
    try:
        return CommitConsistency(str(value or "NOT_CHECKED"))
    except ValueError:
        raise NessieJsonError(f"unknown commit consistency '{value}'") from None


def named_ref_from_json(doc: Any) -> NamedRef:
    kind = _REF_KINDS.get(str(_require(doc, "type", "reference")).upper())
    if kind is None:
        raise NessieJsonError(f"reference: unknown type '{doc.get('type')}' (BRANCH or TAG)")
    return NamedRef(str(_require(doc, "name", "reference")), kind)


def reference_from_json(doc: Any) -> ReferenceInfo:
    return ReferenceInfo(named_ref_from_json(doc), hash_from_json(_require(doc, "hash", "reference")))


def hash_from_json(value: Any) -> ObjId:
    try:
        return ObjId.from_hex(str(value))
    except ValueError:
        raise NessieJsonError(f"'{value}' is not a commit hash (hex)") from None


def ref_type_name(kind: RefKind) -> str:
    return _REF_TYPES[kind]


def ref_kind_named(name: str) -> RefKind:
    kind = _REF_KINDS.get(name.upper())
    if kind is None:
        raise NessieJsonError(f"unknown reference type '{name}' (BRANCH or TAG)")
    return kind


# --- reads ---------------------------------------------------------------------------------------


def commit_result_to_json(branch: NamedRef, result: CommitResult) -> Json:
    """Nessie's commit answer: ``addedContents`` in the order of the hash map Nessie collects them in,
    null when the commit adds no content."""
    ids = result.added_content_ids
    added = [{"key": key_to_json(k), "contentId": ids[k]} for k in hash_map_order(ids)]
    return {
        "targetBranch": {"type": "BRANCH", "name": branch.name, "hash": str(result.hash)},
        "addedContents": added or None,
    }


def commit_result_from_json(doc: Any, parent: ObjId) -> CommitResult:
    target = _require(doc, "targetBranch", "commit response")
    added = {key_from_json(a["key"]): str(a["contentId"]) for a in (doc.get("addedContents") or [])}
    return CommitResult(
        hash_from_json(_require(target, "hash", "commit response targetBranch")), parent, added
    )


def entry_to_json(entry: KeyEntry) -> Json:
    doc: Json = {"type": content_type_name(entry.payload), "name": key_to_json(entry.key)}
    if entry.content_id is not None:
        doc["contentId"] = entry.content_id
    doc["content"] = content_to_json(entry.content) if entry.content is not None else None
    return doc


def entry_from_json(doc: Any, paging_token: str = "") -> KeyEntry:
    content = doc.get("content")
    type_name = str(_require(doc, "type", "entry"))
    cls = next((c for c in CONTENT_TYPES.values() if type_name == c.TYPE_NAME), None)
    return KeyEntry(
        key_from_json(_require(doc, "name", "entry")),
        cls.PAYLOAD if cls is not None else 0,
        doc.get("contentId"),
        content_from_json(content) if content is not None else None,
        paging_token,
    )


def log_entry_to_json(entry: LogEntry) -> Json:
    """A log entry as Nessie's server answers it: ``operations`` null when not fetched and when the
    commit has none (a commit of ``UNCHANGED`` operations only)."""
    return {
        "commitMeta": served_meta_to_json(entry.meta),
        "parentCommitHash": str(entry.parent),
        "operations": [operation_to_json(o) for o in entry.operations] if entry.operations else None,
    }


def log_entry_from_json(doc: Any, paging_token: str = "") -> LogEntry:
    meta = meta_from_json(_require(doc, "commitMeta", "log entry"))
    if meta.hash is None:
        raise NessieJsonError("log entry: commitMeta has no hash")
    ops = doc.get("operations")
    parent = doc.get("parentCommitHash") or (meta.parent_hashes[0] if meta.parent_hashes else None)
    if parent is None:
        raise NessieJsonError(f"log entry {meta.hash}: no parent commit hash")
    return LogEntry(
        hash_from_json(meta.hash),
        hash_from_json(parent),
        meta,
        tuple(operation_from_json(o) for o in ops) if ops is not None else None,
        paging_token,
    )


def diff_to_json(diff: Diff) -> Json:
    return {
        "key": key_to_json(diff.key),
        "from": content_to_json(diff.from_content) if diff.from_content is not None else None,
        "to": content_to_json(diff.to_content) if diff.to_content is not None else None,
    }


def diff_from_json(doc: Any, paging_token: str = "") -> Diff:
    side_from, side_to = doc.get("from"), doc.get("to")
    return Diff(
        key_from_json(_require(doc, "key", "diff")),
        content_from_json(side_from) if side_from is not None else None,
        content_from_json(side_to) if side_to is not None else None,
        paging_token,
    )


# --- conflicts, merge and transplant -------------------------------------------------------------


def conflict_to_json(conflict: Conflict) -> Json:
    """Nessie's conflict fields, plus lochkit's ``content``: what the key holds now, so a client
    can retry without another read (Nessie's clients ignore fields they do not know here)."""
    key = conflict.key
    doc: Json = {
        "conflictType": conflict.conflict_type.name,
        "key": key_to_json(key) if isinstance(key, ContentKey) else None,
        "message": conflict.message,
    }
    if conflict.current is not None:
        doc["content"] = content_to_json(conflict.current)
    return doc


def conflict_from_json(doc: Any) -> Conflict:
    name = str(_require(doc, "conflictType", "conflict"))
    try:
        conflict_type = ConflictType[name]
    except KeyError:
        conflict_type = ConflictType.UNKNOWN  # a type newer than this client
    key = doc.get("key")
    current = doc.get("content")
    return Conflict(
        conflict_type,
        key_from_json(key) if key else None,
        str(doc.get("message") or ""),
        content_from_json(current) if current is not None else None,
    )


def merge_behavior_to_json(spec: MergeKeyBehavior) -> Json:
    doc: Json = {"key": key_to_json(spec.key), "mergeBehavior": spec.behavior.value}
    if spec.expected_target_content is not None:
        doc["expectedTargetContent"] = content_to_json(spec.expected_target_content)
    if spec.resolved_content is not None:
        doc["resolvedContent"] = content_to_json(spec.resolved_content)
    return doc


def merge_behavior_from_json(doc: Any) -> MergeKeyBehavior:
    key = key_from_json(_require(doc, "key", "merge key behavior"))
    contents = {}
    for name in ("expectedTargetContent", "resolvedContent"):
        value = doc.get(name)
        where = f"the {name} of the key merge behaviour for '{key}'"
        contents[name] = content_from_json(value, where) if value is not None else None
    behavior = str(doc.get("mergeBehavior") or "NORMAL")
    if behavior not in {b.value for b in MergeBehavior}:
        raise NessieJsonError(f"mergeBehavior for '{key}' must be NORMAL, FORCE or DROP, not '{behavior}'")
    return MergeKeyBehavior(
        key,
        MergeBehavior(behavior),
        contents["expectedTargetContent"],
        contents["resolvedContent"],
    )


def merge_result_to_json(result: MergeResult) -> Json:
    def hex_or_none(value: ObjId | None) -> str | None:
        return str(value) if value is not None else None

    details = []
    for key, detail in result.details.items():
        doc: Json = {"key": key_to_json(key), "mergeBehavior": detail.behavior.value}
        if detail.conflict is not None:
            doc["conflict"] = conflict_to_json(detail.conflict)
        details.append(doc)
    return {
        "wasApplied": result.applied,
        "wasSuccessful": result.successful,
        "resultantTargetHash": hex_or_none(result.resultant_target_hash),
        "commonAncestor": hex_or_none(result.common_ancestor),
        "targetBranch": result.target.name,
        "effectiveTargetHash": hex_or_none(result.effective_target_hash),
        "expectedHash": hex_or_none(result.expected_hash),
        "details": details,
    }


def merge_result_from_json(doc: Any, dry_run: bool) -> MergeResult:
    def hash_or_none(value: Any) -> ObjId | None:
        return hash_from_json(value) if value else None

    details = {}
    for each in doc.get("details") or []:
        conflict = each.get("conflict")
        details[key_from_json(each["key"])] = KeyDetails(
            MergeBehavior(str(each.get("mergeBehavior") or "NORMAL")),
            conflict_from_json(conflict) if conflict else None,
        )
    applied = bool(doc.get("wasApplied"))
    resultant = hash_or_none(doc.get("resultantTargetHash"))
    effective = hash_or_none(doc.get("effectiveTargetHash"))
    return MergeResult(
        NamedRef(str(_require(doc, "targetBranch", "merge response")), RefKind.BRANCH),
        applied=applied,
        successful=bool(doc.get("wasSuccessful")),
        was_dry_run=dry_run,
        resultant_target_hash=resultant,
        common_ancestor=hash_or_none(doc.get("commonAncestor")),
        effective_target_hash=effective,
        expected_hash=hash_or_none(doc.get("expectedHash")),
        # The v2 response does not list created commits; a squashing merge creates one.
        created_commits=[resultant] if applied and resultant is not None and resultant != effective else [],
        details=details,
    )


# --- errors --------------------------------------------------------------------------------------

#: Nessie's error codes, with the HTTP status its server answers them with.
ERROR_STATUS: Final = {
    "BAD_REQUEST": 400,
    "REFERENCE_NOT_FOUND": 404,
    "CONTENT_NOT_FOUND": 404,
    "REFERENCE_ALREADY_EXISTS": 409,
    "REFERENCE_CONFLICT": 409,
    "UNKNOWN": 500,
}


class NessieServerError(RuntimeError):
    """An error answer the model has no exception for (5xx, authentication, an unknown code)."""

    def __init__(self, status: int, error_code: str, message: str) -> None:
        self.status = status
        self.error_code = error_code
        super().__init__(f"Nessie answered HTTP {status} {error_code}: {message}")


def error_body(status: int, code: str, message: str, details: Json | None = None) -> Json:
    """An error answer's body, as Nessie's server writes it."""
    reason = _REASONS.get(status) or _http_reason(status)
    body: Json = {"status": status, "reason": reason, "message": message, "errorCode": code}
    if details is not None:
        body["errorDetails"] = details
    body["serverStackTrace"] = None
    return body


_REASONS: Final = {
    400: "Bad Request",
    403: "Forbidden",
    404: "Not Found",
    409: "Conflict",
    500: "Internal Server Error",
}


def _http_reason(status: int) -> str:
    """HTTP's reason phrase for the statuses Nessie's errors do not list (413, 503, ...)."""
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""


def content_not_found_to_json(key: ContentKey, ref_name: str) -> tuple[int, Json]:
    status = ERROR_STATUS["CONTENT_NOT_FOUND"]
    return status, error_body(
        status,
        "CONTENT_NOT_FOUND",
        f"Could not find content for key '{key}' in reference '{ref_name}'.",
        {"type": "CONTENT_KEY", "contentKey": key_to_json(key)},
    )


def error_to_json(error: BaseException) -> tuple[int, Json]:
    """The HTTP status and body a v2 server answers for ``error``: 400 only for input lochkit
    declares wrong (:class:`~persist_spi.errors.InputError`, a value over a size limit); anything
    else that is not a reference's state is a 500."""
    details: Json | None = None
    if isinstance(error, InvalidOperation):
        # An operation no commit may carry: Nessie answers 400; the conflict rides along.
        code = "BAD_REQUEST"
        details = {"type": "REFERENCE_CONFLICTS", "conflicts": [conflict_to_json(c) for c in error.conflicts]}
    elif isinstance(error, ReferenceNotFoundError):
        code = "REFERENCE_NOT_FOUND"
    elif isinstance(error, ReferenceAlreadyExistsError):
        code = "REFERENCE_ALREADY_EXISTS"
    elif isinstance(error, ReferenceConflictError):  # a MergeConflictError too: its conflicts are Nessie's
        code = "REFERENCE_CONFLICT"
        details = {"type": "REFERENCE_CONFLICTS", "conflicts": [conflict_to_json(c) for c in error.conflicts]}
    elif isinstance(error, ReferenceRetryFailureError):
        code = "REFERENCE_CONFLICT"
    elif isinstance(error, (InputError, ObjTooLarge)):
        # A value over the database's size limit is the request's fault, as malformed input is.
        code = "BAD_REQUEST"
    elif isinstance(error, LochkitError):
        # Declared, but not the request's fault (a database that failed, data that does not decode):
        # its message is written for users.
        code = "UNKNOWN"
    else:
        # Nothing lochkit declared: a bug. Nessie names the exception and its causes; the traceback
        # stays in the server's log.
        status = ERROR_STATUS["UNKNOWN"]
        return status, error_body(status, "UNKNOWN", unexpected_error_message(error))
    status = ERROR_STATUS[code]
    return status, error_body(status, code, str(error), details)


def error_from_json(status: int, doc: Any) -> Exception:
    """The version-store exception for an error answer (``doc`` may be None for a non-JSON body)."""
    doc = doc if isinstance(doc, Mapping) else {}
    code = str(doc.get("errorCode") or "")
    message = str(doc.get("message") or doc.get("reason") or f"HTTP {status}")
    if code in ("REFERENCE_NOT_FOUND", "CONTENT_NOT_FOUND") or (not code and status == 404):
        return ReferenceNotFoundError(message)
    if code == "REFERENCE_ALREADY_EXISTS":
        return ReferenceAlreadyExistsError(message)
    if code == "REFERENCE_CONFLICT" or (not code and status == 409):
        details = doc.get("errorDetails") or {}
        conflicts = [conflict_from_json(c) for c in details.get("conflicts") or []]
        if "retry" in message.lower() and not conflicts:
            return ReferenceRetryFailureError(message)
        return ReferenceConflictError(conflicts, message)
    if code == "BAD_REQUEST" or (not code and status == 400):
        conflicts = [conflict_from_json(c) for c in (doc.get("errorDetails") or {}).get("conflicts") or []]
        if conflicts:
            return InvalidOperation(conflicts, message)
        return ObjTooLarge.from_message(message) or InputError(message)
    return NessieServerError(status, code or "UNKNOWN", message)
