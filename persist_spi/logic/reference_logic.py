"""Named references with crash recovery, on top of the references table and ``int/refs``.

Creating a reference first commits its name to ``int/refs`` (with a RefObj recording the initial
pointer), then inserts the row. Deleting marks the row deleted, commits the removal to
``int/refs``, then purges the row. A process that dies between those steps leaves a half-done
change that every later read finishes:

- a name live in ``int/refs`` without a row: the create is completed (row added at the RefObj's
  initial pointer);
- a row marked deleted whose name is still live in ``int/refs``: the delete is completed;
- a row marked deleted whose name is already removed from ``int/refs``: the row is purged.

Recovery is skipped when ``int/refs`` moved after its index was read (the view is stale).
"""

from __future__ import annotations

import contextlib
import datetime
import enum
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from persist_spi.clock import DEFAULT_CLOCK
from persist_spi.errors import InputError, ObjNotFound, RefAlreadyExists, RefConditionFailed, RefNotFound
from persist_spi.headers import CommitHeaders
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.indexes.base import StoreIndex
from persist_spi.indexes.elements import IndexElement
from persist_spi.keys import key_from_string, key_less
from persist_spi.logic.commit_logic import CommitLogic
from persist_spi.logic.conflicts import CommitConflictError, ConflictResolution, ConflictType
from persist_spi.logic.create_commit import Add, CreateCommit, Remove
from persist_spi.logic.internal_refs import REF_REFS, is_internal, ref_key
from persist_spi.logic.retry import RetryNeeded, commit_retry
from persist_spi.objs import CommitObj, CommitType, RefObj, ref_obj
from persist_spi.persist import Persist
from persist_spi.references import Reference, check_reference_name

#: References resolved per bulk read while listing.
REFERENCES_BATCH_SIZE = 50


class CreateOutcome(enum.Enum):
    ADDED_TO_INDEX = "added"
    REF_ROW_EXISTS = "row-exists"
    REF_ROW_MISSING = "row-missing"


@dataclass(frozen=True)
class CreateResult:
    created: Reference
    outcome: CreateOutcome
    existing: Reference | None = None


@dataclass
class RefsIndex:
    """``int/refs``'s complete index as of one pointer, loaded once on first use."""

    pointer: ObjId
    _load: Callable[[], StoreIndex]
    _index: StoreIndex | None = None

    @property
    def index(self) -> StoreIndex:
        if self._index is None:
            self._index = self._load()
        return self._index

    def get(self, name: str) -> IndexElement | None:
        return self.index.get(ref_key(name))


class _RefRefsAdvanced(Exception):
    pass


