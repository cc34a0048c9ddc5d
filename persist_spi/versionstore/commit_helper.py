"""What every branch-changing operation of the version store shares (commit, merge, transplant):
building a commit with its key conflicts reported as the version store's, moving the branch by
compare-and-swap, and the bounded retry loop around an attempt."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from persist_spi.errors import ObjTooLarge, RefConditionFailed, UnknownOperationResult
from persist_spi.ids import ObjId
from persist_spi.logic.commit_builder import (
    ConflictHandler,
    LoadedParent,
    OpHandler,
    ValueReplacement,
    report_conflict,
)
from persist_spi.logic.commit_logic import CommitLogic
from persist_spi.logic.conflicts import CommitConflictError
from persist_spi.logic.create_commit import CreateCommit
from persist_spi.logic.outcomes import commit_in_history
from persist_spi.logic.retry import RetryNeeded
from persist_spi.objs import CommitObj, Obj
from persist_spi.persist import Persist
from persist_spi.references import Reference
from persist_spi.versionstore.content_mapping import ContentMapping
from persist_spi.versionstore.errors import ReferenceConflictError
from persist_spi.versionstore.known_heads import KnownHeads
from persist_spi.versionstore.policies.base import with_retries

T = TypeVar("T")


class CommitHelper:
    def __init__(
        self, persist: Persist, commits: CommitLogic, known_heads: KnownHeads, contents: ContentMapping
    ) -> None:
        self.persist = persist
        self.commits = commits
        #: Branch rows as this process last read or moved them.
        self.known_heads = known_heads
        self.contents = contents

    def build(
        self,
        create: CreateCommit,
        *,
        conflict_handler: ConflictHandler = report_conflict,
        expected_value_replacement: ValueReplacement | None = None,
        committed_value_replacement: ValueReplacement | None = None,
        logic: CommitLogic | None = None,
        loaded_parent: LoadedParent | None = None,
        op_handler: OpHandler | None = None,
    ) -> CommitObj:
        """Build a commit (with ``logic``, default: the store's); key conflicts become a
        ReferenceConflictError naming the current content. ``op_handler`` is told of each operation
        that went in without a conflict."""
        logic = logic if logic is not None else self.commits
        try:
            return logic.build_commit_obj(
                create,
                conflict_handler=conflict_handler,
                op_handler=op_handler,
                expected_value_replacement=expected_value_replacement,
                committed_value_replacement=committed_value_replacement,
                loaded_parent=loaded_parent,
            )
        except CommitConflictError as e:
            raise ReferenceConflictError(self.contents.conflicts(e.conflicts)) from None

    def move_branch(self, ref: Reference, new_head: ObjId) -> None:
        """Compare-and-swap the branch; a lost race retries the whole attempt on the new head."""
        self._settle_move(ref, new_head, lambda: self.persist.update_reference_pointer(ref, new_head))

    def store_and_move_branch(
        self,
        ref: Reference,
        commit: CommitObj,
        objects: Sequence[Obj],
        stored_ids: set[ObjId] | None = None,
    ) -> None:
        """Store ``commit`` with the ``objects`` it needs and move the branch onto it, as one call
        (one round trip where the database allows it). Two steps instead when the commit's index
        must be spilled first, or when the commit's id existed already: the combined call never
        moves a branch onto an object it did not write, so an existing one is read and compared
        here first (the same commit from an earlier attempt, or a hash collision, refused).

        ``stored_ids`` takes the ids of ``objects`` once they are known to be stored: also when the
        swap is lost, since a lost swap leaves them stored (the Persist contract), so that the
        retry builds on them without sending them again. Sending them again is not free: each
        existing object takes a new ``referenced`` timestamp, an update by id, which costs a scan
        of the whole objects collection on FerretDB 1.x (docs/backends/mongodb.md) and, there,
        made every retry of a two-writer benchmark hold the write lock for hundreds of ms. After
        an unknown outcome nothing is recorded: the objects may not have been written."""

        def remember_stored() -> None:
            if stored_ids is not None:
                stored_ids.update(o.id for o in objects)

        def store_and_swap() -> Reference:
            try:
                outcome = self.persist.store_objs_and_update_reference([*objects, commit], ref, commit.id)
            except ObjTooLarge:
                stored = self.commits.store_commit(commit, objects)  # spills, then stores
                remember_stored()
            except RefConditionFailed:
                remember_stored()
                raise
            else:
                remember_stored()
                if outcome.moved is not None:
                    return outcome.moved
                stored = self.commits.judge_existing(commit)
            if stored.commit is None:
                raise RuntimeError(f"Hash collision detected for commit {commit.id}")
            return self.persist.update_reference_pointer(ref, commit.id)

        self._settle_move(ref, commit.id, store_and_swap)

    def _settle_move(self, ref: Reference, new_head: ObjId, swap: Callable[[], Reference]) -> None:
        """Run ``swap`` (a compare-and-swap of the branch from ``ref`` to ``new_head``) and settle
        its outcome: a lost race retries the whole attempt on the new head."""
        try:
            moved = swap()
        except RefConditionFailed:
            self.known_heads.lost_race(ref.name)
            raise RetryNeeded() from None
        except UnknownOperationResult:
            self.known_heads.forget(ref.name)
            # The write may have happened. If it did, our commit is in the branch's history, at
            # its head or (when others committed on top since) below it.
            now = self.persist.fetch_reference_for_update(ref.name)
            if now is None or not commit_in_history(self.commits, now.pointer, new_head):
                raise RetryNeeded() from None
        else:
            self.known_heads.remember(moved)

    def with_retries(self, attempt: Callable[[object], T]) -> T:
        """Run a branch-changing ``attempt`` (merge, transplant) in Nessie's bounded retry loop."""
        return with_retries(self.persist.config, attempt)
