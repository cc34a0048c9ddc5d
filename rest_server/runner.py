"""Running the application with uvicorn: in the foreground (``lochkit serve``) or on a background
thread with a free loopback port (test harnesses, the Spark test)."""

from __future__ import annotations

import socket
import threading
import time
from typing import Final

import uvicorn
from starlette.applications import Starlette

from rest_server.limits import RequestLimits
from rest_server.tls import Tls

_START_TIMEOUT: Final = 30.0


def serve_forever(
    app: Starlette,
    host: str,
    port: int,
    *,
    log_level: str = "warning",
    limits: RequestLimits | None = None,
    tls: Tls | None = None,
) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM: uvicorn finishes open requests first); with
    ``limits``, uvicorn enforces their connection limits (idle keep-alive, header size); over HTTPS
    with ``tls``."""
    options = limits.uvicorn_options() if limits is not None else {}
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        ssl_certfile=_cert(tls),
        ssl_keyfile=_key(tls),
        **options,
    )


def _cert(tls: Tls | None) -> str | None:
    return None if tls is None else str(tls.cert)


def _key(tls: Tls | None) -> str | None:
    return None if tls is None else str(tls.key)


class BackgroundServer:
    """The application on ``host`` and a free port, served from a daemon thread until :meth:`stop`."""

    def __init__(
        self, app: Starlette, host: str = "127.0.0.1", port: int = 0, *, tls: Tls | None = None
    ) -> None:
        self.host = host
        self.port = port or _free_port(host)
        self.scheme = "http" if tls is None else "https"
        config = uvicorn.Config(
            app,
            host=host,
            port=self.port,
            log_level="warning",
            access_log=False,
            ssl_certfile=_cert(tls),
            ssl_keyfile=_key(tls),
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="lochkit-rest-server", daemon=True)

    @property
    def uri(self) -> str:
        """The REST API v2 base, as Nessie clients take it."""
        return f"{self.scheme}://{self.host}:{self.port}/api/v2"

    def start(self) -> BackgroundServer:
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError(f"lochkit's REST server could not start on {self.host}:{self.port}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"lochkit's REST server did not start within {_START_TIMEOUT:.0f} s")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout=10)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


__all__ = ["BackgroundServer", "serve_forever"]
