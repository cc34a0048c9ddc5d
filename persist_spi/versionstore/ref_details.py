"""What a reference is beyond its head: how it relates to a base branch (commits ahead and behind,
common ancestor, the head's commit meta), and the recorded history of its head.

The history comes from the storage model: every compare-and-swap of a reference keeps its former
head, with a time, in the reference row (``previous_pointers``; how many and for how long is
``StoreConfig.ref_previous_head_count`` / ``ref_previous_head_time_span_seconds``). Each entry is
checked the way Nessie checks it after a replica failover: is the commit there, are its index
objects there, are the content values its index names there.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Final

from persist_spi.errors import ObjNotFound
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.logic.commit_logic import CommitLogic
from persist_spi.logic.merge_base import NoCommonAncestor, find_merge_base
from persist_spi.objs import CommitObj, Obj
from persist_spi.persist import Persist
from persist_spi.references import Reference
from persist_spi.versionstore.meta import commit_meta_of
from persist_spi.versionstore.refs import NamedRef, RefKind
from persist_spi.versionstore.results import (
    CommitConsistency,
    ReferenceHistory,
    ReferenceHistoryEntry,
    ReferenceMetadata,
)

#: Values fetched per round trip while checking a commit's contents.
_BATCH: Final = 50
#: At most this many commits below the head are checked for the log's consistency.
MAX_LOG_CHECK: Final = 1000


def reference_metadata(
    logic: CommitLogic, ref: NamedRef, head: ObjId, base: NamedRef | None, base_head: ObjId | None
) -> ReferenceMetadata:
    """Metadata of ``ref`` at ``head``. Ahead/behind and the common ancestor are computed for a
    branch other than ``base`` (Nessie computes them for branches only)."""
    commit = logic.fetch_commit(head) if head != EMPTY_OBJ_ID else None
    if commit is None:
        return ReferenceMetadata()  # at the empty commit there is nothing to tell (Nessie: none)
    meta = commit_meta_of(commit)
    total = commit.seq
    if ref.kind is not RefKind.BRANCH or base is None or ref == base or base_head is None:
        return ReferenceMetadata(meta, total)
    base_commit = logic.fetch_commit(base_head) if base_head != EMPTY_OBJ_ID else None
    base_seq = base_commit.seq if base_commit is not None else 0
    load = logic.fetch_commit_if_exists
    try:
        ancestor = find_merge_base(load, base_head, head)
    except NoCommonAncestor:
        return ReferenceMetadata(meta, total, total, base_seq, EMPTY_OBJ_ID)
    # Counted, not derived from sequence numbers as Nessie does: after a merge the common ancestor
    # is off the first-parent chain, and sequence differences go wrong, even negative.
    ahead = _first_parent_commits_not_in(load, head, base_head, ancestor)
    behind = _first_parent_commits_not_in(load, base_head, head, ancestor)
    return ReferenceMetadata(meta, total, ahead, behind, ancestor)


def _first_parent_commits_not_in(
    load: Callable[[ObjId], CommitObj | None], head: ObjId, other: ObjId, ancestor: ObjId
) -> int:
    """Commits on ``head``'s first-parent chain down to the first one ``other`` also reaches."""
    # Usually the common ancestor is on the chain: count down to it.
    limit = load(ancestor)
    floor = limit.seq if limit is not None else 0
    count, current = 0, head
    while current != ancestor:
        commit = load(current)
        if commit is None or commit.seq <= floor:
            break
        count += 1
        current = commit.direct_parent
    else:
        return count
    # It is not (it was reached through a merge parent): find where the chain enters what
    # ``other`` reaches, one ancestry test per commit.
    count, current = 0, head
    while current != EMPTY_OBJ_ID:
        commit = load(current)
        if commit is None or _is_ancestor(load, current, other):
            break
        count += 1
        current = commit.direct_parent
    return count


def _is_ancestor(load: Callable[[ObjId], CommitObj | None], candidate: ObjId, of: ObjId) -> bool:
    try:
        return find_merge_base(load, of, candidate) == candidate
    except NoCommonAncestor:
        return False


