"""``coordinated``: one commit at a time per branch.

Inside a process, the commits to one branch queue in arrival order (:class:`BranchQueue`) and the
head of the queue commits alone, so nothing in the process races it. Across processes, the head of
each process's queue also holds the branch's commit-target lease
(:mod:`persist_spi.logic.commit_lease`), a ticket lock kept in the database, so processes take turns
in ticket order too. The lease is an optimisation of who attempts when, never a condition for
correctness: the commit still moves the branch by compare-and-swap, and a lost race is retried with
Nessie's bounded retries, as under ``nessie``.

This is the design's "coordinated commit targets" within a process, plus the "commit-target lease"
the design names as the mechanism that would end starvation between processes. Each commit pays
for it: two extra compare-and-swaps on the lease reference per commit when several processes
alternate, and a read per wait.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from persist_spi.logic.commit_lease import CommitTargetLease, LeaseHold
from persist_spi.logic.retry import DEFAULT_RETRY_CLOCK, RetryClock
from persist_spi.persist import Persist
from persist_spi.references import Reference
from persist_spi.versionstore.committing import CommitState
from persist_spi.versionstore.policies.base import (
    CommitPolicy,
    CommitRequest,
    Committer,
    PerKey,
    PerPersist,
    with_retries,
)
from persist_spi.versionstore.policies.optimistic import attempt_once
from persist_spi.versionstore.refs import NamedRef
from persist_spi.versionstore.results import CommitResult

T = TypeVar("T")


class BranchQueue:
    """A first-come, first-served lock (a ticket lock): unlike ``threading.Lock``, no thread can
    overtake one that waits longer."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._next = 0
        self._serving = 0

    @contextlib.contextmanager
    def turn(self) -> Iterator[None]:
        with self._cond:
            mine = self._next
            self._next += 1
            while self._serving != mine:
                self._cond.wait()
        try:
            yield
        finally:
            with self._cond:
                self._serving += 1
                self._cond.notify_all()

    @property
    def waiting(self) -> int:
        """Callers queued behind the current holder."""
        with self._cond:
            return self._next - self._serving - 1


def branch_queues() -> PerKey[BranchQueue]:
    """One :class:`BranchQueue` per key, created on first use."""
    return PerKey(BranchQueue)


class CoordinatedPolicy(CommitPolicy):
    NAME = "coordinated"

    def __init__(self, clock: RetryClock[Any] = DEFAULT_RETRY_CLOCK, *, lease: bool = True) -> None:
        """``lease=False`` coordinates within the process only (the store config's
        ``commit-lease-millis = 0`` does the same)."""
        self._clock = clock
        self._use_lease = lease
        self._queues = branch_queues()
        self._leases: PerPersist[CommitTargetLease] = PerPersist(
            lambda persist: CommitTargetLease(persist, persist.config.commit_lease_millis)
        )
        #: Lease tickets taken for the next writer of a branch in this process, by queue key.
        self._tickets: dict[Any, tuple[int, Reference]] = {}
        self._lock = threading.Lock()

    def commit(self, store: Committer, request: CommitRequest) -> CommitResult:
        state = CommitState()
        return self._coordinated(
            store,
            request.branch,
            lambda: with_retries(
                store.persist.config, lambda _: attempt_once(store, request, state), self._clock
            ),
        )

    def _coordinated(self, store: Committer, branch: NamedRef, body: Callable[[], T]) -> T:
        persist = store.persist
        key = (id(persist), branch.full_name)
        queue = self._queues(key)
        with queue.turn():
            lease = self._lease(persist)
            if lease is None:
                return body()
            deadline = time.monotonic() + persist.config.commit_timeout_millis / 1000
            with self._lock:
                taken = self._tickets.pop(key, None)
            hold = (
                lease.wait(branch.full_name, *taken, deadline)
                if taken is not None
                else lease.acquire(branch.full_name, deadline)
            )
            started = time.monotonic()
            try:
                return body()
            finally:
                if hold is not None:
                    lease.note_hold(time.monotonic() - started)
                    self._release(lease, hold, key, queue.waiting > 0)

    def _release(self, lease: CommitTargetLease, hold: LeaseHold, key: Any, successor: bool) -> None:
        # A waiting writer of this process gets its ticket in the same compare-and-swap that
        # releases ours: it joins the end of the queue, behind other processes' tickets.
        try:
            taken = lease.release(hold, take_next=successor)
        except Exception:  # the commit's outcome stands; a lease left held expires by itself
            return
        if taken is not None:
            with self._lock:
                self._tickets[key] = taken

    def _lease(self, persist: Persist) -> CommitTargetLease | None:
        if not self._use_lease or persist.config.commit_lease_millis <= 0:
            return None
        return self._leases(persist)
