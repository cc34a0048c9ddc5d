"""A TCP proxy that counts round trips: how often a client sends after its server has answered.

Requests a client sends before the answer to the first comes back (a pipeline, or several
statements in one packet) are one round trip; so are the two sides of a handshake. Counted per
connection and summed, whatever the driver or protocol, so the figure is the same kind on every
backend. The proxy listens on loopback and forwards to one server address.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

_CHUNK = 65536


@dataclass
class _Connection:
    """Who sent last on one proxied connection."""

    client_sent_last: bool = False


@dataclass
class RoundTripProxy:
    target: tuple[str, int]
    _listener: socket.socket = field(init=False)
    _count: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _sockets: list[socket.socket] = field(default_factory=list)
    _closed: bool = False

    def __post_init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        threading.Thread(target=self._accept, name="round-trip-proxy", daemon=True).start()

    @property
    def port(self) -> int:
        return int(self._listener.getsockname()[1])

    @property
    def round_trips(self) -> int:
        with self._lock:
            return self._count

    def close(self) -> None:
        self._closed = True
        for s in [self._listener, *self._sockets]:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
                server = socket.create_connection(self.target)
            except OSError:
                return  # closed
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._sockets += [client, server]
            state = _Connection()
            for source, sink, from_client in ((client, server, True), (server, client, False)):
                threading.Thread(
                    target=self._pump, args=(source, sink, from_client, state), daemon=True
                ).start()

    def _pump(
        self, source: socket.socket, sink: socket.socket, from_client: bool, state: _Connection
    ) -> None:
        try:
            while data := source.recv(_CHUNK):
                with self._lock:
                    if from_client and not state.client_sent_last:
                        self._count += 1
                    state.client_sent_last = from_client
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)


@contextlib.contextmanager
def round_trip_proxy(host: str, port: int) -> Iterator[RoundTripProxy]:
    proxy = RoundTripProxy((host, port))
    try:
        yield proxy
    finally:
        proxy.close()
