"""The MariaDB backend against a real local MariaDB: its session settings (isolation, strict mode,
matched-row counts), the size limit it reads from the server, insert-if-absent on servers without
RETURNING (MySQL's path) under concurrent writers, exact name comparison, and its errors."""

from __future__ import annotations

import shutil
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pymysql
import pytest

from backends.mariadb import MariadbBackendFactory
from backends.mariadb.adapter import MariadbAdapter
from backends.mariadb.capabilities import object_size_limit
from persist_spi.adapter import ObjRow, RefRow
from persist_spi.errors import BackendConfigError, BackendPermissionDenied, BackendStoreMissing
from provisioning.servers.mariadb import MariadbProvisioned
from tests.servers.provisioned import provisioned_server

FACTORY = MariadbBackendFactory()


@pytest.fixture(scope="module")
def server() -> Iterator[MariadbProvisioned]:
    with provisioned_server("mariadb", FACTORY, "mariadb-tests") as provisioned:
        if not isinstance(provisioned, MariadbProvisioned) or not provisioned.admin_url:
            pytest.skip("needs a server lochkit started (an administrator URL)")
        yield provisioned


def admin(server: MariadbProvisioned) -> Any:
    parts = urlsplit(server.admin_url)
    return pymysql.connect(
        host=parts.hostname,
        port=parts.port or 3306,
        user=unquote(parts.username or ""),
        password=unquote(parts.password or ""),
        autocommit=True,
    )


@pytest.fixture
def adapter(server: MariadbProvisioned) -> Iterator[MariadbAdapter]:
    created = FACTORY.create(server.url, {"table_prefix": f"t{uuid.uuid4().hex[:8]}_"})
    created.setup_schema()
    try:
        yield created
    finally:
        created.close()


def test_every_session_reads_committed_in_strict_mode(adapter: MariadbAdapter) -> None:
    with adapter._pool.borrowed() as conn, conn.cursor() as cursor:
        cursor.execute("SELECT @@session.tx_isolation, @@session.sql_mode, @@session.autocommit")
        isolation, mode, autocommit = cursor.fetchone()
    assert isolation == "READ-COMMITTED"
    assert "STRICT_ALL_TABLES" in mode
    assert autocommit == 1


def test_compare_and_swap_to_the_same_values_succeeds(adapter: MariadbAdapter) -> None:
    """MySQL counts changed rows unless asked for matched ones: an UPDATE that leaves the row as it
    was would otherwise report 0 rows and a successful swap would look lost."""
    row = RefRow("main", b"\x01" * 32, False, 5, None, b"")
    assert adapter.insert_ref("r", row)
    assert adapter.update_ref("r", row, row)
    assert not adapter.update_ref("r", row._replace(pointer=b"\x02" * 32), row)


def test_names_differing_in_trailing_spaces_are_distinct(adapter: MariadbAdapter) -> None:
    assert adapter.insert_ref("r", RefRow("a", b"\x01", False, 1, None, b""))
    assert adapter.insert_ref("r", RefRow("a ", b"\x02", False, 1, None, b""))
    found = adapter.fetch_refs("r", ["a", "a "])
    assert [f.pointer if f else None for f in found] == [b"\x01", b"\x02"]


def test_the_size_limit_follows_the_servers_max_allowed_packet(server: MariadbProvisioned) -> None:
    packet = 4 * 1024 * 1024
    conn = admin(server)
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT @@global.max_allowed_packet")
            (before,) = cursor.fetchone()
            cursor.execute("SET GLOBAL max_allowed_packet = %s", [packet])
        created = FACTORY.create(server.url, {"table_prefix": f"t{uuid.uuid4().hex[:8]}_"})
        try:
            limit = object_size_limit(packet)
            assert created.capabilities.hard_object_size_limit == limit
            created.setup_schema()
            # Zero bytes travel escaped as two: the worst case fits exactly at the limit.
            row = ObjRow(b"\x07" * 32, "c", None, b"\x00" * limit, 1)
            assert created.insert_objs("r", [row]) == [True]
            assert created.fetch_objs("r", [row.obj_id]) == [row]
        finally:
            created.close()
    finally:
        with conn.cursor() as cursor:
            cursor.execute("SET GLOBAL max_allowed_packet = %s", [before])
        conn.close()