def reference_history(
    persist: Persist, ref: NamedRef, row: Reference, head_commits_to_scan: int | None = None
) -> ReferenceHistory:
    """The head and recorded former heads of ``ref`` (from its row), each checked; with
    ``head_commits_to_scan``, also up to that many commits below the head (at most
    :data:`MAX_LOG_CHECK`, and only those made within the history's time span)."""
    logic = CommitLogic(persist)
    current = check_commit(persist, logic, row.pointer)
    previous = tuple(check_commit(persist, logic, p.pointer) for p in row.previous_pointers)
    log = CommitConsistency.NOT_CHECKED
    if head_commits_to_scan is not None and head_commits_to_scan > 0:
        log = _check_log(persist, logic, row.pointer, current.consistency, head_commits_to_scan)
    return ReferenceHistory(ref, current, previous, log)


def check_commit(persist: Persist, logic: CommitLogic, commit_id: ObjId) -> ReferenceHistoryEntry:
    """Is the commit there, with its index objects and every content value its index names?"""
    if commit_id == EMPTY_OBJ_ID:
        return ReferenceHistoryEntry(commit_id, CommitConsistency.COMMIT_CONSISTENT)
    commit = logic.fetch_commit_if_exists(commit_id)
    if commit is None:
        return ReferenceHistoryEntry(commit_id, CommitConsistency.COMMIT_INCONSISTENT)
    meta = commit_meta_of(commit)
    index_ids: list[ObjId | None] = [commit.reference_index]
    index_ids += [stripe.segment for stripe in commit.reference_index_stripes]
    if not _all_present(persist, index_ids):
        return ReferenceHistoryEntry(commit_id, CommitConsistency.COMMIT_INCONSISTENT, meta)
    try:
        index = logic.indexes.build_complete_index(commit)
        values = [element.op.value for element in index if element.op.exists]
    except ObjNotFound:
        return ReferenceHistoryEntry(commit_id, CommitConsistency.COMMIT_INCONSISTENT, meta)
    for start in range(0, len(values), _BATCH):
        if not _all_present(persist, values[start : start + _BATCH]):
            return ReferenceHistoryEntry(commit_id, CommitConsistency.COMMIT_CONTENT_INCONSISTENT, meta)
    return ReferenceHistoryEntry(commit_id, CommitConsistency.COMMIT_CONSISTENT, meta)


def _all_present(persist: Persist, ids: Sequence[ObjId | None]) -> bool:
    wanted = [i for i in ids if i is not None]
    if not wanted:
        return True
    found: list[Obj | None] = persist.fetch_objs_if_exist(wanted)
    return all(o is not None for o in found)


_ORDER: Final = [
    CommitConsistency.NOT_CHECKED,
    CommitConsistency.COMMIT_CONSISTENT,
    CommitConsistency.COMMIT_CONTENT_INCONSISTENT,
    CommitConsistency.COMMIT_INCONSISTENT,
]


def _check_log(
    persist: Persist, logic: CommitLogic, head: ObjId, head_state: CommitConsistency, scan: int
) -> CommitConsistency:
    """The worst state among the head and the commits (and their merge parents) below it."""
    if head_state is CommitConsistency.COMMIT_INCONSISTENT or head == EMPTY_OBJ_ID:
        return head_state
    commit = logic.fetch_commit_if_exists(head)
    if commit is None:
        return CommitConsistency.COMMIT_INCONSISTENT
    span_micros = persist.config.ref_previous_head_time_span_seconds * 1_000_000
    now_micros = time.time_ns() // 1000
    worst: CommitConsistency = head_state
    current = commit.direct_parent
    for _ in range(min(scan, MAX_LOG_CHECK)):
        if current == EMPTY_OBJ_ID:
            break
        parent = logic.fetch_commit_if_exists(current)
        if parent is None:
            return CommitConsistency.COMMIT_INCONSISTENT
        if now_micros - parent.created > span_micros:
            break  # older than the window in which a replica can have lost writes
        for each in (current, *parent.secondary_parents):
            state = check_commit(persist, logic, each).consistency
            if _ORDER.index(state) > _ORDER.index(worst):
                worst = state
        if worst is CommitConsistency.COMMIT_INCONSISTENT:
            return worst
        current = parent.direct_parent
    return worst


__all__ = ["MAX_LOG_CHECK", "check_commit", "reference_history", "reference_metadata"]
