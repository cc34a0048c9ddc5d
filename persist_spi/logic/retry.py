"""The bounded retry loop around compare-and-swap commits.

An attempt raises :class:`RetryNeeded` when it lost a compare-and-swap (and may pass state to the
next attempt, e.g. objects already stored or content ids already claimed); an
:class:`~persist_spi.errors.UnknownOperationResult` is retried too. Everything else propagates.
The loop gives up with :class:`~persist_spi.errors.RetryTimeout` after ``commit_timeout_millis`` or
``commit_retries`` retries. Between attempts it sleeps a random time in a window that starts at
``[retry_initial_sleep_millis_lower, _upper)`` and doubles up to ``retry_max_sleep_millis``; the
time the failed attempt itself took is subtracted (Nessie adds it, by a sign slip).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from persist_spi.config import StoreConfig
from persist_spi.errors import RetryTimeout, UnknownOperationResult

R = TypeVar("R")
S = TypeVar("S")


class RetryNeeded(Exception):
    def __init__(self, state: Any = None) -> None:
        super().__init__("retry")
        self.state = state


@dataclass
class RetryClock(Generic[S]):
    """Time source and sleeper, replaceable in tests (nanoseconds, milliseconds)."""

    now_nanos: Callable[[], int] = time.monotonic_ns
    sleep_millis: Callable[[float], None] = lambda ms: time.sleep(ms / 1000)
    rng: random.Random = random.Random()  # noqa: RUF009 (shared on purpose: jitter only)


DEFAULT_RETRY_CLOCK: RetryClock[Any] = RetryClock()


def commit_retry(
    config: StoreConfig,
    attempt: Callable[[Any], R],
    clock: RetryClock[Any] = DEFAULT_RETRY_CLOCK,
    on_retry: Callable[[int, BaseException], None] | None = None,
    on_attempt: Callable[[int], None] | None = None,
) -> R:
    """Run ``attempt(state)`` until it returns; ``state`` is None first, then whatever the last
    :class:`RetryNeeded` carried. ``on_attempt`` hears how long each attempt that returned or
    asked for a retry took (ns), in order."""
    start = clock.now_nanos()
    timeout_nanos = config.commit_timeout_millis * 1_000_000
    lower = float(config.retry_initial_sleep_millis_lower)
    upper = float(config.retry_initial_sleep_millis_upper)
    max_sleep = float(config.retry_max_sleep_millis)
    retries = 0
    state: Any = None
    while True:
        attempt_start = clock.now_nanos()
        try:
            result = attempt(state)
        except RetryNeeded as e:
            if e.state is not None:
                state = e.state
            cause: BaseException = e
        except UnknownOperationResult as e:
            cause = e
        else:
            if on_attempt is not None:
                on_attempt(clock.now_nanos() - attempt_start)
            return result
        now = clock.now_nanos()
        if on_attempt is not None:
            on_attempt(now - attempt_start)
        elapsed = now - start
        if retries >= config.commit_retries or elapsed > timeout_nanos:
            raise RetryTimeout(retries, elapsed) from cause
        retries += 1
        if on_retry is not None:
            on_retry(retries, cause)
        attempt_millis = (now - attempt_start) / 1_000_000
        left_millis = (timeout_nanos - elapsed) / 1_000_000
        sleep = clock.rng.uniform(lower, upper) - attempt_millis
        clock.sleep_millis(max(1.0, min(sleep, left_millis)))
        upper *= 2
        if upper <= max_sleep:
            lower *= 2
        else:
            upper = max_sleep
