"""The ``side`` fixture: a test parametrised with it runs once on lochkit's version store in-process
and once on a real Nessie server (``nessie_server``, tests/conftest.py). Each run gets a fresh
branch, so tests share one Nessie server without seeing each other."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from nessie_client import NessieRestClient
from persist_spi.versionstore.refs import branch

from .sides import SIDES, Side, lochkit_side


@pytest.fixture(params=SIDES)
def side(request: pytest.FixtureRequest) -> Iterator[Side]:
    if request.param == "lochkit":
        yield lochkit_side()
        return
    url: str = request.getfixturevalue("nessie_server")
    with NessieRestClient(url) as client:
        main = branch(f"x{uuid.uuid4().hex[:12]}")
        client.create_reference(main)
        yield Side("nessie", client, main, raw_url=url)
