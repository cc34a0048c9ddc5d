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

from hdrh.histogram import HdrHistogram

from loadgen.contentgen.recording import Measured, classify
from loadgen.latency import LATENCY_MAX_US, latency_histogram, max_ms, ms
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
    #: Latency of successful actions, µs, per action (a worker's locust statistics are sent to
    #: the master and cleared, so each process keeps its own).
    latency: dict[str, HdrHistogram] = field(default_factory=dict)

    def totals(self, commit_action: str, elapsed_s: float) -> dict[str, Any]:
        """``run.json`` totals of this process (docs/run-format.md)."""
        commits = self.outcomes[(commit_action, OK)]
        by_action = {a: latency_summary(h) for a, h in sorted(self.latency.items())}
        return {
            "elapsed_s": round(elapsed_s, 3),
            "commits": commits,
            "commits_per_s": round(commits / elapsed_s, 1) if elapsed_s > 0 else 0.0,
            "conflicts": sum(n for (_, outcome), n in self.outcomes.items() if outcome == CONFLICT),
            "errors": self.errors,
            "calls": sum(self.outcomes.values()),
            "commit_latency": by_action.get(commit_action, latency_summary(None)),
            "latency_by_action": by_action,
        }

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


#: How long a user waits for its process to open the target (a worker may be told to start users
#: while it is still connecting).
READY_TIMEOUT_S = 300.0


def current() -> ScenarioRun:
    """The run of this process, once it is open."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not CURRENT:
        if time.monotonic() > deadline:
            raise RuntimeError("no scenario run: start it with 'lochkit scenario' or lochkit's locustfile")
        time.sleep(0.05)  # cooperative under locust's gevent
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
    if outcome == OK:
        histogram = run.latency.get(action)
        if histogram is None:
            histogram = run.latency[action] = latency_histogram()
        histogram.record_value(min(max(duration // 1000, 1), LATENCY_MAX_US))
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


def latency_summary(histogram: HdrHistogram | None) -> dict[str, float]:
    if histogram is None:
        return {"p50_ms": 0.0, "p99_ms": 0.0, "max_ms": 0.0}
    return {"p50_ms": ms(histogram, 50), "p99_ms": ms(histogram, 99), "max_ms": max_ms(histogram)}
