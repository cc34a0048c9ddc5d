"""Opening PostgreSQL read-only (``BackendFactory.open_existing``), as ``lochkit check`` and
``lochkit inventory`` do, on a real server: tables that are not there are reported and not created,
the server refuses writes, and the commands read what is there."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from backends.postgres import PostgresBackendFactory
from persist_spi.adapter import RefRow
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.versionstore.store import VersionStore
from provisioning.servers.postgres import PROVISIONER, PostgresProvisioned

LOCHKIT = str(Path(sys.executable).with_name("lochkit"))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresProvisioned]:
    provisioned = PROVISIONER.local_process("postgres", tmp_path_factory.mktemp("postgres-read-only"))
    try:
        yield provisioned
    finally:
        provisioned.stop()


def with_prefix(server: PostgresProvisioned, prefix: str) -> str:
    url = server.url or ""
    return f"{url}{'&' if '?' in url else '?'}table_prefix={prefix}"


def tables(server: PostgresProvisioned, prefix: str) -> list[str]:
    with psycopg.connect(server.url or "", autocommit=True) as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE starts_with(table_name, %s)", [prefix]
        ).fetchall()
    return sorted(r[0] for r in rows)


def test_missing_tables_are_reported_and_not_created(server: PostgresProvisioned) -> None:
    from persist_spi.errors import BackendStoreMissing

    prefix = f"ro{uuid.uuid4().hex[:6]}_"
    with pytest.raises(BackendStoreMissing, match=f"no lochkit tables here \\({prefix}refs"):
        PostgresBackendFactory().open_existing(with_prefix(server, prefix))
    assert tables(server, prefix) == []
    for command, code in (("check", 4), ("inventory", 2)):
        done = subprocess.run(
            [LOCHKIT, command, "--backend", "postgres", "--url", with_prefix(server, prefix)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == code, done.stderr
        assert "no lochkit tables here" in done.stderr
    assert tables(server, prefix) == []


def test_the_server_refuses_writes_and_the_commands_read(server: PostgresProvisioned, tmp_path: Path) -> None:
    prefix = f"ro{uuid.uuid4().hex[:6]}_"
    url = with_prefix(server, prefix)
    writer = PostgresBackendFactory().create(url)
    writer.setup_schema()
    VersionStore(AdapterPersist(writer, StoreConfig())).repository.initialize("main")
    writer.close()
    reader = PostgresBackendFactory().open_existing(url)
    try:
        assert reader.fetch_refs("", ["int/refs"])[0] is not None
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            reader.insert_ref("", RefRow("refs/heads/x", b"\0" * 32, False, 1, None, b""))
    finally:
        reader.close()
    checked = subprocess.run(
        [LOCHKIT, "check", "--backend", "postgres", "--url", url], capture_output=True, text=True, timeout=120
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    out = tmp_path / "inv"
    inventory = subprocess.run(
        [LOCHKIT, "inventory", "--backend", "postgres", "--url", url, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert inventory.returncode == 0, inventory.stderr
    assert (out / "inventory.json").is_file()
    # A write-enabled opening (check --repair) still creates nothing, but may write rows.
    writable = PostgresBackendFactory().open_existing(url, read_only=False)
    try:
        assert writable.insert_ref("", RefRow("refs/heads/x", b"\0" * 32, False, 1, None, b""))
    finally:
        writable.close()
