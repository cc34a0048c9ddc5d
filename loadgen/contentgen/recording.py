"""Timing every API call of a load command into the run's events and its summary statistics."""

from __future__ import annotations

import contextlib
import time
from array import array
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from loadgen.runs.events import CONFLICT, ERROR, OK, RETRY_TIMEOUT, Event, EventWriter
from persist_spi.versionstore.errors import (
    MergeConflictError,
    ReferenceAlreadyExistsError,
    ReferenceConflictError,
    ReferenceNotFoundError,
    ReferenceRetryFailureError,
)
from persist_spi.versionstore.nessie_json import NessieServerError


def classify(error: BaseException) -> tuple[str, str]:
    """(outcome, error_kind) for a failed operation."""
    if isinstance(error, ReferenceRetryFailureError):
        return RETRY_TIMEOUT, "ReferenceRetryFailure"
    if isinstance(error, MergeConflictError):  # before its base class, ReferenceConflictError
        return CONFLICT, "MERGE_CONFLICT"
    if isinstance(error, ReferenceConflictError):
        kinds = sorted({c.conflict_type.name for c in error.conflicts}) or ["REFERENCE_CONFLICT"]
        return CONFLICT, ",".join(kinds)
    if isinstance(error, ReferenceNotFoundError):
        return ERROR, "ReferenceNotFound"
    if isinstance(error, ReferenceAlreadyExistsError):
        return ERROR, "ReferenceAlreadyExists"
    if isinstance(error, NessieServerError):
        # A server's answer the model has no exception for: its status says whose fault it was
        # (a 5xx must never happen under load; a 401 or 403 is the client's).
        return ERROR, f"HTTP {error.status}"
    if isinstance(error, ConnectionError):
        # "No answer" has many causes (refused, reset, closed before answering, timed out); the
        # innermost error names the one, which a load run needs to tell a server fault from its own.
        root = _innermost(error)
        if root is not error:
            return ERROR, f"{type(error).__name__} ({type(root).__name__})"
    return ERROR, type(error).__name__


def _innermost(error: BaseException) -> BaseException:
    """The error at the bottom of ``error``'s chain: its cause or context (also when raised ``from
    None``), an HTTP library's ``reason``, or an error among its arguments."""
    seen = {id(error)}
    while True:
        reason = getattr(error, "reason", None)
        nested = (
            error.__cause__
            or error.__context__
            or (reason if isinstance(reason, BaseException) else None)
            or next((a for a in error.args if isinstance(a, BaseException)), None)
        )
        if nested is None or id(nested) in seen:
            return error
        seen.add(id(nested))
        error = nested


@dataclass
class Measured:
    """Filled in by the code inside :meth:`Recorder.measure`."""

    puts: int = 0
    attempts: int = 1
    commit_hash: str | None = None


@dataclass
class Recorder:
    """Writes one event per measured call and keeps, per action, the durations of successful calls
    (8 bytes each) and the outcome counts, for the summary."""

    events: EventWriter | None
    worker: str = "main"
    durations: dict[str, array[int]] = field(default_factory=dict)
    outcomes: Counter[tuple[str, str]] = field(default_factory=Counter)
    op_nanos: int = 0

    @contextlib.contextmanager
    def measure(self, action: str, ref: str | None = None, puts: int = 0) -> Iterator[Measured]:
        measured = Measured(puts=puts)
        start_wall = time.time_ns()
        start = time.perf_counter_ns()
        outcome, kind = OK, None
        try:
            yield measured
        except BaseException as e:
            # Ctrl-C included: a call that did not finish is never counted as a success.
            outcome, kind = classify(e)
            measured.attempts = getattr(e, "attempts", measured.attempts)
            raise
        finally:
            duration = time.perf_counter_ns() - start
            self.op_nanos += duration
            self.outcomes[(action, outcome)] += 1
            if outcome == OK:
                self.durations.setdefault(action, array("q")).append(duration)
            if self.events is not None:
                self.events.add(
                    Event(
                        start_wall,
                        duration,
                        self.worker,
                        action,
                        outcome,
                        measured.puts,
                        measured.attempts,
                        kind,
                        ref,
                        measured.commit_hash,
                    )
                )

    def count(self, action: str, outcome: str) -> int:
        return self.outcomes[(action, outcome)]

    def calls(self) -> int:
        return sum(self.outcomes.values())
