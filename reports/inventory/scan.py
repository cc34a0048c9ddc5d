"""Reading a repository for the inventory: every object once (one scan of the objects table), every
reference row, and per commit the facts a capacity planner needs. Only Persist calls are used, so it
works on every backend, and nothing is written."""

from __future__ import annotations

import contextlib
import hashlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from persist_spi.codec import DEFAULT_CODEC, ObjCodec
from persist_spi.indexes.action import Action
from persist_spi.indexes.store_index import deserialize_index
from persist_spi.logic.internal_refs import INTERNAL_PREFIX, REF_REFS, REF_REPO, REFS_HEADS, REFS_TAGS
from persist_spi.logic.reference_logic import ReferenceLogic
from persist_spi.objs import CommitObj, CommitType, ContentValueObj, IndexSegmentsObj, Obj, unique_id_for_uuid
from persist_spi.persist import Persist
from persist_spi.references import Reference
from persist_spi.versionstore.committing import CONTENT_ID_SPACE

Row = dict[str, Any]


@dataclass(frozen=True)
class ObjectRows:
    """What one scanned object contributes to each table."""

    objects: Row
    commit: Row | None
    links: list[Row]


def reference_kind(name: str) -> str:
    if name.startswith(REFS_HEADS):
        return "branch"
    if name.startswith(REFS_TAGS):
        return "tag"
    if name.startswith(INTERNAL_PREFIX):
        return "internal"
    return "other"


def reference_row(ref: Reference) -> Row:
    return {
        "name": ref.name,
        "kind": reference_kind(ref.name),
        "pointer": str(ref.pointer),
        "deleted": ref.deleted,
        "created_at_us": ref.created_at_micros,
        "previous_pointers": len(ref.previous_pointers),
    }


def scan_references(persist: Persist) -> Iterator[Row]:
    """The internal references, then every listed one in name order (deleted-marked rows included,
    so a half-done delete shows in the inventory)."""
    for ref in persist.fetch_references([REF_REFS, REF_REPO]):
        if ref is not None:
            yield reference_row(ref)
    for ref in ReferenceLogic(persist).query_references():
        yield reference_row(ref)


def _reference_index_key(commit: CommitObj) -> str | None:
    # A short fingerprint: equal for a child that carries its parent's reference index unchanged.
    if commit.reference_index is not None:
        return str(commit.reference_index)
    if not commit.reference_index_stripes:
        return None
    digest = hashlib.sha256()
    for stripe in commit.reference_index_stripes:
        digest.update(bytes(stripe.segment))
    return "stripes:" + digest.hexdigest()[:32]


def commit_rows(commit: CommitObj, encoded_size: int) -> tuple[Row, list[Row]]:
    added = removed = 0
    links: list[Row] = []
    if commit.incremental_index:
        for element in deserialize_index(commit.incremental_index).iterate(None, None):
            action = element.op.action
            if action is Action.ADD:
                added += 1
                if element.op.value is not None:
                    links.append({"from_id": str(commit.id), "to_id": str(element.op.value), "role": "value"})
            elif action is Action.REMOVE:
                removed += 1
    links.extend(
        {"from_id": str(commit.id), "to_id": str(stripe.segment), "role": "stripe"}
        for stripe in commit.reference_index_stripes
    )
    if commit.reference_index is not None:
        links.append(
            {"from_id": str(commit.id), "to_id": str(commit.reference_index), "role": "reference-index"}
        )
    row = {
        "commit_id": str(commit.id),
        "parent": str(commit.direct_parent),
        "seq": commit.seq,
        "created_us": commit.created,
        "commit_type": "internal" if commit.commit_type is CommitType.INTERNAL else "normal",
        "secondary_parents": len(commit.secondary_parents),
        "ops_added": added,
        "ops_removed": removed,
        "incremental_index_bytes": len(commit.incremental_index),
        "reference_index_stripes": len(commit.reference_index_stripes),
        "reference_index": None if commit.reference_index is None else str(commit.reference_index),
        "reference_index_key": _reference_index_key(commit),
        "encoded_size": encoded_size,
    }
    return row, links


def object_rows(obj: Obj, codec: ObjCodec) -> ObjectRows:
    size = len(codec.encode(obj).data)
    row = {
        "obj_id": str(obj.id),
        "obj_type": obj.obj_type.name,
        "encoded_size": size,
        "referenced_us": obj.referenced,
    }
    if isinstance(obj, CommitObj):
        commit, links = commit_rows(obj, size)
        return ObjectRows(row, commit, links)
    if isinstance(obj, IndexSegmentsObj):
        links = [{"from_id": str(obj.id), "to_id": str(s.segment), "role": "segment"} for s in obj.stripes]
        return ObjectRows(row, None, links)
    if isinstance(obj, ContentValueObj):
        return ObjectRows(row, None, content_id_links(obj))
    return ObjectRows(row, None, [])


def content_id_links(value: ContentValueObj) -> list[Row]:
    """The value's link to the unique-id object that claimed its content id (the claim's id is
    derived from the content id, so no lookup is needed): a new table, view... costs that object
    too, and the report attributes it to the commit that added the content's first value."""
    try:
        content_id = uuid.UUID(value.content_id)
    except ValueError:  # not an id lochkit claimed (content ids it creates are UUIDs)
        return []
    claim = unique_id_for_uuid(CONTENT_ID_SPACE, content_id)
    return [{"from_id": str(value.id), "to_id": str(claim.id), "role": "content-id"}]


def scan_objects(persist: Persist, codec: ObjCodec = DEFAULT_CODEC) -> Iterator[ObjectRows]:
    """Every object of the repository; sizes are those ``codec`` (the store's layout's) writes."""
    with contextlib.closing(persist.scan_all_objects()) as objects:
        for obj in objects:
            yield object_rows(obj, codec)