class ReferenceLogic:
    def __init__(self, persist: Persist, clock: Callable[[], int] | None = None) -> None:
        self.persist = persist
        self.commits = CommitLogic(persist)
        self._now = clock if clock is not None else DEFAULT_CLOCK.micros

    # --- reads -----------------------------------------------------------------------------------

    def get_references(self, names: Sequence[str]) -> list[Reference | None]:
        return self._get_references(names, self.persist.fetch_references)

    def get_references_for_update(self, names: Sequence[str]) -> list[Reference | None]:
        return self._get_references(names, self.persist.fetch_references_for_update)

    def get_reference(self, name: str) -> Reference:
        found = self.get_references([name])[0]
        if found is None:
            raise RefNotFound(name)
        return found

    def get_reference_for_update(self, name: str) -> Reference:
        # Every commit attempt reads its branch this way. A live row needs no recovery, so it is
        # read alone; only a missing or deleted-marked one is read again with int/refs.
        row = self.persist.fetch_references_for_update([name])[0]
        if row is not None and not row.deleted and not is_internal(row.name):
            return row
        found = self.get_references_for_update([name])[0]
        if found is None:
            raise RefNotFound(name)
        return found

    def _get_references(
        self, names: Sequence[str], fetch: Callable[[Sequence[str | None]], list[Reference | None]]
    ) -> list[Reference | None]:
        # int/refs is read in the same bulk call, so recovery works from a consistent pointer.
        rows = fetch([*names, REF_REFS])
        refs_index = self._refs_index(rows[-1])
        result: list[Reference | None] = []
        for name, row in zip(names, rows, strict=False):
            ref = self._maybe_recover(name, row, refs_index)
            result.append(None if ref is None or is_internal(ref.name) else ref)
        return result

    def query_references(
        self, prefix: str | None = None, paging_token: str | None = None
    ) -> Iterator[Reference]:
        """References whose names start with ``prefix``, in name order (Nessie's: by UTF-16 code
        unit), from the inclusive ``paging_token`` (a reference name) on."""
        refs_index = self._refs_index(self.persist.fetch_reference(REF_REFS))
        begin = paging_token if paging_token is not None else prefix
        batch: list[str] = []
        for element in refs_index.index.iterate(key_from_string(begin) if begin else None, None):
            if prefix is not None and not element.key.startswith(prefix):
                if key_less(prefix, element.key):
                    break  # keys are sorted: nothing after this can match
                continue
            batch.append(element.key)
            if len(batch) == REFERENCES_BATCH_SIZE:
                yield from self._resolve_batch(batch, refs_index)
                batch = []
        yield from self._resolve_batch(batch, refs_index)

    def _resolve_batch(self, names: list[str], refs_index: RefsIndex) -> Iterator[Reference]:
        if not names:
            return
        for name, row in zip(names, self.persist.fetch_references(names), strict=True):
            ref = self._maybe_recover(name, row, refs_index)
            if ref is not None:
                yield ref

    # --- create ----------------------------------------------------------------------------------

    def create_reference(
        self,
        name: str,
        pointer: ObjId,
        extended_info_obj: ObjId | None = None,
        created_at_micros: int | None = None,
    ) -> Reference:
        _check_not_internal(name, "create")
        check_reference_name(name)
        created_at = created_at_micros if created_at_micros is not None else self._now()
        while True:
            result = self.commit_create_reference(name, pointer, extended_info_obj, created_at)
            created = result.created
            if result.outcome is CreateOutcome.ADDED_TO_INDEX:
                try:
                    return self.persist.add_reference(created)
                except RefAlreadyExists as e:
                    if e.reference == created:  # recovery by another reader already added it
                        continue
                    raise
            existing = result.existing
            assert existing is not None
            if result.outcome is CreateOutcome.REF_ROW_MISSING:
                # A create stopped half-way: finish it. It is this very create when its
                # registration equals ours (the int/refs commit landed though its answer was lost:
                # created-at times are unique), so the name is ours; otherwise it is taken.
                try:
                    existing = self.persist.add_reference(existing)
                except RefAlreadyExists as e:
                    existing = e.reference or existing
                if existing == created:
                    return existing
                raise RefAlreadyExists(existing)
            if existing == created:
                return existing
            if not existing.deleted:
                raise RefAlreadyExists(existing)
            self._maybe_recover(
                name, existing, self._refs_index(self.persist.fetch_reference_for_update(REF_REFS))
            )

    def commit_create_reference(
        self, name: str, pointer: ObjId, extended_info_obj: ObjId | None, created_at_micros: int
    ) -> CreateResult:
        """Step one of a create: register the name in ``int/refs`` (exposed for recovery tests)."""
        created = Reference(name, pointer, False, created_at_micros, extended_info_obj)
        ref_object = ref_obj(name, pointer, created_at_micros, extended_info_obj)

        def attempt(_: object) -> CreateResult:
            refs = self._int_refs_for_update()
            self.persist.store_obj(ref_object)
            create = CreateCommit(
                parent_commit_id=refs.pointer,
                message=f"Create reference {name} pointing to {pointer}",
                headers=_change_headers("create", name, pointer),
                commit_type=CommitType.INTERNAL,
                adds=(Add(ref_key(name), 0, ref_object.id),),
            )
            self._commit_to_int_refs(refs, create)
            return CreateResult(created, CreateOutcome.ADDED_TO_INDEX)

        try:
            return commit_retry(self.persist.config, attempt)
        except CommitConflictError as e:
            if len(e.conflicts) != 1 or e.conflicts[0].conflict_type is not ConflictType.KEY_EXISTS:
                raise
        element = self._refs_index(self.persist.fetch_reference_for_update(REF_REFS)).get(name)
        if element is None or element.op.value is None:
            raise RuntimeError(f"int/refs reported {name} as existing but its index lacks it")
        row = self.persist.fetch_reference_for_update(name)
        if row is not None:
            return CreateResult(created, CreateOutcome.REF_ROW_EXISTS, row)
        return CreateResult(
            created, CreateOutcome.REF_ROW_MISSING, self._row_from_ref_obj(name, element.op.value)
        )

    # --- delete ----------------------------------------------------------------------------------

    def delete_reference(self, name: str, expected_pointer: ObjId) -> None:
        _check_not_internal(name, "delete")
        ref = self.persist.fetch_reference_for_update(name)
        refs_index: RefsIndex | None = None
        if ref is None:
            refs_index = self._refs_index(self.persist.fetch_reference(REF_REFS))
            if refs_index.get(name) is None:
                raise RefNotFound(name)
            ref = self._maybe_recover(name, None, refs_index)
            if ref is None:
                raise RefNotFound(name)
        already_deleted = ref.deleted
        if ref.pointer != expected_pointer and not already_deleted:
            if refs_index is None:
                refs_index = self._refs_index(self.persist.fetch_reference(REF_REFS))
            recovered = self._maybe_recover(name, ref, refs_index)
            raise RefConditionFailed(recovered if recovered is not None else ref)
        if not already_deleted:
            self.persist.mark_reference_as_deleted(ref)
        self.commit_delete_reference(ref, None)
        # A concurrent reader's recovery may have purged it already (and the name been reused).
        with contextlib.suppress(RefNotFound, RefConditionFailed):
            self.persist.purge_reference(ref.with_deleted(True))
        if already_deleted:
            # An earlier delete got this far before failing; it counts as the delete that succeeded.
            raise RefNotFound(name)

    def commit_delete_reference(self, ref: Reference, expected_int_refs_head: ObjId | None) -> None:
        """Step two of a delete: remove the name from ``int/refs`` if it is still there (exposed
        for recovery tests)."""

        def attempt(_: object) -> None:
            refs = self._int_refs_for_update()
            if expected_int_refs_head is not None and refs.pointer != expected_int_refs_head:
                raise _RefRefsAdvanced()
            index = self.commits.complete_index_of(refs.pointer)
            element = index.get(ref_key(ref.name))
            if element is None or not element.op.exists or element.op.value is None:
                return
            create = CreateCommit(
                parent_commit_id=refs.pointer,
                message=f"Drop reference {ref.name} pointing to {ref.pointer}",
                headers=_change_headers("delete", ref.name, ref.pointer),
                commit_type=CommitType.INTERNAL,
                removes=(Remove(ref_key(ref.name), 0, element.op.value, element.op.content_id),),
            )
            self._commit_to_int_refs(refs, create)

        commit_retry(self.persist.config, attempt)

    # --- assign and rewrite ----------------------------------------------------------------------

    def assign_reference(self, current: Reference, new_pointer: ObjId) -> Reference:
        _check_not_internal(current.name, "assign")
        return self.persist.update_reference_pointer(current, new_pointer)

    def rewrite_commit_log(self, current: Reference, cutoff: Callable[[int, CommitObj], bool]) -> Reference:
        """Squash history: the first commit (newest first, 1-based) for which ``cutoff`` is true
        becomes a root commit holding every live key; newer commits are replayed on top."""
        newer: list[CommitObj] = []
        for n, commit in enumerate(self.commits.commit_log(current.pointer), start=1):
            if not cutoff(n, commit):
                newer.append(commit)
                continue
            if commit.direct_parent == EMPTY_OBJ_ID:
                return current
            full = self.commits.indexes.build_complete_index(commit)
            adds = tuple(
                Add(e.key, e.op.payload, e.op.value, None, e.op.content_id)
                for e in full
                if e.op.exists and e.op.value is not None
            )
            head = self._store(CreateCommit(EMPTY_OBJ_ID, commit.message, commit.headers, adds=adds))
            for replay in reversed(newer):
                ops = self.commits.indexes.commit_operations(replay)
                head = self._store(
                    CreateCommit(
                        head.id,
                        replay.message,
                        replay.headers,
                        adds=tuple(
                            Add(e.key, e.op.payload, e.op.value, None, e.op.content_id)
                            for e in ops
                            if e.op.exists and e.op.value is not None
                        ),
                        removes=tuple(
                            Remove(e.key, e.op.payload, e.op.value, e.op.content_id)
                            for e in ops
                            if not e.op.exists and e.op.value is not None
                        ),
                    )
                )
            return self.persist.update_reference_pointer(current, head.id)
        return current

    def _store(self, create: CreateCommit) -> CommitObj:
        # Replayed operations are applied as they were; history is rewritten, not re-validated.
        commit = self.commits.build_commit_obj(create, conflict_handler=lambda _: ConflictResolution.ADD)
        stored = self.commits.store_commit(commit)
        if stored.commit is None:
            raise RuntimeError(f"Hash collision detected for commit {commit.id}")
        return stored.commit

    # --- recovery --------------------------------------------------------------------------------

    def _maybe_recover(self, name: str, ref: Reference | None, refs_index: RefsIndex) -> Reference | None:
        if ref is not None and not ref.deleted:
            return ref
        element = refs_index.get(name)
        if ref is None:
            if element is None or not element.op.exists or element.op.value is None:
                return None
            # The name is registered but has no row: a create stopped half-way. Finish it.
            row = self._row_from_ref_obj(name, element.op.value)
            if self._int_refs_moved(refs_index):
                return None
            try:
                return self.persist.add_reference(row)
            except RefAlreadyExists as e:
                return e.reference
        if element is None or not element.op.exists or element.op.value is None:
            # The removal is committed; only the purge is missing. Without a reference index,
            # int/refs drops a removal's tombstone at its next commit, so a name no longer
            # registered at all means the same, unless this view of int/refs is stale.
            if element is None and self._int_refs_moved(refs_index):
                return None
            self._purge_leftover(ref)
            return None
        if self._int_refs_moved(refs_index):
            return None
        # A delete stopped after marking the row (or is still running): finish it. Either way a
        # row marked deleted is gone for readers. (Nessie hands the marked row back when int/refs
        # moved meanwhile; a listing would then show a reference being deleted.)
        try:
            self.commit_delete_reference(ref, refs_index.pointer)
            self.persist.purge_reference(ref)
        except (RefNotFound, RefConditionFailed, _RefRefsAdvanced):
            pass  # someone else moved things on; a later read finishes what remains
        return None

    def _purge_leftover(self, ref: Reference) -> None:
        """Purge a row marked deleted; someone else doing it first is fine."""
        with contextlib.suppress(RefNotFound, RefConditionFailed):
            self.persist.purge_reference(ref.with_deleted(True))

    def _int_refs_moved(self, refs_index: RefsIndex) -> bool:
        current = self.persist.fetch_reference_for_update(REF_REFS)
        if current is None:
            raise RuntimeError(f"Internal reference {REF_REFS} is missing; initialise the repository")
        return current.pointer != refs_index.pointer

    def _row_from_ref_obj(self, name: str, ref_obj_id: ObjId) -> Reference:
        try:
            created = self.persist.fetch_as(ref_obj_id, RefObj)
        except ObjNotFound as e:
            raise RuntimeError(f"The creation record of reference {name} ({ref_obj_id}) is missing") from e
        return Reference(
            name, created.initial_pointer, False, created.created_at_micros, created.extended_info_obj
        )

    def _refs_index(self, refs: Reference | None) -> RefsIndex:
        pointer = refs.pointer if refs is not None else EMPTY_OBJ_ID
        return RefsIndex(pointer, lambda: self.commits.complete_index_of(pointer))

    def _int_refs_for_update(self) -> Reference:
        refs = self.persist.fetch_reference_for_update(REF_REFS)
        if refs is None:
            raise RuntimeError(f"Internal reference {REF_REFS} is missing; initialise the repository")
        return refs

    def _commit_to_int_refs(self, refs: Reference, create: CreateCommit) -> None:
        commit = self.commits.do_commit(create)
        if commit is None:
            raise RuntimeError(f"Hash collision detected while committing to {REF_REFS}")
        try:
            self.persist.update_reference_pointer(refs, commit.id)
        except RefConditionFailed:
            raise RetryNeeded() from None


def _check_not_internal(name: str, what: str) -> None:
    if is_internal(name):
        raise InputError(f"Cannot {what} reference {name}: internal references are managed by lochkit itself")


def _change_headers(operation: str, name: str, pointer: ObjId) -> CommitHeaders:
    now = datetime.datetime.now(datetime.UTC)
    return CommitHeaders(
        [
            ("operation", operation),
            ("name", name),
            ("head", str(pointer)),
            ("timestamp", now.isoformat().replace("+00:00", "Z")),
            ("timestamp.millis", str(int(now.timestamp() * 1000))),
        ]
    )
