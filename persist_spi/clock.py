"""Time sources. Timestamps are microseconds since the epoch, like Nessie's."""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    def micros(self) -> int:
        """Microseconds since the epoch."""
        ...


class SystemClock:
    def micros(self) -> int:
        return time.time_ns() // 1000


class UniqueMicrosClock:
    """A clock whose readings strictly increase, at least 1 µs apart, even across threads.

    The ``referenced`` timestamp of an object must strictly increase when it is stored again (that is
    what makes ``delete_with_referenced`` safe for garbage collection), and two refs created in the
    same microsecond must still get distinct creation times.
    """

    def __init__(self, source: Clock | None = None) -> None:
        self._source: Clock = source if source is not None else SystemClock()
        self._last = 0
        self._lock = threading.Lock()

    def micros(self) -> int:
        now = self._source.micros()
        with self._lock:
            if now <= self._last:
                now = self._last + 1
            self._last = now
            return now


#: The clock every Persist uses unless told otherwise: shared so all readings in a process are unique.
DEFAULT_CLOCK = UniqueMicrosClock()
