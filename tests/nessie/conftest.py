"""The ``side`` fixture: a test parametrised with it runs once on lochkit's version store in-process
and once on a real Nessie server (``nessie_server``, tests/conftest.py). Each run gets references of
its own, so tests share one Nessie server without seeing each other."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.differential.sides import SIDES, Side, lochkit_side, nessie_side
from nessie_client import NessieRestClient


@pytest.fixture(params=SIDES)
def side(request: pytest.FixtureRequest) -> Iterator[Side]:
    if request.param == "lochkit":
        yield lochkit_side()
        return
    url: str = request.getfixturevalue("nessie_server")
    with NessieRestClient(url) as client:
        yield nessie_side(client, url)
