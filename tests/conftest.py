"""Fixtures shared by several test directories."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


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
