"""Finding the merge base (respecting merge parents) or the common ancestor (first parents only)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from persist_spi.errors import LochkitError
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.objs import CommitObj

_FROM_SOURCE = 1
_FROM_TARGET = 2
_BOTH = _FROM_SOURCE | _FROM_TARGET
_CANDIDATE = 4


class NoCommonAncestor(LochkitError, LookupError):
    pass


class _SeqQueue:
    """Max-heap on ``seq`` that sifts exactly like ``java.util.PriorityQueue`` with Nessie's
    comparator: commits with equal ``seq`` are ordered by the order they were queued in, never by
    their ids. With a criss-cross history (two equally good merge bases) the answer is therefore
    deterministic, and the one Nessie gives, instead of depending on random-looking commit ids."""

    def __init__(self) -> None:
        self.items: list[_Node] = []

    def push(self, node: _Node) -> None:
        items = self.items
        items.append(node)
        k = len(items) - 1
        while k > 0:
            parent = (k - 1) >> 1
            if node.seq <= items[parent].seq:
                break
            items[k] = items[parent]
            k = parent
        items[k] = node

    def pop(self) -> _Node:
        items = self.items
        result = items[0]
        last = items.pop()
        size = len(items)
        if size:
            k = 0
            while k < size >> 1:
                child = 2 * k + 1
                if child + 1 < size and items[child].seq < items[child + 1].seq:
                    child += 1
                if last.seq >= items[child].seq:
                    break
                items[k] = items[child]
                k = child
            items[k] = last
        return result


@dataclass(frozen=True)
class _Node:
    id: ObjId
    seq: int
    parents: tuple[ObjId, ...]


def find_merge_base(
    load: Callable[[ObjId], CommitObj | None],
    target: ObjId,
    source: ObjId,
    respect_merge_parents: bool = True,
) -> ObjId:
    """The newest commit reachable from both ``target`` and ``source``; the empty commit when
    either is the empty commit.

    Walks both histories newest-first (by ``seq``), flagging where each commit was reached from;
    the first commit reached from both, and not below another such commit, is the answer.
    ``load`` returns None for a missing commit.
    """
    cache: dict[ObjId, _Node] = {}

    def node(commit_id: ObjId) -> _Node:
        found = cache.get(commit_id)
        if found is None:
            commit = load(commit_id)
            if commit is None:
                raise NoCommonAncestor(f"Commit '{commit_id}' not found")
            parents = (
                (*commit.secondary_parents, commit.direct_parent)
                if respect_merge_parents
                else (commit.direct_parent,)
            )
            found = _Node(commit.id, commit.seq, tuple(p for p in parents if p != EMPTY_OBJ_ID))
            cache[commit_id] = found
        return found

    if EMPTY_OBJ_ID in (target, source):
        # Every history starts at the empty commit (the parent of every first commit), so it is
        # the common ancestor of any commit and itself, as reference metadata reports it: merging
        # from it brings nothing, merging into it brings everything. Nessie answers "No common
        # ancestor" for a target there, and for a source there takes the target's head, so the
        # merge deletes every key of the target.
        for commit_id in (target, source):
            if commit_id != EMPTY_OBJ_ID:
                node(commit_id)  # "not found" for a commit that does not exist
        return EMPTY_OBJ_ID
    if source == target:
        node(target)
        return target

    flags: dict[ObjId, int] = {}
    queue = _SeqQueue()

    def push(commit_id: ObjId, flag: int) -> None:
        current = flags.get(commit_id, 0)
        if current | flag != current:
            flags[commit_id] = current | flag
            queue.push(node(commit_id))

    push(source, _FROM_SOURCE)
    push(target, _FROM_TARGET)
    results: list[ObjId] = []
    while any(not flags[entry.id] & _CANDIDATE for entry in queue.items):
        commit_id = queue.pop().id
        commit_flags = flags[commit_id]
        propagate = commit_flags & (_BOTH | _CANDIDATE)
        if commit_flags & _BOTH == _BOTH and not commit_flags & _CANDIDATE:
            if commit_id not in results:
                results.append(commit_id)
            flags[commit_id] = commit_flags | _CANDIDATE
            propagate |= _CANDIDATE
        for parent in node(commit_id).parents:
            push(parent, propagate)
    if not results:
        raise NoCommonAncestor(f"No common ancestor in parents of {target} and {source}")
    return results[0]
