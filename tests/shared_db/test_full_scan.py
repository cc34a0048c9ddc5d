"""Nessie's full scan (the Java program's FullScan) fails on what Nessie could not read: a stored
object whose bytes are no ObjProto, and a reference pointing at an object that is not stored. Its
success is shown by the shared-database test; these show that it can fail.

Runs when ``LOCHKIT_NESSIE_TESTS=1`` (Maven builds the Java program); needs PostgreSQL's server."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, LiteralString

import pytest

from loadgen import nessie_jvm
from provisioning.base import ProvisioningFailed
from provisioning.registry import start_local
from provisioning.servers.postgres import PostgresProvisioned
from reliability.shared_db.database import SharedDatabase, fresh_postgres

pytestmark = pytest.mark.skipif(
    os.environ.get("LOCHKIT_NESSIE_TESTS") != "1",
    reason="builds Nessie's side with Maven when LOCHKIT_NESSIE_TESTS=1",
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresProvisioned]:
    try:
        provisioned = start_local("postgres", tmp_path_factory.mktemp("pg"))
    except ProvisioningFailed as e:
        pytest.skip(f"postgres cannot be provisioned here: {e}")
    assert isinstance(provisioned, PostgresProvisioned)
    try:
        yield provisioned
    finally:
        provisioned.stop()


def _database(server: PostgresProvisioned, tmp_path: Path) -> SharedDatabase:
    assert server.url is not None
    return fresh_postgres(server.url, server.admin_url, tmp_path, precreate=True)


def _scan(db: SharedDatabase) -> dict[str, Any]:
    address = db.scan_address()
    assert address is not None
    return nessie_jvm.full_scan(nessie_jvm.build(), address)


def _insert(db: SharedDatabase, statement: LiteralString, *params: object) -> None:
    import psycopg

    with psycopg.connect(db.url) as conn:
        conn.execute(statement, params)


def test_an_empty_repository_scans_clean(server: PostgresProvisioned, tmp_path: Path) -> None:
    scan = _scan(_database(server, tmp_path))
    assert scan["objects_total"] == 0
    assert scan["references"] == []


def test_an_object_nessie_cannot_deserialise_fails_the_scan(
    server: PostgresProvisioned, tmp_path: Path
) -> None:
    db = _database(server, tmp_path)
    _insert(
        db,
        "INSERT INTO objs2 (repo, obj_id, obj_type, obj_value, obj_ref) VALUES ('', %s, 'c', %s, 0)",
        bytes(32),
        b"\xff\xff\xff",
    )
    with pytest.raises(nessie_jvm.NessieSideError, match=r"Protocol|protobuf|parse"):
        _scan(db)


def test_a_reference_to_a_missing_object_fails_the_scan(server: PostgresProvisioned, tmp_path: Path) -> None:
    db = _database(server, tmp_path)
    _insert(
        db,
        "INSERT INTO refs2 (repo, ref_name, pointer, deleted) VALUES ('', 'refs/heads/main', %s, false)",
        bytes(range(32)),
    )
    with pytest.raises(nessie_jvm.NessieSideError, match="not stored"):
        _scan(db)
