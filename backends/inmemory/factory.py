"""The in-memory backend's factory: named stores shared within a process, or a fresh one."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl

from backends.inmemory.adapter import InMemoryAdapter
from backends.inmemory.capabilities import CAPABILITIES
from persist_spi.adapter import Capabilities
from persist_spi.errors import BackendConfigError
from persist_spi.layouts import parse_layout
from persist_spi.registry import BackendFactory


class InMemoryBackendFactory(BackendFactory):
    """``inmemory://NAME`` shares one store per name within a process; no name gives a fresh store.
    Option ``layout=nessie`` has the core write Nessie's object bytes (see :mod:`persist_spi.layouts`)."""

    name = "inmemory"
    description = "In-process dicts; thread-safe, not durable, nothing to install"
    default_url = None
    lives_in_process = True

    _named: dict[str, InMemoryAdapter] = {}
    _named_lock = threading.Lock()
    _counter = itertools.count(1)

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def create(self, url: str | None = None, options: Mapping[str, Any] | None = None) -> InMemoryAdapter:
        base, _, query = (url or "").partition("?")
        given = dict(parse_qsl(query)) | dict(options or {})
        address = url or "inmemory://"
        unknown = sorted(set(given) - {"layout"})
        if unknown:
            raise BackendConfigError(
                "inmemory", address, f"unknown option(s) {', '.join(unknown)}", "the only option is layout="
            )
        layout = parse_layout("inmemory", address, given.get("layout"))
        label = base.removeprefix("inmemory://").strip("/")
        if not label:
            return InMemoryAdapter(f"anonymous-{next(self._counter)}", layout)
        with self._named_lock:
            adapter = self._named.setdefault(label, InMemoryAdapter(label, layout))
        if adapter.layout is not layout:
            raise BackendConfigError(
                "inmemory",
                address,
                f"the store {label!r} of this process was opened with layout={adapter.layout.name}",
                f"open it with layout={adapter.layout.name}, or use another name",
            )
        return adapter
