"""What the REST tests share: lochkit's REST server over a fresh in-memory store."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

import pytest

from backends.inmemory import InMemoryBackendFactory
from loadgen.targets.in_process import in_process_target
from rest_server import BackgroundServer, create_app


@contextlib.contextmanager
def _served_inmemory() -> Iterator[str]:
    with in_process_target(
        InMemoryBackendFactory().create(), backend="inmemory", provisioning="embedded", url=None
    ) as target:
        api = target.api
        with BackgroundServer(create_app(lambda: api)) as server:
            yield server.uri


@pytest.fixture(scope="session")
def served_inmemory() -> Callable[[], AbstractContextManager[str]]:
    """``with served_inmemory() as uri``: a REST server (its v2 base URI) over an empty repository
    with a ``main`` branch, stopped on leaving the block."""
    return _served_inmemory
