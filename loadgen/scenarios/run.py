"""What every scenario user shares in one locust process: the target, the run's event file, the
scenario's options, and :func:`measure`, which reports one action both to locust (its
``events.request``, so the console, web UI, ``--json-file`` and the master see it) and to the run
directory (one event per action, under Nessie's perftest action names).

Conflicts count as failures, as in Nessie's Gatling simulations (KO); the process's exit code
stays 0 unless another error happened (``errors``).
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from loadgen.contentgen.recording import Measured, classify
from loadgen.runs.events import CONFLICT, OK, Event, EventWriter
from loadgen.targets.target import Target
from persist_spi.versionstore.api import VersionStoreApi


@dataclass
class ScenarioRun:
    target: Target
    options: Any
    events: EventWriter | None
    outcomes: Counter[tuple[str, str]] = field(default_factory=Counter)
    #: Users that ran their count.
    finished: int = 0
    _user_ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def api(self) -> VersionStoreApi:
        return self.target.api

    def next_user_id(self) -> int:
        return next(self._user_ids)

    @property
    def errors(self) -> int:
        return sum(n for (_, outcome), n in self.outcomes.items() if outcome not in (OK, CONFLICT))


#: The run of this locust process (set by the locustfile when locust starts).
CURRENT: list[ScenarioRun] = []


def current() -> ScenarioRun:
    if not CURRENT:
        raise RuntimeError("no scenario run: start scenarios with 'lochkit scenario' or lochkit's locustfile")
    return CURRENT[0]


@contextlib.contextmanager
def measure(
    user: Any, action: str, ref: str | None = None, puts: int = 0, swallow_conflict: bool = False
) -> Iterator[Measured]:
    """Time the block as one ``action``. A failure is reported and re-raised, except a conflict
    when ``swallow_conflict`` (the caller then sees ``measured.commit_hash is None``)."""
    run = current()
    measured = Measured(puts=puts)
    wall = time.time_ns()
    start = time.perf_counter_ns()
    outcome, kind, error = OK, None, None
    try:
        yield measured
    except Exception as e:
        outcome, kind = classify(e)
        measured.attempts = getattr(e, "attempts", measured.attempts)
        error = e
    duration = time.perf_counter_ns() - start
    run.outcomes[(action, outcome)] += 1
    user.environment.events.request.fire(
        request_type="nessie",
        name=action,
        response_time=duration / 1e6,
        response_length=0,
        exception=error,
        context={"worker": getattr(user, "worker_name", "")},
    )
    if run.events is not None:
        run.events.add(
            Event(
                wall,
                duration,
                getattr(user, "worker_name", "user"),
                action,
                outcome,
                measured.puts,
                measured.attempts,
                kind,
                ref,
                measured.commit_hash,
            )
        )
    if error is not None and not (swallow_conflict and outcome == CONFLICT):
        raise error
