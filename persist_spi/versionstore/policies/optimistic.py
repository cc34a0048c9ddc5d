"""Optimistic policies: every writer attempts on its own and retries a lost compare-and-swap.

``nessie`` is Nessie's bounded retry (a random, doubling sleep between attempts: the baseline);
``immediate`` retries at once, without sleeping (the worst case under contention: the writer whose
attempt is shortest keeps winning).
"""

from __future__ import annotations

from typing import Any

from persist_spi.errors import ObjNotFound
from persist_spi.logic.retry import DEFAULT_RETRY_CLOCK, RetryClock, RetryNeeded
from persist_spi.references import Reference
from persist_spi.versionstore.committing import CommitState
from persist_spi.versionstore.errors import ReferenceConflictError, ReferenceNotFoundError
from persist_spi.versionstore.policies.base import CommitPolicy, CommitRequest, Committer, with_retries
from persist_spi.versionstore.results import CommitResult


def attempt_once(store: Committer, request: CommitRequest, state: CommitState) -> CommitResult:
    """One optimistic attempt: read the branch, build the commit on its head, store it and move the
    branch by compare-and-swap in one call (RetryNeeded when another commit got there first).

    A commit's first attempt builds on the branch row this process last saw, when it has one,
    without reading it (:mod:`persist_spi.versionstore.known_heads`). If that row turns out stale,
    the attempt goes on at once with the row read from the database: a request is only ever
    judged (conflicts, expected hash, validation errors) and reported on a row that is current."""
    if not state.tried_known_head:
        state.tried_known_head = True
        known = store.known_branch(request.branch)
        if known is not None:
            result = _attempt_on_known_head(store, request, state, known)
            if result is not None:
                return result
    head = store.read_branch(request.branch)
    built = store.build_on(request, state, head, store=False)
    store.store_and_move_branch(head, built, state)
    return built.result


def _attempt_on_known_head(
    store: Committer, request: CommitRequest, state: CommitState, known: Reference
) -> CommitResult | None:
    """Build on ``known`` and move the branch from it; None when ``known`` proved stale (an error
    that a stale head can cause, or a lost compare-and-swap). A head commit that is gone means the
    repository was erased or rebuilt behind this process's back."""
    try:
        built = store.build_on(request, state, known, store=False)
    except (ReferenceConflictError, ReferenceNotFoundError, ValueError, ObjNotFound):
        return None
    try:
        store.store_and_move_branch(known, built, state)
    except RetryNeeded:
        return None
    return built.result


class NessiePolicy(CommitPolicy):
    """Nessie's bounded optimistic retry: 5 s budget, a sleep of 5-25 ms doubling to 250 ms."""

    NAME = "nessie"

    def __init__(self, clock: RetryClock[Any] = DEFAULT_RETRY_CLOCK) -> None:
        self.clock = clock

    def commit(self, store: Committer, request: CommitRequest) -> CommitResult:
        state = CommitState()
        return with_retries(store.persist.config, lambda _: attempt_once(store, request, state), self.clock)


def _no_sleep(_: float) -> None:
    return None


#: Retries without sleeping (the retry loop still keeps its time budget).
NO_SLEEP_CLOCK: RetryClock[Any] = RetryClock(sleep_millis=_no_sleep)


class ImmediatePolicy(NessiePolicy):
    """Retry a lost race at once, without sleeping; same budget as ``nessie``."""

    NAME = "immediate"

    def __init__(self) -> None:
        super().__init__(NO_SLEEP_CLOCK)
