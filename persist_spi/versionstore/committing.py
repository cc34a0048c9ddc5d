"""Turning version-store operations into a storage-level commit, with the strict validations.

Validation follows the spec: new content must not carry a content id (except a rename, whose Delete
of that id is in the same commit); an existing key can only be updated with its content id and
type; a key appears once per commit (Delete then Put of a key re-creates it as new content);
Unchanged asserts the key did not change since the expected commit. Expected values come from the
client's expected commit, the commit is built on the current head, and it is rejected only when a
touched key changed in between.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from persist_spi.codec import DEFAULT_CODEC
from persist_spi.config import INT_MAX
from persist_spi.errors import InputError, ObjTooLarge
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.indexes.base import StoreIndex
from persist_spi.indexes.elements import CommitOp
from persist_spi.keys import StoreKey
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
from persist_spi.versionstore.sources import random_content_id

CONTENT_ID_SPACE = "content-id"
#: A random content id is already taken with probability about 2**-122, so a few refusals in a row
#: mean a broken backend, not bad luck; retrying forever would only hang the caller.
MAX_CONTENT_ID_CLAIMS = 8


@dataclass
class CommitState:
    """What survives from one attempt to the next: content ids already claimed (per key), objects
    already stored and content values already built, so a retry neither claims new ids, nor
    re-sends objects, nor encodes and hashes the same values again."""

    content_ids: dict[ContentKey, str] = field(default_factory=dict)
    stored: set[ObjId] = field(default_factory=set)
    persisted_commit: ObjId | None = None
    #: Content values by position of their Put, valid while the content id stays the same.
    values: dict[int, ContentValueObj] = field(default_factory=dict)
    #: The store key of each operation, by position; set (and the operations checked for
    #: duplicates) by the first attempt.
    store_keys: list[StoreKey] | None = None
    #: Whether an attempt on the branch row this process remembered was considered (first
    #: attempt only: a retry always reads the row).
    tried_known_head: bool = False

    def __init__(self) -> None:
        # Written out, not generated: see persist_spi.kernel (built by every commit).
        self.content_ids = {}
        self.stored = set()
        self.persisted_commit = None
        self.values = {}
        self.store_keys = None
        self.tried_known_head = False

    def value_for(self, position: int, content_id: str, content: Content) -> ContentValueObj:
        """The content value of ``content`` under ``content_id``, built once per commit."""
        value = self.values.get(position)
        if value is None or value.content_id != content_id:
            data = content.to_bytes(content_id)
            value = self.values[position] = content_value(content_id, content.PAYLOAD, data)
        return value


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

    def __init__(
        self,
        adds: list[cc.Add],
        removes: list[cc.Remove],
        unchanged: list[cc.Unchanged],
        objects: list[Obj],
        new_content_ids: dict[ContentKey, str],
        created_keys: list[ContentKey],
        added_namespaces: list[ContentKey],
        deleted: dict[ContentKey, int],
    ) -> None:
        # Written out, not generated: see persist_spi.kernel (built by every commit).
        self.adds = adds
        self.removes = removes
        self.unchanged = unchanged
        self.objects = objects
        self.new_content_ids = new_content_ids
        self.created_keys = created_keys
        self.added_namespaces = added_namespaces
        self.deleted = deleted


@functools.lru_cache(maxsize=4096)
def _uuid_text(content_id: uuid.UUID) -> str:
    """``str`` of a content id; an update compares every Put's id with its key's, and ``UUID``
    formats itself in Python, slower than this lookup for the ids a writer keeps updating."""
    return str(content_id)


def check_duplicates(operations: Sequence[Operation]) -> None:
    """A key may appear once, except Delete followed by a Put without content id (a re-create)."""
    seen: dict[ContentKey, Operation] = {}
    for op in operations:
        previous = seen.get(op.key)
        if previous is not None and not (
            isinstance(previous, Delete) and isinstance(op, Put) and op.content.id is None
        ):
            raise InputError(f"Duplicate key in commit operations: {op.key}")
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
        content_id = op.content.id or _ID_OF_NEW_CONTENT
        data = op.content.to_bytes(content_id)
        if len(data) + 512 < limit:  # far below: the value's few other fields cannot matter
            continue
        value = content_value(content_id, op.content.PAYLOAD, data)
        size = len(DEFAULT_CODEC.encode(value).data)
        if size > limit:
            raise ObjTooLarge(size, limit, None, f"content value of key '{op.key}'")


def claim_content_ids(
    persist: Persist, count: int, new_id: Callable[[], uuid.UUID] = random_content_id
) -> list[str]:
    """``count`` fresh content ids nobody else holds, each claimed by storing a unique-id object.
    All candidates go to the database in one bulk write; only a (vanishingly rare) id that was
    taken already is drawn again, at most ``MAX_CONTENT_ID_CLAIMS`` rounds: a database that never
    reports a new object is an adapter bug, not bad luck."""
    claimed: list[str] = []
    for _ in range(MAX_CONTENT_ID_CLAIMS):
        candidates = [new_id() for _ in range(count - len(claimed))]
        stored = persist.store_objs([unique_id_for_uuid(CONTENT_ID_SPACE, c) for c in candidates])
        claimed += [str(c) for c, new in zip(candidates, stored, strict=True) if new]
        if len(claimed) == count:
            return claimed
    raise ContentIdClaimFailed(MAX_CONTENT_ID_CLAIMS)


def claim_content_id(persist: Persist, new_id: Callable[[], uuid.UUID] = random_content_id) -> str:
    """A fresh content id nobody else holds: claimed by storing a unique-id object."""
    return claim_content_ids(persist, 1, new_id)[0]


def _live(index: StoreIndex, key: StoreKey) -> CommitOp | None:
    element = index.get(key)
    return element.op if element is not None and element.op.exists else None


def prepare_commit(
    persist: Persist,
    operations: Sequence[Operation],
    *,
    expected_index: StoreIndex,
    head_index: StoreIndex,
    expected_is_head: bool,
    state: CommitState,
    current_content: Callable[[CommitOp], Content | None],
    new_content_id: Callable[[], uuid.UUID] = random_content_id,
) -> PreparedCommit:
    """Validate ``operations`` against the expected index and turn them into commit operations
    and the content values to store. ``current_content`` is asked only for the content an error
    reports: a commit that passes reads no content value at all."""
    store_keys = _store_keys(operations, state)
    expected_index.load_if_necessary(store_keys)
    if not expected_is_head:
        head_index.load_if_necessary(
            [k for k, op in zip(store_keys, operations, strict=True) if isinstance(op, Unchanged)]
        )
    prepared = PreparedCommit([], [], [], [], {}, [], [], {})
    deleted = _prepare_deletes(operations, store_keys, expected_index, prepared)
    puts = [(i, op) for i, op in enumerate(operations) if isinstance(op, Put)]
    live = [
        None if deleted.keys and op.key in deleted.keys else _live(expected_index, store_keys[i])
        for i, op in puts
    ]
    _claim_new_content_ids(persist, [op for _, op in puts], live, state, new_content_id)
    put_ids: set[str] = set()
    for (i, op), existing in zip(puts, live, strict=True):
        _prepare_put(
            op,
            store_keys[i],
            existing,
            position=i,
            deleted=deleted,
            put_ids=put_ids,
            state=state,
            current_content=current_content,
            prepared=prepared,
        )
    if not expected_is_head:
        _prepare_unchanged(operations, store_keys, expected_index, prepared)
    return prepared


def _store_keys(operations: Sequence[Operation], state: CommitState) -> list[StoreKey]:
    """The operations' store keys, worked out (and the operations checked) on the first attempt."""
    if state.store_keys is None:
        check_duplicates(operations)
        state.store_keys = [to_store_key(op.key) for op in operations]
    return state.store_keys


