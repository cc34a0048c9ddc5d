"""The in-memory backend's factory: named stores shared within a process, or a fresh one."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Mapping
from typing import Any

from backends.inmemory.adapter import InMemoryAdapter
from backends.inmemory.capabilities import CAPABILITIES
from persist_spi.adapter import Capabilities
from persist_spi.registry import BackendFactory


class InMemoryBackendFactory(BackendFactory):
    """``inmemory://NAME`` shares one store per name within a process; no name gives a fresh store."""

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
        label = (url or "").removeprefix("inmemory://").strip("/")
        if not label:
            return InMemoryAdapter(f"anonymous-{next(self._counter)}")
        with self._named_lock:
            return self._named.setdefault(label, InMemoryAdapter(label))
