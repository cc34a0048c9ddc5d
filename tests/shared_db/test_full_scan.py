"""Nessie's full scan (the Java program's FullScan) fails on what Nessie could not read: a stored
object whose bytes are no ObjProto, and a reference pointing at an object that is not stored; and
it reads a repository lochkit created in Nessie's layout. Shown per reader the program has for a
server backend; the shared-database test shows its success on what both sides wrote.

Runs when ``LOCHKIT_NESSIE_TESTS=1`` (Maven builds the Java program). PostgreSQL runs by default;
``LOCHKIT_SHARED_DB_BACKENDS`` (``all`` or a comma-separated list, as for the shared-database test)
adds MariaDB, Cassandra, DynamoDB Local and the Bigtable emulator. A backend whose server cannot be
provisioned here is skipped."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest

from loadgen import nessie_jvm
from persist_spi.adapter import ObjRow, RefRow
from provisioning.base import Provisioned, ProvisioningFailed
from provisioning.registry import start_local
from provisioning.servers.mariadb import MariadbProvisioned
from provisioning.servers.postgres import PostgresProvisioned
from reliability.shared_db.database import (
    SharedDatabase,
    fresh_bigtable,
    fresh_cassandra,
    fresh_dynamodb,
    fresh_mariadb,
    fresh_postgres,
)

pytestmark = pytest.mark.skipif(
    os.environ.get("LOCHKIT_NESSIE_TESTS") != "1",
    reason="builds Nessie's side with Maven when LOCHKIT_NESSIE_TESTS=1",
)

#: The server backends the full scan has a reader for, in the order they are tested.
READERS: Final = ("postgres", "mariadb", "cassandra", "dynamodb", "bigtable")
#: Those a run without LOCHKIT_SHARED_DB_BACKENDS covers (CI's).
DEFAULT_READERS: Final = ("postgres",)


def _readers() -> tuple[str, ...]:
    given = os.environ.get("LOCHKIT_SHARED_DB_BACKENDS", "")
    if not given:
        return DEFAULT_READERS
    if given == "all":
        return READERS
    asked = {b.strip() for b in given.split(",")}
    return tuple(b for b in READERS if b in asked)


@pytest.fixture(scope="module", params=_readers())
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provisioned]:
    backend: str = request.param
    try:
        provisioned = start_local(backend, tmp_path_factory.mktemp(backend))
    except ProvisioningFailed as e:
        pytest.skip(f"{backend} cannot be provisioned here: {e}")
    try:
        yield provisioned
    finally:
        provisioned.stop()


@pytest.fixture
def db(server: Provisioned, tmp_path: Path) -> SharedDatabase:
    """A fresh database on ``server`` holding Nessie's tables, empty."""
    assert server.url is not None
    if isinstance(server, PostgresProvisioned):
        return fresh_postgres(server.url, server.admin_url, tmp_path, precreate=True)
    if isinstance(server, MariadbProvisioned):
        fresh = fresh_mariadb(server.url, server.admin_url, tmp_path)
    elif server.backend == "cassandra":
        fresh = fresh_cassandra(server.url, tmp_path)
    elif server.backend == "dynamodb":
        fresh = fresh_dynamodb(server.url, tmp_path)
    else:
        fresh = fresh_bigtable(server.url, tmp_path)
    # lochkit creates Nessie's tables (its layout=nessie DDL is Nessie's), so the scan has tables
    # to read before anything is in them.
    with fresh.adapter() as adapter:
        adapter.setup_schema()
    return fresh


def _scan(db: SharedDatabase) -> dict[str, Any]:
    address = db.scan_address()
    assert address is not None, f"{db.backend}: the full scan has no reader for it"
    return nessie_jvm.full_scan(nessie_jvm.build(), address)


def test_an_empty_repository_scans_clean(db: SharedDatabase) -> None:
    scan = _scan(db)
    assert scan["objects_total"] == 0
    assert scan["references"] == []


def test_a_repository_lochkit_created_scans_clean(db: SharedDatabase) -> None:
    with db.lochkit(initialize=True):
        pass
    scan = _scan(db)
    # The repository description and the internal references' commits, at least.
    assert scan["objects_total"] >= 2
    assert {"int/refs", "int/repo", "refs/heads/main"} <= set(scan["references"])


def test_an_object_nessie_cannot_deserialise_fails_the_scan(db: SharedDatabase) -> None:
    with db.adapter() as adapter:
        adapter.insert_objs("", [ObjRow(bytes(32), "c", None, b"\xff\xff\xff", 0)])
    with pytest.raises(nessie_jvm.NessieSideError, match=r"Protocol|protobuf|parse"):
        _scan(db)


def test_a_reference_to_a_missing_object_fails_the_scan(db: SharedDatabase) -> None:
    with db.adapter() as adapter:
        adapter.insert_ref("", RefRow("refs/heads/main", bytes(range(32)), False, 0, None, b""))
    with pytest.raises(nessie_jvm.NessieSideError, match="not stored"):
        _scan(db)
