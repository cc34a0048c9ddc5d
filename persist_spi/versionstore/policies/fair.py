"""``fair``: the writer that has retried most goes first.

Within a process, the writers committing to one branch register how many races each has lost. A
writer may start an attempt only while no other writer on that branch has lost more; the others wait
(at most until their own retry budget runs out, then they attempt anyway). A writer that lost and
now leads skips the backoff sleep, since the writers it races in this process are waiting for it.
Short commits can no longer starve long ones: once the long commit has lost, it runs alone.

Apache Polaris's "fair retries" is the prior art: there, writers that retried less sleep longer.
Here they wait for a signal instead of sleeping, which costs no throughput when the leader is quick.
Across processes nothing is shared, so between processes ``fair`` behaves like ``nessie``.
"""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any

from persist_spi.logic.retry import DEFAULT_RETRY_CLOCK, RetryClock
from persist_spi.versionstore.committing import CommitState
from persist_spi.versionstore.policies.base import (
    CommitPolicy,
    CommitRequest,
    Committer,
    PerKey,
    with_retries,
)
from persist_spi.versionstore.policies.optimistic import attempt_once
from persist_spi.versionstore.results import CommitResult


class FairnessGate:
    """Lost races per writer of one branch, and the rule who may attempt."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._lost: dict[int, int] = {}

    def enter(self, writer: int) -> None:
        with self._cond:
            self._lost[writer] = 0

    def leave(self, writer: int) -> None:
        with self._cond:
            del self._lost[writer]
            self._cond.notify_all()

    def lost(self, writer: int) -> bool:
        """Count a lost race; True when the writer now leads (others here will wait for it)."""
        with self._cond:
            mine = self._lost[writer] = self._lost[writer] + 1
            self._cond.notify_all()
            others = [n for w, n in self._lost.items() if w != writer]
            return bool(others) and mine > max(others)

    def wait_turn(self, writer: int, deadline: float) -> None:
        """Block while another writer has lost more races, until ``deadline`` (monotonic s)."""
        with self._cond:
            while True:
                mine = self._lost[writer]
                if all(n <= mine for w, n in self._lost.items() if w != writer):
                    return
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._cond.wait(left)


class FairPolicy(CommitPolicy):
    NAME = "fair"

    def __init__(self, clock: RetryClock[Any] = DEFAULT_RETRY_CLOCK) -> None:
        self._clock = clock
        #: One gate per branch.
        self.gate = PerKey(FairnessGate)
        self._writers = itertools.count()

    def commit(self, store: Committer, request: CommitRequest) -> CommitResult:
        config = store.persist.config
        gate = self.gate(request.branch.full_name)
        writer = next(self._writers)
        deadline = time.monotonic() + config.commit_timeout_millis / 1000
        backoff = self._clock.sleep_millis

        def after_loss(millis: float) -> None:
            # The retry loop calls its sleeper once per lost race: count it there.
            if not gate.lost(writer):
                backoff(millis)

        clock = RetryClock[Any](self._clock.now_nanos, after_loss, self._clock.rng)
        state = CommitState()
        gate.enter(writer)
        try:
            return with_retries(
                config,
                lambda _: attempt_once(store, request, state),
                clock,
                before_attempt=lambda _: gate.wait_turn(writer, deadline),
            )
        finally:
            gate.leave(writer)
