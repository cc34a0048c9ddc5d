"""Turning version-store operations into a storage-level commit, with the strict validations.

Validation follows the spec: new content must not carry a content id (except a rename, whose Delete
of that id is in the same commit); an existing key can only be updated with its content id and
type; a key appears once per commit (Delete then Put of a key re-creates it as new content);
Unchanged asserts the key did not change since the expected commit. Expected values come from the
client's expected commit, the commit is built on the current head, and it is rejected only when a
touched key changed in between.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from persist_spi.codec import DEFAULT_CODEC
from persist_spi.config import INT_MAX
from persist_spi.errors import ObjTooLarge
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.indexes.base import StoreIndex
from persist_spi.indexes.elements import CommitOp
from persist_spi.logic import create_commit as cc
from persist_spi.objs import ContentValueObj, Obj, content_value, unique_id_for_uuid
from persist_spi.persist import Persist
from persist_spi.versionstore.content import NAMESPACE_PAYLOAD, Content, ContentKey
from persist_spi.versionstore.errors import (
    Conflict,
    ConflictType,
    ContentIdClaimFailed,
    InvalidOperation,
)
from persist_spi.versionstore.keymap import to_store_key
from persist_spi.versionstore.operations import Delete, Operation, Put, Unchanged

CONTENT_ID_SPACE = "content-id"
#: A random content id is already taken with probability about 2**-122, so a few refusals in a row
#: mean a broken backend, not bad luck; retrying forever would only hang the caller.
MAX_CONTENT_ID_CLAIMS = 8


@dataclass
class CommitState:
    """What survives from one attempt to the next: content ids already claimed (per key) and
    objects already stored, so a retry neither claims new ids nor re-sends objects."""

    content_ids: dict[ContentKey, str] = field(default_factory=dict)
    stored: set[ObjId] = field(default_factory=set)
    persisted_commit: ObjId | None = None


@dataclass
class PreparedCommit:
    adds: list[cc.Add]
    removes: list[cc.Remove]
    unchanged: list[cc.Unchanged]
    objects: list[Obj]
    new_content_ids: dict[ContentKey, str]
    created_keys: list[ContentKey]
    added_namespaces: list[ContentKey]
    deleted: dict[ContentKey, int]


def check_duplicates(operations: Sequence[Operation]) -> None:
    """A key may appear once, except Delete followed by a Put without content id (a re-create)."""
    seen: dict[ContentKey, Operation] = {}
    for op in operations:
        previous = seen.get(op.key)
        if previous is not None and not (
            isinstance(previous, Delete) and isinstance(op, Put) and op.content.id is None
        ):
            raise ValueError(f"Duplicate key in commit operations: {op.key}")
        seen[op.key] = op


#: Stands in for the content id a new value will get (content ids are UUIDs: always 36 characters).
_ID_OF_NEW_CONTENT = "00000000-0000-0000-0000-000000000000"


def check_value_sizes(persist: Persist, operations: Sequence[Operation]) -> None:
    """``ObjTooLarge`` for a Put whose content value the database cannot hold, before anything of
    the commit is written (content ids are claimed by writing, so this comes first)."""
    limit = persist.hard_object_size_limit
    if limit >= INT_MAX:
        return
    for op in operations:
        if not isinstance(op, Put):
            continue
        data = op.content.to_bytes()
        if len(data) + 512 < limit:  # far below: the value's few other fields cannot matter
            continue
        value = content_value(op.content.id or _ID_OF_NEW_CONTENT, op.content.PAYLOAD, data)
        size = len(DEFAULT_CODEC.encode(value).data)
        if size > limit:
            raise ObjTooLarge(size, limit, None, f"content value of key '{op.key}'")


def claim_content_id(persist: Persist, new_id: Callable[[], uuid.UUID] = uuid.uuid4) -> str:
    """A fresh content id nobody else holds: claimed by storing a unique-id object."""
    for _ in range(MAX_CONTENT_ID_CLAIMS):
        candidate = new_id()
        if persist.store_obj(unique_id_for_uuid(CONTENT_ID_SPACE, candidate)):
            return str(candidate)
    raise ContentIdClaimFailed(MAX_CONTENT_ID_CLAIMS)


def _live(index: StoreIndex, key: ContentKey) -> CommitOp | None:
    element = index.get(to_store_key(key))
    return element.op if element is not None and element.op.exists else None


def prepare_commit(
    persist: Persist,
    operations: Sequence[Operation],
    expected_index: StoreIndex,
    head_index: StoreIndex,
    expected_is_head: bool,
    state: CommitState,
    current_content: Callable[[CommitOp], Content | None],
    new_content_id: Callable[[], uuid.UUID] = uuid.uuid4,
) -> PreparedCommit:
    check_duplicates(operations)
    store_keys = [to_store_key(op.key) for op in operations]
    expected_index.load_if_necessary(store_keys)
    if not expected_is_head:
        head_index.load_if_necessary([to_store_key(op.key) for op in operations if isinstance(op, Unchanged)])

    prepared = PreparedCommit([], [], [], [], {}, [], [], {})
    deleted_ids: dict[str, CommitOp] = {}
    re_created: set[ContentKey] = set()
    put_ids: set[str] = set()

    for op in operations:
        if not isinstance(op, Delete):
            continue
        existing = _live(expected_index, op.key)
        cid = existing.content_id if existing is not None else None
        prepared.removes.append(
            cc.Remove(
                to_store_key(op.key),
                existing.payload if existing is not None else 0,
                existing.value if existing is not None and existing.value else EMPTY_OBJ_ID,
                cid,
            )
        )
        if existing is not None:
            prepared.deleted[op.key] = existing.payload
            if cid is not None:
                deleted_ids[str(cid)] = existing
        re_created.add(op.key)

    for op in operations:
        if not isinstance(op, Put):
            continue
        key, content = op.key, op.content
        payload = content.PAYLOAD
        existing = None if key in re_created else _live(expected_index, key)
        expected_value: ObjId | None = None
        if existing is not None:
            current = current_content(existing)
            if content.id is None:
                raise InvalidOperation(
                    [Conflict(ConflictType.KEY_EXISTS, key, f"key '{key}' already exists", current)],
                    f"New value to update existing key '{key}' has no content ID",
                )
            if existing.content_id is None or content.id != str(existing.content_id):
                raise InvalidOperation(
                    [Conflict.of(ConflictType.CONTENT_ID_DIFFERS, key, current)],
                    f"Key '{key}' already exists with content ID {existing.content_id}, which is "
                    f"different from the content ID {content.id} in the operation",
                )
            if payload != existing.payload:
                raise InvalidOperation(
                    [Conflict.of(ConflictType.PAYLOAD_DIFFERS, key, current)],
                    f"Key '{key}' holds content of another type; the type of content cannot change",
                )
            content_id = content.id
            expected_value = existing.value
        elif content.id is not None:
            # A deleted content id serves one rename: a second Put with it is new content with an
            # id (Nessie's message), not a second rename.
            renamed = deleted_ids.pop(content.id, None)
            if renamed is None or key in re_created:
                raise InvalidOperation(
                    [Conflict.of(ConflictType.KEY_DOES_NOT_EXIST, key)],
                    f"New value for key '{key}' must not have a content ID",
                )
            content_id = content.id
            expected_value = renamed.value
            prepared.created_keys.append(key)
        else:
            content_id = state.content_ids.get(key) or claim_content_id(persist, new_content_id)
            state.content_ids[key] = content_id
            prepared.new_content_ids[key] = content_id
            prepared.created_keys.append(key)
        if content_id in put_ids:  # e.g. one content renamed to two keys
            raise ValueError(f"Duplicate content ID: {content_id} for key: {key}")
        put_ids.add(content_id)
        value = content_value(content_id, payload, content.to_bytes())
        if value.id not in state.stored:
            prepared.objects.append(value)
        if payload == NAMESPACE_PAYLOAD:
            prepared.added_namespaces.append(key)
        prepared.adds.append(
            cc.Add(to_store_key(key), payload, value.id, expected_value, uuid.UUID(content_id))
        )

    if not expected_is_head:
        for op in operations:
            if isinstance(op, Unchanged):
                existing = _live(expected_index, op.key)
                prepared.unchanged.append(
                    cc.Unchanged(
                        to_store_key(op.key),
                        existing.payload if existing is not None else 0,
                        existing.value if existing is not None else None,
                        existing.content_id if existing is not None else None,
                    )
                )
    return prepared


def decode_value(obj: ContentValueObj) -> Content:
    from persist_spi.versionstore.content import content_from_bytes

    return content_from_bytes(obj.payload, obj.content_id, obj.data)