@dataclass
class _Deleted:
    """What the Delete operations of a commit removed."""

    #: Live values by content id: each may serve one rename (a Put of that id under another key).
    by_content_id: dict[str, CommitOp] = field(default_factory=dict)
    #: Deleted keys, with the live value each removed (None: the key was not live). A Put without
    #: content id on one of them re-creates it, unless a rename took that value first.
    keys: dict[ContentKey, CommitOp | None] = field(default_factory=dict)

    def __init__(self) -> None:
        # Written out, not generated: see persist_spi.kernel (built by every commit).
        self.by_content_id = {}
        self.keys = {}


def _prepare_deletes(
    operations: Sequence[Operation],
    store_keys: Sequence[StoreKey],
    expected_index: StoreIndex,
    prepared: PreparedCommit,
) -> _Deleted:
    deleted = _Deleted()
    for i, op in enumerate(operations):
        if not isinstance(op, Delete):
            continue
        existing = _live(expected_index, store_keys[i])
        cid = existing.content_id if existing is not None else None
        prepared.removes.append(
            cc.Remove(
                store_keys[i],
                existing.payload if existing is not None else 0,
                existing.value if existing is not None and existing.value else EMPTY_OBJ_ID,
                cid,
            )
        )
        if existing is not None:
            prepared.deleted[op.key] = existing.payload
            if cid is not None:
                deleted.by_content_id[str(cid)] = existing
        deleted.keys[op.key] = existing
    return deleted


