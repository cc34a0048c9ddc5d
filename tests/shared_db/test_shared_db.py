"""The shared-database test: a real Nessie 0.99.0 server and lochkit (``layout=nessie``) on one
PostgreSQL database and one RocksDB directory, in every direction (see reliability.shared_db).

Runs when ``LOCHKIT_NESSIE_TESTS=1`` (Java 21+, the Nessie runner jar, Maven for Nessie's storage
jars); a backend whose server cannot be provisioned here is skipped. PostgreSQL and RocksDB run by
default (as in CI); ``LOCHKIT_SHARED_DB_BACKENDS=all`` (or a comma-separated list) adds MariaDB,
Cassandra, DynamoDB Local and the Bigtable emulator. On PostgreSQL the Nessie-first directions run
on tables Nessie creates itself; ``LOCHKIT_SHARED_DB_VARIANTS=all`` adds the variant with Nessie's
DDL run first (``lochkit shared-db`` always runs both). CI leaves that variant to the full command
to stay within its time budget.
``lochkit shared-db`` runs the same and prints the table."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from provisioning.base import ProvisioningFailed
from reliability.shared_db.names import BACKENDS, DIRECTIONS
from reliability.shared_db.runner import NESSIE_CREATES, PRECREATED, run_backend
from reliability.shared_db.scenario import Outcome

#: The backends a run without LOCHKIT_SHARED_DB_BACKENDS covers (CI's).
DEFAULT_BACKENDS = ("postgres", "rocksdb")


def _backends() -> tuple[str, ...]:
    given = os.environ.get("LOCHKIT_SHARED_DB_BACKENDS", "")
    if not given:
        return DEFAULT_BACKENDS
    return BACKENDS if given == "all" else tuple(b.strip() for b in given.split(",") if b.strip())


def _postgres_variants() -> tuple[str, ...]:
    if os.environ.get("LOCHKIT_SHARED_DB_VARIANTS") == "all":
        return (PRECREATED, NESSIE_CREATES)
    return (NESSIE_CREATES,)


pytestmark = pytest.mark.skipif(
    os.environ.get("LOCHKIT_NESSIE_TESTS") != "1",
    reason="starts a real Nessie server when LOCHKIT_NESSIE_TESTS=1 (needs Java 21+, a 245 MB jar)",
)


@pytest.fixture(scope="module", params=_backends())
def outcomes(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> list[Outcome]:
    backend: str = request.param
    workdir: Path = tmp_path_factory.mktemp(f"shared-{backend}")
    try:
        return run_backend(backend, workdir, postgres_variants=_postgres_variants())
    except ProvisioningFailed as e:
        pytest.skip(f"{backend} cannot be provisioned here: {e}")


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_direction(outcomes: list[Outcome], direction: str) -> None:
    mine = [o for o in outcomes if o.direction == direction]
    assert mine, f"{direction} did not run"
    failed = [f"{o.variant}: {o.detail}" for o in mine if not o.ok]
    assert not failed, "\n".join(failed)
