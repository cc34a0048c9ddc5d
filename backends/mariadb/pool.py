"""A bounded pool of PyMySQL connections (PyMySQL has none of its own).

Connections are handed out most recently used first and created on demand up to ``size``; a
thread that finds none free waits up to ``timeout`` seconds. A connection whose block raised is
closed rather than reused: after a lost connection or a timed-out read its state is unknown, and
reconnecting costs one round trip in the rare case it was healthy.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Generic, TypeVar

C = TypeVar("C")


class PoolTimeout(Exception):
    """No connection became free within the pool's timeout."""


class PoolClosed(Exception):
    """The pool was used after :meth:`ConnectionPool.close`."""


class ConnectionPool(Generic[C]):
    def __init__(
        self, connect: Callable[[], C], close: Callable[[C], None], size: int, timeout: float
    ) -> None:
        self._connect = connect
        self._close = close
        self._size = size
        self._timeout = timeout
        self._idle: list[C] = []
        self._open = 0
        self._closed = False
        self._changed = threading.Condition()

    def _get(self) -> C:
        with self._changed:
            ready = self._changed.wait_for(
                lambda: self._closed or self._idle or self._open < self._size, self._timeout
            )
            if self._closed:
                raise PoolClosed("the connection pool is closed")
            if not ready:
                raise PoolTimeout(
                    f"no free connection within pool_timeout={self._timeout:g} s ({self._size} in use)"
                )
            if self._idle:
                return self._idle.pop()
            self._open += 1
        try:
            return self._connect()
        except BaseException:
            self._discard(None)
            raise

    def _put(self, conn: C) -> None:
        with self._changed:
            if not self._closed:
                self._idle.append(conn)
                self._changed.notify()
                return
        self._discard(conn)

    def _discard(self, conn: C | None) -> None:
        if conn is not None:
            with suppress(Exception):
                self._close(conn)
        with self._changed:
            self._open -= 1
            self._changed.notify()

    @contextmanager
    def borrowed(self) -> Iterator[C]:
        """A connection for the block; kept for reuse unless the block raised."""
        conn = self._get()
        try:
            yield conn
        except BaseException:
            self._discard(conn)
            raise
        self._put(conn)

    def discard_idle(self) -> None:
        """Close every idle connection: after one was found broken (a server restart, a network
        fault), the others most likely are too, and the next statement should not meet them."""
        with self._changed:
            idle, self._idle = self._idle, []
        for conn in idle:
            self._discard(conn)

    def close(self) -> None:
        with self._changed:
            self._closed = True
            idle, self._idle = self._idle, []
            self._changed.notify_all()
        for conn in idle:
            self._discard(conn)
