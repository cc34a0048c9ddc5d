"""``group``: commits queued for one branch inside a process land together.

While one commit is being landed, the others that arrive for the same branch (through stores sharing
one Persist) queue up. The next of them to lead takes the queue (at most ``group-max-commits``) and
builds it as a chain: each request becomes its own commit, with its own id, message, operations and
content ids, on top of the previous one, exactly as if they had been committed one after the other.
One compare-and-swap moves the branch to the end of the chain; every caller then learns its own
commit id.

A request that fails (a conflict, an invalid operation) is left out of the chain and the rest go on.
Its error is delivered only once the chain has landed, so it always refers to a state that exists.
When the compare-and-swap loses (another process committed), the whole chain is rebuilt on the new
head with Nessie's bounded retries. Between processes, ``group`` races like ``nessie``.
"""

from __future__ import annotations

import copy
import dataclasses
import threading
from typing import Any

from persist_spi.errors import ObjTooLarge, UnknownOperationResult
from persist_spi.logic.retry import DEFAULT_RETRY_CLOCK, RetryClock, RetryNeeded
from persist_spi.objs import CommitObj, Obj
from persist_spi.persist import Persist
from persist_spi.references import Reference
from persist_spi.versionstore.committing import CommitState
from persist_spi.versionstore.errors import ReferenceConflictError
from persist_spi.versionstore.policies.base import (
    BuiltCommit,
    CommitPolicy,
    CommitRequest,
    Committer,
    PerKey,
    with_retries,
)
from persist_spi.versionstore.results import CommitResult


class _Queued:
    __slots__ = ("attempts", "done", "error", "request", "result", "state", "store")

    def __init__(self, store: Committer, request: CommitRequest) -> None:
        self.store = store
        self.request = request
        self.state = CommitState()
        self.done = False
        self.attempts = 0
        self.result: CommitResult | None = None
        self.error: BaseException | None = None

    def outcome(self) -> CommitResult:
        if self.error is not None:
            if isinstance(self.error, ReferenceConflictError):
                self.error.attempts = self.attempts
            raise self.error
        assert self.result is not None
        return dataclasses.replace(self.result, attempts=self.attempts)


class _BranchGroup:
    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.pending: list[_Queued] = []
        self.leading = False


class GroupPolicy(CommitPolicy):
    NAME = "group"

    def __init__(self, clock: RetryClock[Any] = DEFAULT_RETRY_CLOCK) -> None:
        self._clock = clock
        #: One queue per (Persist, branch).
        self._group = PerKey(_BranchGroup)

    def queued(self, persist: Persist, branch_full_name: str) -> int:
        """Commits waiting for a leader on that branch (for monitoring and tests)."""
        group = self._group((id(persist), branch_full_name))
        with group.cond:
            return len(group.pending)

    def commit(self, store: Committer, request: CommitRequest) -> CommitResult:
        group = self._group((id(store.persist), request.branch.full_name))
        item = _Queued(store, request)
        limit = store.persist.config.group_max_commits
        with group.cond:
            will_wait = group.leading or bool(group.pending)
        if will_wait:
            # The round trips each commit needs on its own (content ids, content values) happen
            # here, in the caller's thread while it waits anyway; the leader only chains.
            store.prepare_values(request, item.state)
        with group.cond:
            group.pending.append(item)
        while True:
            with group.cond:
                while not item.done and group.leading:
                    group.cond.wait()
                if item.done:
                    return item.outcome()
                group.leading = True
                batch, group.pending = group.pending[:limit], group.pending[limit:]
            try:
                self._land(store, batch)
            finally:
                with group.cond:
                    group.leading = False
                    group.cond.notify_all()

    def _land(self, store: Committer, batch: list[_Queued]) -> None:
        """Land ``batch`` with one compare-and-swap, retried as a whole; settle every request."""
        failures: dict[int, BaseException] = {}

        def build(head: Reference, write_each: bool) -> list[tuple[_Queued, BuiltCommit]]:
            failures.clear()
            tip: CommitObj | None = None
            chain: list[tuple[_Queued, BuiltCommit]] = []
            for i, item in enumerate(batch):
                try:
                    built = item.store.build_on(item.request, item.state, head, parent=tip, store=write_each)
                except (RetryNeeded, UnknownOperationResult):
                    raise
                except Exception as e:  # this request's own failure: the others go on
                    failures[i] = e
                    continue
                tip = built.commit
                chain.append((item, built))
            return chain

        def attempt(_: object) -> None:
            for item in batch:
                item.attempts += 1
            head = store.read_branch(batch[0].request.branch)
            chain = build(head, write_each=False)
            if chain and not _store_chain(store.persist, chain):
                chain = build(head, write_each=True)  # one by one, spilling indexes as needed
            if chain:
                store.move_branch(head, chain[-1][1].commit.id)
            for item, built in chain:
                item.result = built.result

        try:
            with_retries(store.persist.config, attempt, self._clock)
        except BaseException as e:  # the chain never landed: every request fails the same way
            for item in batch:
                item.error = _own_copy(e)
        else:
            for i, error in failures.items():
                batch[i].error = error
        for item in batch:
            item.done = True


def _own_copy(error: BaseException) -> BaseException:
    """Each caller raises its own exception object (they are raised in different threads)."""
    try:
        return copy.copy(error)
    except Exception:
        return error


def _store_chain(persist: Persist, chain: list[tuple[_Queued, BuiltCommit]]) -> bool:
    """Store a chain built without writing, in one call. False when a commit's index must be
    spilled first (checked before anything is written) or a commit id already exists: the caller
    then stores one by one (storing content-addressed objects again is harmless)."""
    objects: list[Obj] = [o for _, built in chain for o in built.objects]
    commits: list[Obj] = [built.commit for _, built in chain]
    try:
        stored = persist.store_objs([*objects, *commits])
    except ObjTooLarge:
        return False
    if not all(stored[len(objects) :]):
        return False
    for item, built in chain:
        item.state.stored.update(o.id for o in built.objects)
    return True
