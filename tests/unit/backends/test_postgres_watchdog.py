"""The PostgreSQL adapter's statement watchdog, on a local socket pair standing in for a connection
whose peer never answers."""

from __future__ import annotations

import socket
import time

from backends.postgres.config import parse_settings
from backends.postgres.watchdog import StatementWatchdog


def test_a_statement_past_its_deadline_gets_its_socket_shut_down() -> None:
    watchdog = StatementWatchdog(0.3)
    client, server = socket.socketpair()
    try:
        started = time.monotonic()
        with watchdog.guard(client.fileno()) as deadline:
            assert client.recv(10) == b""  # unblocked by the shutdown, as libpq's wait would be
        assert deadline.expired
        assert 0.25 < time.monotonic() - started < 5
    finally:
        watchdog.close()
        client.close()
        server.close()


def test_a_statement_that_answers_in_time_is_left_alone() -> None:
    watchdog = StatementWatchdog(0.3)
    client, server = socket.socketpair()
    try:
        with watchdog.guard(client.fileno()) as deadline:
            server.sendall(b"answer")
            assert client.recv(10) == b"answer"
        time.sleep(0.5)  # past the deadline, but no longer watched
        server.sendall(b"more")
        assert client.recv(10) == b"more"
        assert not deadline.expired
    finally:
        watchdog.close()
        client.close()
        server.close()


def test_request_timeout_is_an_option_with_a_default() -> None:
    assert parse_settings("postgres", "postgresql://u@h:1/d").request_timeout == 30.0
    assert parse_settings("postgres", "postgresql://u@h:1/d?request_timeout=2.5").request_timeout == 2.5
