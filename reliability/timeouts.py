"""How long one Persist call may block when the server or the network fails, per backend, with
lochkit's default client settings; docs/reliability.md explains each figure. The fault runs
fail any call that takes longer.
"""

from __future__ import annotations

from typing import Final

#: Seconds; the settings behind each figure are documented in docs/reliability.md.
CALL_BOUNDS: Final[dict[str, float]] = {
    # connect_timeout 10 s, pool_timeout 30 s, request_timeout 30 s (a stalled statement's
    # connection is shut down by the adapter's watchdog)
    "postgres": 45.0,
    "cockroachdb": 45.0,
    # connect_timeout 10 s, pool_timeout 30 s, request_timeout 30 s (the socket's read timeout)
    "mariadb": 45.0,
    # serverSelectionTimeoutMS 3 s, connectTimeoutMS 3 s, socketTimeoutMS 30 s
    "mongodb": 40.0,
    # request timeout 12 s; a call may first (re)prepare its statement (another 12 s)
    "cassandra": 30.0,
    "scylladb": 30.0,
    # connect 3 s, read 20 s, up to 3 attempts for reads and unconditional writes
    "dynamodb": 70.0,
    # timeout 30 s per request (the gRPC deadline, connecting included), never retried by the client
    "bigtable": 45.0,
}
DEFAULT_BOUND: Final = 60.0


def call_bound(backend: str) -> float:
    return CALL_BOUNDS.get(backend, DEFAULT_BOUND)
