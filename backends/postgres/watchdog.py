"""A client-side deadline for PostgreSQL statements.

libpq waits for a statement's answer as long as the TCP connection stays open. When nothing comes
back on a connection that is still open (a half-open connection, a stalled proxy or firewall),
neither ``connect_timeout`` nor the server's ``statement_timeout`` ends the wait, and TCP keepalives
do not either when something in between still acknowledges. One watchdog thread per adapter keeps
the deadline of every statement in flight and shuts down the socket of any that passes it; libpq's
wait then returns with a connection error, which the adapter reports (a write whose answer was lost
as an unknown outcome), and the pool drops the connection.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass
class Deadline:
    """One statement's watch; ``expired`` tells the caller its connection was shut down."""

    seconds: float
    expired: bool = False


class StatementWatchdog:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._ids = itertools.count()
        self._watched: dict[int, tuple[float, int, Deadline]] = {}
        self._lock = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    @contextlib.contextmanager
    def guard(self, fileno: int) -> Iterator[Deadline]:
        """Watch the connection whose socket is ``fileno`` for the duration of the block."""
        deadline = Deadline(self.seconds)
        token = next(self._ids)
        with self._lock:
            self._watched[token] = (time.monotonic() + self.seconds, fileno, deadline)
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="lochkit-pg-watchdog", daemon=True)
                self._thread.start()
        try:
            yield deadline
        finally:
            with self._lock:
                # Under the lock: once unregistered, the socket is never touched (its number may
                # be reused as soon as the connection is closed).
                self._watched.pop(token, None)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._lock.notify()

    def _watch(self) -> None:
        with self._lock:
            while not self._closed:
                now = time.monotonic()
                for token, (due, fileno, deadline) in list(self._watched.items()):
                    if due <= now:
                        deadline.expired = True
                        del self._watched[token]
                        _shut_down(fileno)
                due_next = min((due for due, _, _ in self._watched.values()), default=now + 1.0)
                self._lock.wait(max(0.05, min(1.0, due_next - now)))


def _shut_down(fileno: int) -> None:
    """Shut the socket down in both directions without closing libpq's descriptor."""
    with contextlib.suppress(OSError):
        duplicate = socket.socket(fileno=os.dup(fileno))
        try:
            duplicate.shutdown(socket.SHUT_RDWR)
        finally:
            duplicate.close()
