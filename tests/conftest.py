"""Fixtures shared by several test directories."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator

import pytest


def pytest_collection_finish(session: pytest.Session) -> None:
    """Leaves what collection built (modules, about 13,000 test items with their parameters) out of
    every later garbage collection: it lives until the session ends anyway, and a full collection
    walked all of it, which made each ``gc.collect()`` cost most of a second. Code under test calls
    it (closing a RocksDB store collects twice, to release the directory lock), so half the time
    of some test files went to it. Objects the tests create are collected as before."""
    gc.collect()  # garbage from collection is freed, not frozen with the rest
    gc.freeze()


@pytest.fixture(scope="session")
def nessie_server() -> Iterator[str]:
    """The REST API v2 URL of a real Nessie server (in-memory store), started once per session by
    lochkit's provisioner and stopped at the end. Runs when LOCHKIT_NESSIE_TESTS=1 (CI sets it): it
    needs Java 21+ and the 245 MB runner jar. LOCHKIT_NESSIE_URL names a running server instead."""
    running = os.environ.get("LOCHKIT_NESSIE_URL")
    if running:
        yield running
        return
    if os.environ.get("LOCHKIT_NESSIE_TESTS") != "1":
        pytest.skip("the real Nessie server runs when LOCHKIT_NESSIE_TESTS=1 (needs Java 21+, a 245 MB jar)")
    from provisioning.servers.nessie import PROVISIONER
    from provisioning.workdir import workdir

    with workdir("nessie-test") as where:
        provisioned = PROVISIONER.local_process("nessie", where)
        try:
            yield provisioned.url or ""
        finally:
            provisioned.stop()
