"""Deterministic crash points: SIGKILL this process at the N-th Persist call of an operation.

Counting starts when the operation is armed, so "step 3 of a commit" means the same database
round trip every time (the commit logic is deterministic given the same repository state). A kill
*before* a step means the database never saw it; *after* means it was applied but nobody heard
the answer. SIGKILL cannot be caught: no ``finally``, no ``atexit``, no driver clean-up runs, as
when a machine loses power under a process (the database's own durability aside).
"""

from __future__ import annotations

import enum
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from persist_spi.persist import Persist
from reliability.intercept import InterceptingPersist

T = TypeVar("T")


class When(enum.Enum):
    BEFORE = "before"
    AFTER = "after"


@dataclass(frozen=True)
class CrashPoint:
    """Kill at the ``step``-th Persist call (1-based) after arming, ``when`` relative to it."""

    step: int
    when: When

    def __str__(self) -> str:
        return f"{self.when.value} step {self.step}"


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class CrashingPersist(InterceptingPersist):
    """Counts Persist calls since :meth:`arm` and dies at the crash point (if one is set)."""

    def __init__(
        self,
        delegate: Persist,
        crash_point: CrashPoint | None = None,
        kill: Callable[[], None] = die,
        on_step: Callable[[str], None] | None = None,
    ):
        super().__init__(delegate)
        self.crash_point = crash_point
        self.kill = kill
        #: Told each step's name before it runs (so it is known even if the process dies in it).
        self.on_step = on_step
        self.armed = False
        #: The Persist methods called since arming, in order: the operation's steps.
        self.steps: list[str] = []

    def arm(self) -> None:
        self.armed = True
        self.steps = []

    def disarm(self) -> None:
        self.armed = False

    def intercept(self, method: str, args: tuple[Any, ...], call: Callable[[], T]) -> T:
        if not self.armed:
            return call()
        self.steps.append(method)
        if self.on_step is not None:
            self.on_step(method)
        point = self.crash_point
        hit = point is not None and point.step == len(self.steps)
        if hit and point is not None and point.when is When.BEFORE:
            self.kill()
        result = call()
        if hit:
            self.kill()
        return result
