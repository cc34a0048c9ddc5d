"""Building one commit object from a :class:`CreateCommit` on a parent that has been read.

Every operation is checked against the parent's complete index (a conflict goes to the caller's
handler, which may keep, drop or reject the operation); what is kept goes into the new commit's
incremental index and, in request order (removes, then adds), into the hash its id is derived
from. Unchanged checks take part in neither.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from persist_spi.errors import InputError
from persist_spi.hashing import ObjIdHasher
from persist_spi.ids import ObjId
from persist_spi.indexes.action import Action
from persist_spi.indexes.base import StoreIndex
from persist_spi.indexes.elements import CommitOp, IndexElement
from persist_spi.indexes.store_index import DECODED_INDEXES, StoreIndexImpl
from persist_spi.keys import StoreKey
from persist_spi.logic.conflicts import CommitConflict, CommitConflictError, ConflictResolution, ConflictType
from persist_spi.logic.create_commit import CreateCommit
from persist_spi.objs import CommitObj, IndexStripe

#: Decides what happens to a conflicting operation.
ConflictHandler = Callable[[CommitConflict], ConflictResolution]
#: Called for each non-conflicting operation with (key, new value or None for a removal).
OpHandler = Callable[[StoreKey, ObjId | None], None]
#: (is_add, key, value) -> replacement value (or the same one).
ValueReplacement = Callable[[bool, StoreKey, ObjId | None], ObjId | None]


def report_conflict(_: CommitConflict) -> ConflictResolution:
    return ConflictResolution.CONFLICT


def _no_op(_key: StoreKey, _value: ObjId | None) -> None:
    return None


def _keep(_is_add: bool, _key: StoreKey, value: ObjId | None) -> ObjId | None:
    return value


@dataclass(frozen=True)
class LoadedParent:
    """A parent commit and its reference index (None if it has none), already read."""

    commit: CommitObj | None
    reference_index: StoreIndex | None

    def __init__(self, commit: CommitObj | None, reference_index: StoreIndex | None) -> None:
        # Written out, not generated: see persist_spi.kernel (built by every commit).
        object.__setattr__(self, "commit", commit)
        object.__setattr__(self, "reference_index", reference_index)


@dataclass(frozen=True, slots=True, kw_only=True)
class ParentStart:
    """What a new commit takes over from its parent (or from nothing, for a first commit)."""

    #: The new commit's ancestors: its parent first.
    tail: tuple[ObjId, ...]
    seq: int
    #: The new commit's incremental index, starting as the parent's (rewritten).
    index: StoreIndexImpl
    #: The parent's complete view, sharing ``index``.
    full_index: StoreIndex
    reference_index: ObjId | None
    reference_index_stripes: tuple[IndexStripe, ...]

    def __init__(
        self,
        *,
        tail: tuple[ObjId, ...],
        seq: int,
        index: StoreIndexImpl,
        full_index: StoreIndex,
        reference_index: ObjId | None,
        reference_index_stripes: tuple[IndexStripe, ...],
    ) -> None:
        # Written out, not generated: see persist_spi.kernel (built by every commit).
        object.__setattr__(self, "tail", tail)
        object.__setattr__(self, "seq", seq)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "full_index", full_index)
        object.__setattr__(self, "reference_index", reference_index)
        object.__setattr__(self, "reference_index_stripes", reference_index_stripes)


class CommitBuilder:
    """Builds one commit; use once."""

    def __init__(
        self,
        create: CreateCommit,
        parent: ParentStart,
        *,
        conflict_handler: ConflictHandler = report_conflict,
        op_handler: OpHandler | None = None,
        expected_value_replacement: ValueReplacement | None = None,
        committed_value_replacement: ValueReplacement | None = None,
    ) -> None:
        self._create = create
        self._parent = parent
        self._conflict_handler = conflict_handler
        self._op_handler = op_handler or _no_op
        self._expected_value = expected_value_replacement or _keep
        self._committed_value = committed_value_replacement or _keep
        self._hasher = (
            ObjIdHasher("COMMIT")
            .put_bytes(create.parent_commit_id)
            .put_str(create.message)
            .put_hashable(create.headers)
        )
        self._conflicts: list[CommitConflict] = []

    def build(self, now_micros: Callable[[], int]) -> CommitObj:
        """The commit, or CommitConflictError with every conflict the handler rejected."""
        keys, re_added = _preprocess(self._create)
        self._parent.full_index.load_if_necessary(keys)
        removed_by_content_id = self._apply_removes()
        self._check_unchanged(re_added)
        self._apply_adds(re_added, removed_by_content_id)
        if self._conflicts:
            raise CommitConflictError(self._conflicts)
        return self._commit_obj(now_micros())

    def _leave_out(self, conflict: CommitConflict) -> bool:
        """Ask the handler; True if the operation is to be left out (rejected ones are recorded)."""
        resolution = self._conflict_handler(conflict)
        if resolution is ConflictResolution.CONFLICT:
            self._conflicts.append(conflict)
            return True
        return resolution is ConflictResolution.DROP

    def _apply_removes(self) -> dict[uuid.UUID, CommitOp]:
        """Check and apply the removes; returns them by content id (the other half of a rename)."""
        full_index, index, hasher = self._parent.full_index, self._parent.index, self._hasher
        removed_by_content_id: dict[uuid.UUID, CommitOp] = {}
        for remove in self._create.removes:
            key, content_id, payload = remove.key, remove.content_id, remove.payload
            existing = _live(full_index, key)
            expected = self._expected_value(False, key, remove.expected_value)
            op = CommitOp(Action.REMOVE, payload, expected, content_id)
            if content_id is not None:
                removed_by_content_id[content_id] = op
            conflict = _check(key, content_id, payload, op, existing, expected)
            if conflict is not None:
                if self._leave_out(conflict):
                    continue
            else:
                self._op_handler(key, None)
            hasher.put_int(2).put_int(payload).put_str(key).put_uuid(content_id)
            index.add(IndexElement(key, op))
        return removed_by_content_id

    def _check_unchanged(self, re_added: set[StoreKey]) -> None:
        full_index = self._parent.full_index
        for unchanged in self._create.unchanged:
            key = unchanged.key
            readded = key in re_added
            existing = None if readded else _live(full_index, key)
            expected = self._expected_value(False, key, unchanged.expected_value)
            conflict = _check(
                key, unchanged.content_id, unchanged.payload, None, existing, None if readded else expected
            )
            if conflict is not None:
                self._leave_out(conflict)

    def _apply_adds(self, re_added: set[StoreKey], removed_by_content_id: dict[uuid.UUID, CommitOp]) -> None:
        full_index, index, hasher = self._parent.full_index, self._parent.index, self._hasher
        for add in self._create.adds:
            key, content_id, payload = add.key, add.content_id, add.payload
            value = self._committed_value(True, key, add.value)
            if value is None:
                raise ValueError(f"Committed value replacement for {key!r} returned no value")
            op = CommitOp(Action.ADD, payload, value, content_id)
            readded = key in re_added
            existing = None if readded else _live(full_index, key)
            conflict = None
            if removed_by_content_id and not readded and content_id is not None:
                renamed_from = removed_by_content_id.pop(content_id, None)
                if renamed_from is not None:
                    # A rename: the removal of the same content id stands in for "existing".
                    if existing is not None:
                        conflict = CommitConflict(key, ConflictType.KEY_EXISTS, op, existing)
                    existing = renamed_from
            expected = self._expected_value(True, key, add.expected_value)
            if conflict is None:
                conflict = _check(key, content_id, payload, op, existing, None if readded else expected)
            if conflict is not None:
                if self._leave_out(conflict):
                    continue
            else:
                self._op_handler(key, value)
            hasher.put_int(1).put_str(key).put_int(payload).put_bytes(value).put_uuid(content_id)
            index.add(IndexElement(key, op))

    def _commit_obj(self, created: int) -> CommitObj:
        create, parent = self._create, self._parent
        return CommitObj(
            id=self._hasher.generate(),
            created=created,
            seq=parent.seq,
            tail=parent.tail,
            secondary_parents=tuple(create.secondary_parents),
            headers=create.headers,
            message=create.message,
            incremental_index=_serialize_and_remember(parent.index),
            reference_index=parent.reference_index,
            reference_index_stripes=parent.reference_index_stripes,
            commit_type=create.commit_type,
        )


def _serialize_and_remember(index: StoreIndexImpl) -> bytes:
    """Serialise a new commit's index and keep it decoded: its child will read it next. The cache
    takes the index over without a copy: it is the builder's own (``ParentStart.index``), and the
    builder, used once, is done with it when the commit object is made."""
    data = index.serialize()
    DECODED_INDEXES.adopt(data, index)
    return data


def _live(index: StoreIndex, key: StoreKey) -> CommitOp | None:
    element = index.get(key)
    return element.op if element is not None and element.op.action.exists else None


def _preprocess(create: CreateCommit) -> tuple[set[StoreKey], set[StoreKey]]:
    """Reject duplicate keys and content ids; a remove followed by an add of the same key is a re-add."""
    keys: set[StoreKey] = set()
    removed: set[StoreKey] = set()
    for remove in create.removes:
        if remove.key in keys:
            raise InputError(f"Duplicate key: {remove.key}")
        keys.add(remove.key)
        removed.add(remove.key)
    re_added: set[StoreKey] = set()
    content_ids: set[uuid.UUID] = set()
    for add in create.adds:
        if add.key in keys:
            if add.key not in removed:
                raise InputError(f"Duplicate key: {add.key}")
            removed.discard(add.key)
            re_added.add(add.key)
        keys.add(add.key)
        if add.content_id is not None:
            if add.content_id in content_ids:
                raise InputError(f"Duplicate content ID: {add.content_id} for key: {add.key}")
            content_ids.add(add.content_id)
    for unchanged in create.unchanged:
        if unchanged.key in keys:
            raise InputError(f"Duplicate key: {unchanged.key}")
        keys.add(unchanged.key)
    return keys, re_added


def _check(
    key: StoreKey,
    content_id: uuid.UUID | None,
    payload: int,
    op: CommitOp | None,
    existing: CommitOp | None,
    expected: ObjId | None,
) -> CommitConflict | None:
    """The first conflict found: existence, then payload, content id and value."""
    if expected is None:
        return CommitConflict(key, ConflictType.KEY_EXISTS, op, existing) if existing is not None else None
    if existing is None:
        return CommitConflict(key, ConflictType.KEY_DOES_NOT_EXIST, op)
    if payload != existing.payload:
        return CommitConflict(key, ConflictType.PAYLOAD_DIFFERS, op, existing)
    if content_id != existing.content_id:
        return CommitConflict(key, ConflictType.CONTENT_ID_DIFFERS, op, existing)
    if expected != existing.value:
        return CommitConflict(key, ConflictType.VALUE_DIFFERS, op, existing)
    return None
