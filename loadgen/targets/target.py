"""The target contract shared by every load command."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from persist_spi.versionstore.api import VersionStoreApi


class RequestTimer:
    """Adds up the HTTP round trips of a REST client, so a run can tell the time spent waiting on
    the server from the client's own."""

    def __init__(self) -> None:
        self.requests = 0
        self.seconds = 0.0

    def __call__(self, seconds: float) -> None:
        self.requests += 1
        self.seconds += seconds


@dataclass(frozen=True)
class TargetConnection:
    """How another process reaches the same target without provisioning anything: the backend and
    its full address (with credentials: never print or record it), or a Nessie server's URI.
    Picklable, so worker processes receive it."""

    kind: str
    backend: str
    url: str | None
    options: dict[str, str] = field(default_factory=dict)
    #: The repository id in-process targets use ("" is the default repository).
    repository: str = ""


@dataclass
class Target:
    """A version-store API and what a run records about it. ``close()`` runs the closers in the
    order they were registered: the client or adapter first, then the servers started for it."""

    api: VersionStoreApi
    #: "lochkit" (in-process version store) or "nessie" (a Nessie server over REST).
    kind: str
    #: The backend name (e.g. "rocksdb") or "nessie".
    backend: str
    #: e.g. "PostgreSQL 15.18", "Nessie 0.99.0 (IN_MEMORY, Java 25)", "" when embedded.
    server_version: str = ""
    #: "embedded", "external", "local-process", "testcontainers", "persistent-directory"...
    provisioning: str = ""
    #: Where it lives, never with a password.
    url: str | None = None
    #: The repository an in-process target reads and writes (None for a Nessie server).
    repository: str | None = None
    #: Whether the commit ids this target produces can be reproduced with a seed.
    reproducible: bool = False
    notes: list[str] = field(default_factory=list)
    #: For REST targets: every HTTP round trip, timed.
    request_timer: RequestTimer | None = None
    #: How other processes connect to this target (None when they cannot, e.g. ``inmemory``).
    connection: TargetConnection | None = field(default=None, repr=False)
    _closers: list[Callable[[], None]] = field(default_factory=list, repr=False)

    def on_close(self, closer: Callable[[], None]) -> None:
        self._closers.append(closer)

    def facts(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "backend": self.backend,
            "server_version": self.server_version,
            "provisioning": self.provisioning,
            "url": self.url,
            "repository": self.repository,
            "notes": list(self.notes),
        }

    def describe(self) -> str:
        where = f" at {self.url}" if self.url else ""
        server = f", {self.server_version}" if self.server_version else ""
        return f"{self.kind} target: {self.backend} ({self.provisioning}{where}{server})"

    def close(self) -> None:
        while self._closers:
            closer = self._closers.pop(0)
            with contextlib.suppress(Exception):  # closing must go on to stop every server
                closer()

    def __enter__(self) -> Target:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
