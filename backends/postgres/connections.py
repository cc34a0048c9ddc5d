"""Connection checkout for the PostgreSQL backend, kept out of the hot path.

A commit runs three or four statements, each on a connection checked out of psycopg's pool and
returned right after. The pool's checkout and return cost about 15 µs of Python and a lock each,
per statement. :class:`ConnectionShelf` keeps connections that came back healthy on a shelf and
hands them out again directly; only when the shelf is empty does a thread go to the pool.

Connections on the shelf are checked out as far as the pool knows, so the pool's size still
bounds how many exist. To never leave a thread waiting in the pool while connections idle on the
shelf, a thread announces itself before its last look at the shelf and its wait in the pool, and
while anyone waits there, returned connections go back to the pool instead of the shelf.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg_pool import ConnectionPool


class ConnectionShelf:
    def __init__(self, pool: ConnectionPool[Any]) -> None:
        self._pool = pool
        self._idle: deque[Connection[Any]] = deque()
        self._lock = threading.Lock()
        self._waiting = 0

    def get(self) -> Connection[Any]:
        """A connection for one statement; raises what the pool raises (PoolTimeout, PoolClosed)."""
        try:
            return self._idle.pop()  # the most recently used: its server process is warm
        except IndexError:
            pass
        with self._lock:
            self._waiting += 1
        try:
            try:
                return self._idle.pop()  # one may have been shelved before we announced ourselves
            except IndexError:
                conn: Connection[Any] = self._pool.getconn()
                return conn
        finally:
            with self._lock:
                self._waiting -= 1

    def put(self, conn: Connection[Any], *, healthy: bool) -> None:
        """Hand a connection back. One that failed a statement, or is not idle, goes to the pool,
        which checks it and replaces it if it is broken."""
        from psycopg import pq

        if healthy and not conn.closed and conn.pgconn.transaction_status == pq.TransactionStatus.IDLE:
            with self._lock:
                if not self._waiting:
                    self._idle.append(conn)
                    return
        self._pool.putconn(conn)

    @contextmanager
    def borrowed(self) -> Iterator[Connection[Any]]:
        """A connection for the block; handed back healthy unless the block raised."""
        conn = self.get()
        try:
            yield conn
        except BaseException:
            self.put(conn, healthy=False)
            raise
        self.put(conn, healthy=True)

    def close(self) -> None:
        """Return every shelved connection to the pool (before the pool closes)."""
        while True:
            try:
                conn = self._idle.pop()
            except IndexError:
                return
            self._pool.putconn(conn)
