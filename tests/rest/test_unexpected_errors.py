"""A failure the request did not cause is the server's: HTTP 500 with Nessie's error body, and an
ERROR line with the traceback in the server's log. Only input lochkit declares wrong (an
``InputError``) is a 400: a ``ValueError`` Python raises from a bug is not the client's fault."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NoReturn

import pytest
import requests

from backends.inmemory import InMemoryBackendFactory
from loadgen.targets.in_process import in_process_target
from persist_spi.errors import InputError
from persist_spi.versionstore.api import VersionStoreApi
from rest_server import BackgroundServer, create_app


@dataclass(frozen=True)
class Served:
    uri: str
    store: VersionStoreApi


@pytest.fixture
def served() -> Iterator[Served]:
    """A REST server over a fresh in-memory store the test can break (its own, not the session's)."""
    with in_process_target(
        InMemoryBackendFactory().create(), backend="inmemory", provisioning="embedded", url=None
    ) as target:
        store = target.api
        with BackgroundServer(create_app(lambda: store)) as server:
            yield Served(server.uri, store)


def _unpacking_bug(*args: Any, **kwargs: Any) -> NoReturn:
    values: list[int] = [1]
    first, second = values  # the bug: one value where two were expected
    raise AssertionError(f"not reached: {first} {second}")


def _runtime_bug(*args: Any, **kwargs: Any) -> NoReturn:
    raise RuntimeError("the store lost its marbles")


def _list_references(served: Served) -> tuple[int, Any]:
    response = requests.get(f"{served.uri}/trees", timeout=60)
    return response.status_code, response.json()


@pytest.mark.parametrize(
    ("bug", "message"),
    [
        (_unpacking_bug, "ValueError: not enough values to unpack (expected 2, got 1)"),
        (_runtime_bug, "RuntimeError: the store lost its marbles"),
    ],
    ids=["python-value-error", "runtime-error"],
)
def test_an_unexpected_error_in_a_handler_is_a_500_with_a_logged_traceback(
    served: Served,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    bug: Any,
    message: str,
) -> None:
    monkeypatch.setattr(served.store, "list_references", bug)
    with caplog.at_level(logging.ERROR):
        status, body = _list_references(served)
    assert status == 500, body
    assert body == {
        "status": 500,
        "reason": "Internal Server Error",
        "message": message,
        "errorCode": "UNKNOWN",
        "serverStackTrace": None,
    }
    logged = [r for r in caplog.records if r.levelno == logging.ERROR and r.name.startswith("rest_server")]
    assert len(logged) == 1, [r.getMessage() for r in caplog.records]
    assert "GET /api/v2/trees" in logged[0].getMessage()
    assert logged[0].exc_info is not None  # the traceback, for the operator
    assert bug.__name__ in (logged[0].exc_text or logging.Formatter().formatException(logged[0].exc_info))


def test_a_declared_input_error_is_still_a_400_and_not_logged(
    served: Served, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> NoReturn:
        raise InputError("Invalid reference name 'x y': names hold no spaces")

    monkeypatch.setattr(served.store, "list_references", refuse)
    with caplog.at_level(logging.ERROR):
        status, body = _list_references(served)
    assert status == 400, body
    assert body["errorCode"] == "BAD_REQUEST"
    assert body["message"] == "Invalid reference name 'x y': names hold no spaces"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
