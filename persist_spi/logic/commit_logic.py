"""Building, identifying and storing commits; reading them back.

A commit's id is SHA-256 over ``COMMIT``, the parent id, message and headers, then each kept
remove (``int 2, payload, key, content id``) and add (``int 1, key, payload, value, content id``)
in request order, exactly as Nessie derives it. Expected values, unchanged checks, secondary
parents, the commit type, timestamps and the index layout are not part of the id.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from persist_spi.errors import InputError, LochkitError, ObjNotFound, ObjTooLarge
from persist_spi.hashing import ObjIdHasher
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.indexes.base import StoreIndex
from persist_spi.indexes.elements import Action, CommitOp, IndexElement
from persist_spi.indexes.layered import LayeredIndex
from persist_spi.indexes.store_index import DECODED_INDEXES, StoreIndexImpl, new_index
from persist_spi.keys import StoreKey
from persist_spi.logic.conflicts import CommitConflict, CommitConflictError, ConflictResolution, ConflictType
from persist_spi.logic.create_commit import CreateCommit
from persist_spi.logic.indexes import IndexesLogic
from persist_spi.logic.spill import spill_incremental_index
from persist_spi.objs import CommitObj, Obj
from persist_spi.persist import Persist
from persist_spi.references import Reference

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


@dataclass(frozen=True)
class StoredCommit:
    """Outcome of storing a commit: the commit as stored (None on a genuine hash collision) and
    whether this call wrote it."""

    commit: CommitObj | None
    stored: bool


class CommitLogic:
    def __init__(self, persist: Persist, clock: Callable[[], int] | None = None) -> None:
        from persist_spi.clock import DEFAULT_CLOCK

        self.persist = persist
        self.indexes = IndexesLogic(persist)
        self._now = clock if clock is not None else DEFAULT_CLOCK.micros

    # --- building --------------------------------------------------------------------------------

    def build_commit_obj(
        self,
        create: CreateCommit,
        conflict_handler: ConflictHandler = report_conflict,
        op_handler: OpHandler = _no_op,
        expected_value_replacement: ValueReplacement | None = None,
        committed_value_replacement: ValueReplacement | None = None,
        loaded_parent: LoadedParent | None = None,
    ) -> CommitObj:
        """Build (not store) the commit ``create`` describes; raises CommitConflictError.

        ``loaded_parent`` lets a caller that already read the parent and its reference index (to
        validate) hand them over instead of having them read and decoded again.
        """
        config = self.persist.config
        expected_value_replacement = expected_value_replacement or _keep
        committed_value_replacement = committed_value_replacement or _keep
        parent_id = create.parent_commit_id
        hasher = (
            ObjIdHasher("COMMIT").put_bytes(parent_id).put_str(create.message).put_hashable(create.headers)
        )

        parent: CommitObj | None
        if (
            loaded_parent is not None
            and loaded_parent.commit is not None
            and loaded_parent.commit.id == parent_id
        ):
            parent = loaded_parent.commit
        else:
            parent = self.fetch_commit(parent_id)
            loaded_parent = None
        tail: list[ObjId] = [parent_id]
        index: StoreIndexImpl
        full_index: StoreIndex
        if parent is not None:
            tail += parent.tail[: max(0, min(config.parents_per_commit - 1, len(parent.tail)))]
            # The child's index starts as the parent's incremental index, rewritten; the complete
            # view shares it. Operations added below only touch keys already checked (each key is
            # handled once), so the shared view never answers from this commit's own changes.
            index = self.indexes.incremental_index_for_update(parent)
            if loaded_parent is not None:
                reference = loaded_parent.reference_index
                full_index = index if reference is None else LayeredIndex(reference, index)
            else:
                full_index = self.indexes.build_complete_index(parent, index)
            seq = parent.seq + 1
            reference_index, reference_stripes = parent.reference_index, parent.reference_index_stripes
        else:
            if parent_id != EMPTY_OBJ_ID:
                raise ValueError(f"Commit to build points to non-existing parent commit {parent_id}")
            full_index = index = new_index()
            seq = 1
            reference_index, reference_stripes = None, ()

        keys, re_added = _preprocess(create)
        full_index.load_if_necessary(keys)

        conflicts: list[CommitConflict] = []

        def resolve(conflict: CommitConflict) -> bool:
            """True if the operation is to be left out."""
            resolution = conflict_handler(conflict)
            if resolution is ConflictResolution.CONFLICT:
                conflicts.append(conflict)
                return True
            return resolution is ConflictResolution.DROP

        removed_by_content_id: dict[uuid.UUID, CommitOp] = {}
        for remove in create.removes:
            key, content_id, payload = remove.key, remove.content_id, remove.payload
            existing = _live(full_index, key)
            expected = expected_value_replacement(False, key, remove.expected_value)
            op = CommitOp(Action.REMOVE, payload, expected, content_id)
            if content_id is not None:
                removed_by_content_id[content_id] = op
            conflict = _check(key, content_id, payload, op, existing, expected)
            if conflict is not None:
                if resolve(conflict):
                    continue
            else:
                op_handler(key, None)
            hasher.put_int(2).put_int(payload).put_str(key).put_uuid(content_id)
            index.add(IndexElement(key, op))

        for unchanged in create.unchanged:
            key = unchanged.key
            readded = key in re_added
            existing = None if readded else _live(full_index, key)
            expected = expected_value_replacement(False, key, unchanged.expected_value)
            conflict = _check(
                key, unchanged.content_id, unchanged.payload, None, existing, None if readded else expected
            )
            if conflict is not None:
                resolve(conflict)

        for add in create.adds:
            key, content_id, payload = add.key, add.content_id, add.payload
            value = committed_value_replacement(True, key, add.value)
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
            expected = expected_value_replacement(True, key, add.expected_value)
            if conflict is None:
                conflict = _check(key, content_id, payload, op, existing, None if readded else expected)
            if conflict is not None:
                if resolve(conflict):
                    continue
            else:
                op_handler(key, value)
            hasher.put_int(1).put_str(key).put_int(payload).put_bytes(value).put_uuid(content_id)
            index.add(IndexElement(key, op))

        if conflicts:
            raise CommitConflictError(conflicts)

        return CommitObj(
            id=hasher.generate(),
            created=self._now(),
            seq=seq,
            tail=tuple(tail),
            secondary_parents=tuple(create.secondary_parents),
            headers=create.headers,
            message=create.message,
            incremental_index=_serialize_and_remember(index),
            reference_index=reference_index,
            reference_index_stripes=reference_stripes,
            commit_type=create.commit_type,
        )

    # --- storing ---------------------------------------------------------------------------------

    def store_commit(self, commit: CommitObj, additional: Sequence[Obj] = ()) -> StoredCommit:
        """Store the commit with objects it needs. If its incremental index is over the limit,
        spill it into the reference index first. An existing equal commit counts as success."""
        try:
            stored = self.persist.store_objs([*additional, commit])
            return self._check_collision(stored[-1], commit)
        except ObjTooLarge:
            self.persist.store_objs(list(additional))
            commit = self.spill(commit)
            return self._check_collision(
                self.persist.store_obj(commit, ignore_soft_size_restrictions=True), commit
            )

    def update_commit(self, commit: CommitObj) -> CommitObj:
        """Overwrite a commit (maintenance only), spilling its index when it is too large."""
        try:
            self.persist.upsert_obj(commit)
        except ObjTooLarge:
            commit = self.spill(commit)
            self.persist.upsert_obj(commit)
        return commit

    def do_commit(self, create: CreateCommit, additional: Sequence[Obj] = ()) -> CommitObj | None:
        return self.store_commit(self.build_commit_obj(create), additional).commit

    def spill(self, commit: CommitObj) -> CommitObj:
        return spill_incremental_index(self.persist, self.indexes, commit)

    def _check_collision(self, stored: bool, commit: CommitObj) -> StoredCommit:
        if stored:
            return StoredCommit(commit, True)
        # The id exists: fine if it is this very commit (e.g. a retry after an unknown outcome),
        # a hash collision otherwise.
        existing = self.persist.fetch_typed_objs_if_exist([commit.id], CommitObj.TYPE)[0]
        if (
            isinstance(existing, CommitObj)
            and dataclasses.replace(commit, created=existing.created) == existing
        ):
            return StoredCommit(existing, False)
        return StoredCommit(None, False)

    # --- reading ---------------------------------------------------------------------------------

    def fetch_commit(self, commit_id: ObjId) -> CommitObj | None:
        """None for the empty id; ``ObjNotFound`` if the commit does not exist."""
        if commit_id == EMPTY_OBJ_ID:
            return None
        return self.persist.fetch_as(commit_id, CommitObj)

    def fetch_commit_if_exists(self, commit_id: ObjId) -> CommitObj | None:
        """None for the empty id and for a missing commit (what merge-base searches walk with);
        backend errors still surface."""
        try:
            return self.fetch_commit(commit_id)
        except ObjNotFound:
            return None

    def fetch_commits(self, ids: Sequence[ObjId]) -> list[CommitObj | None]:
        return self.persist.fetch_all_as([None if i == EMPTY_OBJ_ID else i for i in ids], CommitObj)

    def head_commit(self, ref: Reference) -> CommitObj | None:
        return self.fetch_commit(ref.pointer)

    def complete_index_of(self, commit_id: ObjId) -> StoreIndex:
        return self.indexes.build_complete_index_or_empty(self.fetch_commit(commit_id))

    def commit_log(self, start: ObjId, end: ObjId | None = None) -> Iterator[CommitObj]:
        """First-parent history from ``start`` (inclusive), newest first, fetching each batch of
        ancestors (a commit's tail) in one read; stops after ``end`` if given."""
        batch: list[ObjId] = [] if start == EMPTY_OBJ_ID else [start]
        while batch:
            commits = self.persist.fetch_typed_objs_if_exist(batch, CommitObj.TYPE)
            last: CommitObj | None = None
            for commit_id, commit in zip(batch, commits, strict=True):
                if not isinstance(commit, CommitObj):
                    raise CommitNotFound(commit_id)
                yield commit
                if commit.id == end:
                    return
                last = commit
            assert last is not None
            batch = _until_empty(last.tail)

    def commit_id_log(self, start: ObjId, end: ObjId | None = None) -> Iterator[ObjId]:
        for commit in self.commit_log(start, end):
            yield commit.id

    # --- diff ------------------------------------------------------------------------------------

    def diff(
        self,
        from_index: StoreIndex,
        to_index: StoreIndex,
        begin: StoreKey | None = None,
        end: StoreKey | None = None,
        key_filter: Callable[[StoreKey], bool] | None = None,
    ) -> Iterator[DiffEntry]:
        """Keys whose value differs between two complete indexes, in key order."""
        left = _live_elements(from_index.iterate(begin, end), key_filter)
        right = _live_elements(to_index.iterate(begin, end), key_filter)
        a, b = next(left, None), next(right, None)
        while a is not None or b is not None:
            if b is None or (a is not None and a.key < b.key):
                assert a is not None
                yield DiffEntry(a.key, a.op, None)
                a = next(left, None)
            elif a is None or b.key < a.key:
                yield DiffEntry(b.key, None, b.op)
                b = next(right, None)
            else:
                if a.op.value != b.op.value:
                    yield DiffEntry(a.key, a.op, b.op)
                a, b = next(left, None), next(right, None)


@dataclass(frozen=True)
class DiffEntry:
    key: StoreKey
    from_op: CommitOp | None
    to_op: CommitOp | None


class CommitNotFound(LochkitError, LookupError):
    def __init__(self, commit_id: ObjId) -> None:
        self.commit_id = commit_id
        super().__init__(f"Commit '{commit_id}' not found")


def _serialize_and_remember(index: StoreIndexImpl) -> bytes:
    """Serialise a new commit's index and keep it decoded: its child will read it next."""
    data = index.serialize()
    DECODED_INDEXES.put(data, index)
    return data


def _until_empty(ids: Iterable[ObjId]) -> list[ObjId]:
    batch = []
    for i in ids:
        if i == EMPTY_OBJ_ID:
            break
        batch.append(i)
    return batch


def _live(index: StoreIndex, key: StoreKey) -> CommitOp | None:
    element = index.get(key)
    return element.op if element is not None and element.op.action.exists else None


def _live_elements(
    elements: Iterator[IndexElement], key_filter: Callable[[StoreKey], bool] | None
) -> Iterator[IndexElement]:
    for element in elements:
        if element.op.action.exists and (key_filter is None or key_filter(element.key)):
            yield element


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


__all__ = ["CommitLogic", "CommitNotFound", "DiffEntry", "ObjNotFound", "StoredCommit", "report_conflict"]
