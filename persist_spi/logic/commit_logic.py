"""Building, identifying and storing commits; reading them back.

A commit's id is SHA-256 over ``COMMIT``, the parent id, message and headers, then each kept
remove (``int 2, payload, key, content id``) and add (``int 1, key, payload, value, content id``)
in request order, exactly as Nessie derives it. Expected values, unchanged checks, secondary
parents, the commit type, timestamps and the index layout are not part of the id.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from persist_spi.clock import DEFAULT_CLOCK
from persist_spi.errors import InputError, ObjNotFound, ObjTooLarge
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.indexes.base import StoreIndex
from persist_spi.indexes.elements import CommitOp, IndexElement
from persist_spi.indexes.layered import LayeredIndex
from persist_spi.indexes.store_index import new_index
from persist_spi.keys import StoreKey, key_less
from persist_spi.logic.commit_builder import (
    CommitBuilder,
    ConflictHandler,
    LoadedParent,
    OpHandler,
    ParentStart,
    ValueReplacement,
    report_conflict,
)
from persist_spi.logic.create_commit import CreateCommit
from persist_spi.logic.errors import CommitNotFound
from persist_spi.logic.indexes import IndexesLogic
from persist_spi.logic.spill import spill_incremental_index
from persist_spi.objs import CommitObj, Obj
from persist_spi.persist import Persist
from persist_spi.references import Reference


@dataclass(frozen=True)
class StoredCommit:
    """Outcome of storing a commit: the commit as stored (None on a genuine hash collision) and
    whether this call wrote it."""

    commit: CommitObj | None
    stored: bool


class CommitLogic:
    def __init__(self, persist: Persist, clock: Callable[[], int] | None = None) -> None:
        self.persist = persist
        self.indexes = IndexesLogic(persist)
        self._now = clock if clock is not None else DEFAULT_CLOCK.micros

    # --- building --------------------------------------------------------------------------------

    def build_commit_obj(
        self,
        create: CreateCommit,
        *,
        conflict_handler: ConflictHandler = report_conflict,
        op_handler: OpHandler | None = None,
        expected_value_replacement: ValueReplacement | None = None,
        committed_value_replacement: ValueReplacement | None = None,
        loaded_parent: LoadedParent | None = None,
    ) -> CommitObj:
        """Build (not store) the commit ``create`` describes; raises CommitConflictError.

        ``loaded_parent`` lets a caller that already read the parent and its reference index (to
        validate) hand them over instead of having them read and decoded again.
        """
        builder = CommitBuilder(
            create,
            self._parent_start(create.parent_commit_id, loaded_parent),
            conflict_handler=conflict_handler,
            op_handler=op_handler,
            expected_value_replacement=expected_value_replacement,
            committed_value_replacement=committed_value_replacement,
        )
        return builder.build(self._now)

    def _parent_start(self, parent_id: ObjId, loaded_parent: LoadedParent | None) -> ParentStart:
        """The parent (read unless ``loaded_parent`` holds it) and what the child takes over."""
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
        if parent is None:
            if parent_id != EMPTY_OBJ_ID:
                raise InputError(f"Commit to build points to non-existing parent commit {parent_id}")
            index = new_index()
            return ParentStart(
                tail=(parent_id,),
                seq=1,
                index=index,
                full_index=index,
                reference_index=None,
                reference_index_stripes=(),
            )
        keep = max(0, min(self.persist.config.parents_per_commit - 1, len(parent.tail)))
        # The child's index starts as the parent's incremental index, rewritten; the complete view
        # shares it. Operations added later only touch keys already checked (each key is handled
        # once), so the shared view never answers from the child's own changes.
        index = self.indexes.incremental_index_for_update(parent)
        full_index: StoreIndex
        if loaded_parent is not None:
            reference = loaded_parent.reference_index
            full_index = index if reference is None else LayeredIndex(reference, index)
        else:
            full_index = self.indexes.build_complete_index(parent, index)
        return ParentStart(
            tail=(parent_id, *parent.tail[:keep]),
            seq=parent.seq + 1,
            index=index,
            full_index=full_index,
            reference_index=parent.reference_index,
            reference_index_stripes=parent.reference_index_stripes,
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

    def judge_existing(self, commit: CommitObj) -> StoredCommit:
        """The outcome for a commit whose id was found existing when it was stored: the stored
        commit if it is this very one, None on a hash collision."""
        return self._check_collision(False, commit)

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
            if a is not None and b is not None and a.key == b.key:  # the usual case, and the cheapest test
                if a.op.value != b.op.value:
                    yield DiffEntry(a.key, a.op, b.op)
                a, b = next(left, None), next(right, None)
            elif b is None or (a is not None and key_less(a.key, b.key)):
                assert a is not None
                yield DiffEntry(a.key, a.op, None)
                a = next(left, None)
            else:
                yield DiffEntry(b.key, None, b.op)
                b = next(right, None)


@dataclass(frozen=True)
class DiffEntry:
    key: StoreKey
    from_op: CommitOp | None
    to_op: CommitOp | None


def _until_empty(ids: Iterable[ObjId]) -> list[ObjId]:
    batch = []
    for i in ids:
        if i == EMPTY_OBJ_ID:
            break
        batch.append(i)
    return batch


def _live_elements(
    elements: Iterator[IndexElement], key_filter: Callable[[StoreKey], bool] | None
) -> Iterator[IndexElement]:
    for element in elements:
        if element.op.action.exists and (key_filter is None or key_filter(element.key)):
            yield element


__all__ = ["CommitLogic", "CommitNotFound", "DiffEntry", "ObjNotFound", "StoredCommit", "report_conflict"]
