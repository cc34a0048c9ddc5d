"""Optimistic policies: every writer attempts on its own and retries a lost compare-and-swap.

``nessie`` is Nessie's bounded retry (a random, doubling sleep between attempts: the baseline);
``immediate`` retries at once, without sleeping (the worst case under contention: the writer whose
attempt is shortest keeps winning).
"""

from __future__ import annotations

from typing import Any

from persist_spi.logic.retry import DEFAULT_RETRY_CLOCK, RetryClock
from persist_spi.versionstore.committing import CommitState
from persist_spi.versionstore.policies.base import CommitPolicy, CommitRequest, Committer, with_retries
from persist_spi.versionstore.results import CommitResult


def attempt_once(store: Committer, request: CommitRequest, state: CommitState) -> CommitResult:
    """One optimistic attempt: read the branch, build and store the commit on its head, move the
    branch by compare-and-swap (RetryNeeded when another commit got there first)."""
    head = store.read_branch(request.branch)
    built = store.build_on(request, state, head)
    store.move_branch(head, built.commit.id)
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