@pytest.mark.parametrize("returning", [True, False], ids=["returning", "transaction"])
def test_concurrent_inserts_report_each_id_inserted_once(adapter: MariadbAdapter, returning: bool) -> None:
    """Overlapping batches from several writers: every id is reported inserted by exactly one of
    them, with RETURNING (MariaDB) and with the locking transaction servers without it use."""
    adapter._returning = returning
    ids = [uuid.uuid4().bytes * 2 for _ in range(200)]
    results: list[list[tuple[bytes, bool]]] = []
    start = threading.Barrier(4)

    def writer(seed: int) -> None:
        batch = [ObjRow(i, "c", None, b"x", seed) for i in ids[seed * 30 :] + ids[: seed * 30]]
        start.wait()
        answers = adapter.insert_objs("r", batch)
        results.append([(row.obj_id, ok) for row, ok in zip(batch, answers, strict=True)])

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    inserted = [obj_id for answers in results for obj_id, ok in answers if ok]
    assert sorted(inserted) == sorted(ids)
    assert all(adapter.fetch_objs("r", ids))


def test_a_missing_database_is_a_config_error(server: MariadbProvisioned) -> None:
    """Said plainly to a user who may see every database; others are only told they have no access
    to it (the server does not say whether it exists)."""
    with pytest.raises(BackendConfigError, match="no_such_database"):
        FACTORY.create(server.admin_url.rstrip("/") + "/no_such_database")
    with pytest.raises(BackendPermissionDenied, match="which must exist"):
        FACTORY.create((server.url or "").rsplit("/", 1)[0] + "/no_such_database")


def test_missing_tables_are_reported_not_created(server: MariadbProvisioned) -> None:
    with pytest.raises(BackendStoreMissing, match="no lochkit tables"):
        FACTORY.open_existing(server.url, {"table_prefix": "absent_"})


def test_a_user_without_privileges_gets_permission_denied(server: MariadbProvisioned) -> None:
    user, password = f"u{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    conn = admin(server)
    try:
        with conn.cursor() as cursor:
            cursor.execute(f"CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY %s", [password])
            cursor.execute(f"GRANT SELECT ON lochkit.* TO '{user}'@'127.0.0.1'")
        where = urlsplit(server.url or "").netloc.rpartition("@")[2]
        created = FACTORY.create(f"mariadb://{user}:{password}@{where}/lochkit", {"table_prefix": "denied_"})
        try:
            with pytest.raises(BackendPermissionDenied, match="CREATE"):
                created.setup_schema()
        finally:
            created.close()
    finally:
        with conn.cursor() as cursor:
            cursor.execute(f"DROP USER '{user}'@'127.0.0.1'")
        conn.close()


def test_a_read_only_adapter_cannot_write(server: MariadbProvisioned, adapter: MariadbAdapter) -> None:
    options = {"table_prefix": adapter.statements.prefix}
    reader = FACTORY.open_existing(server.url, options, read_only=True)
    try:
        with pytest.raises(BackendPermissionDenied):
            reader.insert_ref("r", RefRow("main", b"\x01", False, 1, None, b""))
    finally:
        reader.close()


def test_a_server_starts_when_the_callers_temporary_directory_is_closed_to_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """MariaDB writes InnoDB's temporary files where TMPDIR says; a caller's TMPDIR the server's
    account may enter but not write (CI's is root's) must not keep the server from starting."""
    private = Path(tempfile.mkdtemp(prefix="lochkit-private-tmp-"))
    private.chmod(0o755)  # anyone may enter, only its owner may write
    monkeypatch.setenv("TMPDIR", str(private))
    monkeypatch.setattr(tempfile, "tempdir", None)  # tempfile caches the directory it chose
    try:
        with provisioned_server("mariadb", FACTORY, "mariadb-private-tmp") as provisioned:
            created = FACTORY.create(provisioned.url, {"table_prefix": "p_"})
            try:
                created.setup_schema()
            finally:
                created.close()
    finally:
        shutil.rmtree(private, ignore_errors=True)
