"""This is all a third-party adapter needs to run lochkit's whole conformance suite: override one
fixture to hand over a factory (the test module then imports every suite)."""

import pytest

from conformance.examples.toy_sqlite import ToySqliteFactory


@pytest.fixture(scope="session")
def lochkit_backend_factory() -> ToySqliteFactory:
    return ToySqliteFactory()