def _prepare_put(
    op: Put,
    store_key: StoreKey,
    existing: CommitOp | None,
    *,
    position: int,
    deleted: _Deleted,
    put_ids: set[str],
    state: CommitState,
    current_content: Callable[[CommitOp], Content | None],
    prepared: PreparedCommit,
) -> None:
    """Validate one Put and add it, with the content value it needs stored, to ``prepared``."""
    key, content = op.key, op.content
    content_uuid: uuid.UUID | None
    expected_value: ObjId | None = None  # new content expects nothing at its key
    if existing is not None:
        content_id = _updated_content_id(op, existing, current_content)
        content_uuid, expected_value = existing.content_id, existing.value
    elif content.id is not None:
        content_id, content_uuid = content.id, uuid.UUID(content.id)
        expected_value = _renamed(key, content.id, deleted).value
        prepared.created_keys.append(key)
    else:
        _check_re_add(op, deleted, current_content)
        content_id = state.content_ids[key]
        content_uuid = uuid.UUID(content_id)
        prepared.new_content_ids[key] = content_id
        prepared.created_keys.append(key)
    if content_id in put_ids:  # e.g. one content renamed to two keys
        raise InputError(f"Duplicate content ID: {content_id} for key: {key}")
    put_ids.add(content_id)
    value = state.value_for(position, content_id, content)
    if value.id not in state.stored:
        prepared.objects.append(value)
    if content.PAYLOAD == NAMESPACE_PAYLOAD:
        prepared.added_namespaces.append(key)
    prepared.adds.append(cc.Add(store_key, content.PAYLOAD, value.id, expected_value, content_uuid))


def _updated_content_id(
    op: Put, existing: CommitOp, current_content: Callable[[CommitOp], Content | None]
) -> str:
    """A Put on a live key updates that content: it must carry its content id, and keep its type."""
    key, content = op.key, op.content
    if content.id is None:
        raise InvalidOperation(
            [
                Conflict(
                    ConflictType.KEY_EXISTS, key, f"key '{key}' already exists", current_content(existing)
                )
            ],
            f"New value to update existing key '{key}' has no content ID",
        )
    if existing.content_id is None or content.id != _uuid_text(existing.content_id):
        raise InvalidOperation(
            [Conflict.of(ConflictType.CONTENT_ID_DIFFERS, key, current_content(existing))],
            f"Key '{key}' already exists with content ID {existing.content_id}, which is "
            f"different from the content ID {content.id} in the operation",
        )
    if existing.payload != content.PAYLOAD:
        raise InvalidOperation(
            [Conflict.of(ConflictType.PAYLOAD_DIFFERS, key, current_content(existing))],
            f"Key '{key}' holds content of another type; the type of content cannot change",
        )
    return content.id


def _check_re_add(op: Put, deleted: _Deleted, current_content: Callable[[CommitOp], Content | None]) -> None:
    """A Put without content id on a deleted key re-creates it, unless an earlier Put of the
    commit renamed the deleted value away: then the key counts as live (Nessie matches a re-add
    against the deleted values not yet renamed, in operation order), and the Put is an update
    without content id."""
    removed = deleted.keys.get(op.key)
    if removed is None or removed.content_id is None:
        return
    if str(removed.content_id) not in deleted.by_content_id:
        _updated_content_id(op, removed, current_content)  # raises: the Put has no content id


def _renamed(key: ContentKey, content_id: str, deleted: _Deleted) -> CommitOp:
    """The deleted value a Put with a content id on a free key renames. A deleted content id
    serves one rename: a second Put with it is new content with an id (Nessie's message), not a
    second rename."""
    renamed = deleted.by_content_id.pop(content_id, None)
    if renamed is None or key in deleted.keys:
        raise InvalidOperation(
            [Conflict.of(ConflictType.KEY_DOES_NOT_EXIST, key)],
            f"New value for key '{key}' must not have a content ID",
        )
    return renamed


def _prepare_unchanged(
    operations: Sequence[Operation],
    store_keys: Sequence[StoreKey],
    expected_index: StoreIndex,
    prepared: PreparedCommit,
) -> None:
    """Unchanged checks, as of the expected commit (only needed when that is not the head)."""
    for i, op in enumerate(operations):
        if isinstance(op, Unchanged):
            existing = _live(expected_index, store_keys[i])
            prepared.unchanged.append(
                cc.Unchanged(
                    store_keys[i],
                    existing.payload if existing is not None else 0,
                    existing.value if existing is not None else None,
                    existing.content_id if existing is not None else None,
                )
            )


def _claim_new_content_ids(
    persist: Persist,
    puts: Sequence[Put],
    live: Sequence[CommitOp | None],
    state: CommitState,
    new_id: Callable[[], uuid.UUID],
) -> None:
    """Claim, in one bulk write, a content id for every Put that creates new content (no live
    value at its key, no content id given) and got none in an earlier attempt. A Put without
    content id on a live key is an error, reported by the caller."""
    wanted = [
        op.key
        for op, existing in zip(puts, live, strict=True)
        if existing is None and op.content.id is None and op.key not in state.content_ids
    ]
    if wanted:
        state.content_ids.update(zip(wanted, claim_content_ids(persist, len(wanted), new_id), strict=True))
