"""The errors a user of the postgres backend meets, produced by a real PostgreSQL server that the
provisioner starts for this module: server down, wrong password, unknown database, missing
privileges, tables of another lochkit version, a connection lost during a write, and transactions
the server aborts for conflicts (retried). Every message must name the backend and address, say
what to do, and never show a password."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from backends.postgres import CockroachBackendFactory, PostgresBackendFactory
from backends.postgres.adapter import PostgresAdapter
from persist_spi.adapter import ObjRow, RefRow
from persist_spi.errors import (
    BackendAuthenticationFailed,
    BackendConfigError,
    BackendError,
    BackendPermissionDenied,
    BackendSchemaMismatch,
    BackendUnavailable,
    UnknownOperationResult,
)
from provisioning.servers.postgres import PROVISIONER, PostgresProvisioned
from provisioning.servers.process import free_port, port_answers

FACTORY = PostgresBackendFactory()
SECRET = "Very$ecret-" + uuid.uuid4().hex


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresProvisioned]:
    provisioned = PROVISIONER.local_process("postgres", tmp_path_factory.mktemp("postgres-errors"))
    try:
        yield provisioned
    finally:
        provisioned.stop()


@pytest.fixture
def prefix() -> str:
    """Fresh tables for each test, so tests cannot see each other's schema changes."""
    return f"t{uuid.uuid4().hex[:8]}_"


def admin(server: PostgresProvisioned, statement: str | sql.Composed, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(server.admin_url, dbname="lochkit", autocommit=True) as conn:
        cursor = conn.execute(statement, params or None)
        return cursor.fetchall() if cursor.description else []


def url_for(
    server: PostgresProvisioned, user: str | None = None, password: str | None = None, **query: str
) -> str:
    """The server's URL with another user/password and extra query parameters."""
    info = psycopg.conninfo.conninfo_to_dict(str(server.url))
    user = user or str(info["user"])
    password = password or str(info["password"])
    extra = "&".join(f"{k}={v}" for k, v in query.items())
    return f"postgresql://{user}:{password}@{info['host']}:{info['port']}/{info['dbname']}?{extra}"


def make_role(server: PostgresProvisioned, *grants: str) -> str:
    """A login role with password SECRET and only the given GRANT statements ({role} is filled in)."""
    role = f"r{uuid.uuid4().hex[:10]}"
    admin(
        server, sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(role), sql.Literal(SECRET))
    )
    for grant in grants:
        admin(server, grant.format(role=role))
    return role


def assert_user_facing(
    error: BaseException, cls: type[BaseException], address_part: str, *words: str
) -> None:
    """The error has the expected type, names backend and address, carries the words, and no
    secret appears in it or anywhere in its printed traceback (causes included)."""
    assert isinstance(error, cls), f"{type(error).__name__}: {error}"
    text = str(error)
    printed = "".join(traceback.format_exception(error))
    if isinstance(error, BackendError):
        assert error.backend == "postgres"
        assert "@" not in error.address or ":" not in error.address.split("@")[0].split("//")[1]
    assert text.startswith("postgres at postgresql://"), text
    assert address_part in text
    for word in words:
        assert word in text, f"{word!r} not in {text!r}"
    assert SECRET not in printed


def adapter_for(url: str | None, **options: Any) -> PostgresAdapter:
    return FACTORY.create(url, options)


# --- connecting ----------------------------------------------------------------------------------


def test_server_down_is_unavailable() -> None:
    port = free_port()
    with pytest.raises(BackendUnavailable) as e:
        FACTORY.create(f"postgresql://lochkit:{SECRET}@127.0.0.1:{port}/lochkit")
    assert_user_facing(
        e.value,
        BackendUnavailable,
        f"postgresql://lochkit@127.0.0.1:{port}/lochkit",
        "Connection refused",
        "pg_isready",
    )


def test_wrong_password_is_authentication_failed(server: PostgresProvisioned) -> None:
    with pytest.raises(BackendAuthenticationFailed) as e:
        FACTORY.create(url_for(server, password=SECRET))
    assert_user_facing(
        e.value,
        BackendAuthenticationFailed,
        "postgresql://lochkit@127.0.0.1:",
        "password authentication failed",
    )
    assert "Check the user name and password" in e.value.fix


def test_unknown_user_is_authentication_failed(server: PostgresProvisioned) -> None:
    with pytest.raises(BackendAuthenticationFailed) as e:
        FACTORY.create(url_for(server, user="nobody", password=SECRET))
    assert_user_facing(e.value, BackendAuthenticationFailed, "postgresql://nobody@127.0.0.1:")


def test_unknown_database_is_a_config_error(server: PostgresProvisioned) -> None:
    url = url_for(server).replace("/lochkit?", "/no_such_db?")
    with pytest.raises(BackendConfigError) as e:
        FACTORY.create(url)
    assert_user_facing(e.value, BackendConfigError, "/no_such_db", "does not exist", "CREATE DATABASE")


def test_unknown_option_is_a_config_error(server: PostgresProvisioned) -> None:
    with pytest.raises(BackendConfigError) as e:
        FACTORY.create(url_for(server, password=SECRET, pool_size="3"))
    assert_user_facing(e.value, BackendConfigError, "postgresql://lochkit@", "unknown option(s) pool_size")


def test_cockroach_factory_refuses_a_postgres_server(server: PostgresProvisioned) -> None:
    with pytest.raises(BackendConfigError) as e:
        CockroachBackendFactory().create(server.url)
    assert "the server is PostgreSQL 15" in str(e.value) or "the server is PostgreSQL" in str(e.value)
    assert "--backend postgres" in e.value.fix


# --- privileges ----------------------------------------------------------------------------------


def test_user_who_cannot_create_tables(server: PostgresProvisioned, prefix: str) -> None:
    # Since PostgreSQL 15 only the database owner may create in schema public.
    role = make_role(server, "GRANT CONNECT ON DATABASE lochkit TO {role}")
    adapter = adapter_for(url_for(server, role, SECRET), table_prefix=prefix)
    try:
        with pytest.raises(BackendPermissionDenied) as e:
            adapter.setup_schema()
    finally:
        adapter.close()
    assert_user_facing(
        e.value, BackendPermissionDenied, f"postgresql://{role}@", "creating the tables", "permission denied"
    )
    assert "CREATE on the schema" in e.value.fix
    assert f"{prefix}refs" in e.value.fix


def test_user_without_privileges_on_existing_tables(server: PostgresProvisioned, prefix: str) -> None:
    owner = adapter_for(server.url, table_prefix=prefix)
    owner.setup_schema()
    owner.close()
    role = make_role(server)
    adapter = adapter_for(url_for(server, role, SECRET), table_prefix=prefix)
    try:
        with pytest.raises(BackendPermissionDenied) as e:
            adapter.setup_schema()
    finally:
        adapter.close()
    assert_user_facing(e.value, BackendPermissionDenied, role, "checking the tables", f"{prefix}schema")


def test_read_only_user_can_read_but_not_write(server: PostgresProvisioned, prefix: str) -> None:
    owner = adapter_for(server.url, table_prefix=prefix)
    owner.setup_schema()
    owner.close()
    role = make_role(
        server, *(f"GRANT SELECT ON {prefix}{t} TO {{role}}" for t in ("refs", "objs", "schema"))
    )
    adapter = adapter_for(url_for(server, role, SECRET), table_prefix=prefix)
    try:
        assert "found" in adapter.setup_schema()  # existing tables are checked, not re-created
        assert adapter.fetch_refs("repo", ["main"]) == [None]
        with pytest.raises(BackendPermissionDenied) as e:
            adapter.insert_ref("repo", RefRow("main", b"\x01", False, 1, None, b""))
    finally:
        adapter.close()
    assert_user_facing(e.value, BackendPermissionDenied, role, "creating a reference", "INSERT")


# --- schema of another version -------------------------------------------------------------------


def test_tables_of_another_schema_version(server: PostgresProvisioned, prefix: str) -> None:
    adapter = adapter_for(server.url, table_prefix=prefix)
    try:
        assert "created (schema version 1)" in adapter.setup_schema()
        admin(server, f"UPDATE {prefix}schema SET version = 0, written_by = 'lochkit 0.0.1'")
        with pytest.raises(BackendSchemaMismatch) as e:
            adapter.setup_schema()
    finally:
        adapter.close()
    assert_user_facing(
        e.value,
        BackendSchemaMismatch,
        "postgresql://lochkit@",
        "schema version 0 (by lochkit 0.0.1)",
        "uses schema version 1",
    )
    assert "table_prefix" in e.value.fix


def test_tables_from_before_schema_versions(server: PostgresProvisioned, prefix: str) -> None:
    admin(
        server,
        f"CREATE TABLE {prefix}refs (repo TEXT, ref_name TEXT, pointer BYTEA, PRIMARY KEY (repo, ref_name))",
    )
    adapter = adapter_for(server.url, table_prefix=prefix)
    try:
        with pytest.raises(BackendSchemaMismatch) as e:
            adapter.setup_schema()
    finally:
        adapter.close()
    assert_user_facing(
        e.value, BackendSchemaMismatch, "postgresql://lochkit@", f"table {prefix}refs has columns"
    )


def test_changed_columns(server: PostgresProvisioned, prefix: str) -> None:
    adapter = adapter_for(server.url, table_prefix=prefix)
    try:
        adapter.setup_schema()
        admin(server, f"ALTER TABLE {prefix}objs DROP COLUMN obj_vers")
        with pytest.raises(BackendSchemaMismatch) as e:
            adapter.setup_schema()
    finally:
        adapter.close()
    assert_user_facing(
        e.value, BackendSchemaMismatch, "postgresql://lochkit@", f"table {prefix}objs has columns"
    )


def test_tables_never_set_up(server: PostgresProvisioned, prefix: str) -> None:
    adapter = adapter_for(server.url, table_prefix=prefix)
    try:
        with pytest.raises(BackendSchemaMismatch) as e:
            adapter.fetch_objs("repo", [b"\x01"])
    finally:
        adapter.close()
    assert_user_facing(
        e.value, BackendSchemaMismatch, "postgresql://lochkit@", "fetching objects", "does not exist"
    )
    assert "setup_schema()" in e.value.fix


def test_concurrent_schema_setup_has_no_loser(server: PostgresProvisioned, prefix: str) -> None:
    adapters = [adapter_for(server.url, table_prefix=prefix) for _ in range(4)]
    barrier = threading.Barrier(len(adapters))
    outcomes: list[str | BaseException] = []

    def setup(adapter: PostgresAdapter) -> None:
        barrier.wait(10)
        try:
            outcomes.append(adapter.setup_schema())
        except BaseException as e:  # collected and checked below
            outcomes.append(e)

    threads = [threading.Thread(target=setup, args=(a,)) for a in adapters]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    for adapter in adapters:
        adapter.close()
    assert all(isinstance(o, str) for o in outcomes), outcomes
    assert len(outcomes) == len(adapters)
    assert admin(server, f"SELECT count(*) FROM {prefix}schema") == [(1,)]


# --- outcomes of operations ----------------------------------------------------------------------


def terminate_sessions(server: PostgresProvisioned, application_name: str) -> int:
    rows = admin(
        server,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
        application_name,
    )
    return len(rows)


def test_lost_connection_during_a_write_is_an_unknown_result(
    server: PostgresProvisioned, prefix: str
) -> None:
    name = f"lost-{uuid.uuid4().hex[:8]}"
    adapter = adapter_for(server.url, table_prefix=prefix, pool_min=1, pool_max=1, application_name=name)
    try:
        adapter.setup_schema()
        row = RefRow("main", b"\x01", False, 1, None, b"")
        assert adapter.insert_ref("repo", row)
        assert terminate_sessions(server, name) == 1
        with pytest.raises(UnknownOperationResult) as e:
            adapter.update_ref("repo", row, row._replace(pointer=b"\x02"))
        assert "updating a reference may or may not have been applied" in str(e.value)
        assert SECRET not in str(e.value)
        assert str(psycopg.conninfo.conninfo_to_dict(str(server.url))["password"]) not in str(e.value)
        # The pool replaced the broken connection: the retry the message suggests works.
        assert adapter.update_ref("repo", row, row._replace(pointer=b"\x02"))
        # A read on a connection lost meanwhile is simply repeated on a new one.
        assert terminate_sessions(server, name) == 1
        assert adapter.fetch_refs("repo", ["main"]) == [row._replace(pointer=b"\x02")]
    finally:
        adapter.close()


def race(
    admin_url: str,
    call: Callable[[], Any],
    block: Callable[[psycopg.Connection[Any]], object],
    before_commit: Callable[[psycopg.Connection[Any]], object] | None = None,
) -> Any:
    """Run ``call`` while another transaction (``block``, on a superuser connection) holds what it
    needs; that transaction commits after 0.5 s. Returns call's result or raises its error."""
    result: list[Any] = []

    def run() -> None:
        try:
            result.append(call())
        except BaseException as e:  # re-raised in the test's thread
            result.append(e)

    with psycopg.connect(admin_url, dbname="lochkit") as conn:
        block(conn)
        thread = threading.Thread(target=run)
        thread.start()
        time.sleep(0.5)
        if before_commit is not None:
            before_commit(conn)
        conn.commit()
    thread.join(30)
    if isinstance(result[0], BaseException):
        raise result[0]
    return result[0]


@pytest.mark.parametrize("max_retries", [8, 0])
def test_serialization_failures_are_retried(
    server: PostgresProvisioned, prefix: str, max_retries: int
) -> None:
    """Under SERIALIZABLE, an UPDATE of a row another transaction changed after our snapshot fails
    with 40001; the adapter runs it again (a new snapshot), unless retries are switched off."""
    adapter = adapter_for(
        server.url,
        table_prefix=prefix,
        max_retries=max_retries,
        options="-c default_transaction_isolation=serializable",
    )
    try:
        adapter.setup_schema()
        row = RefRow("main", b"\x01", False, 1, None, b"")
        adapter.insert_ref("repo", row)

        def touch_history(conn: psycopg.Connection[Any]) -> None:  # not part of the CAS condition
            conn.execute(f"UPDATE {prefix}refs SET prev_ptr = '\\x99'::bytea WHERE ref_name = 'main'")

        def update() -> bool:
            return adapter.update_ref("repo", row, row._replace(pointer=b"\x02"))

        if max_retries:
            assert race(server.admin_url, update, touch_history) is True
            assert adapter.fetch_refs("repo", ["main"])[0] == row._replace(pointer=b"\x02")
        else:
            with pytest.raises(UnknownOperationResult) as e:
                race(server.admin_url, update, touch_history)
            assert "was aborted for conflicting concurrent transactions 1 times" in str(e.value)
            assert "could not serialize access" in str(e.value)
    finally:
        adapter.close()


@pytest.mark.parametrize("max_retries", [8, 0])
def test_deadlocks_are_retried(server: PostgresProvisioned, prefix: str, max_retries: int) -> None:
    """insert_objs inserts A then B; another transaction holds B and then waits for A: a deadlock.
    The other side waits longer before checking (deadlock_timeout), so PostgreSQL aborts ours."""
    adapter = adapter_for(server.url, table_prefix=prefix, max_retries=max_retries)
    a, b = (ObjRow(bytes([i]) * 32, "s", None, b"data", 7) for i in (1, 2))
    try:
        adapter.setup_schema()
        insert = (
            f"INSERT INTO {prefix}objs (repo, obj_id, obj_type, obj_vers, obj_value, obj_ref) "
            "VALUES (%s, %s, 's', NULL, 'x', 1)"
        )
        done = threading.Event()

        def want_a(conn: psycopg.Connection[Any]) -> None:
            time.sleep(0.2)  # by now the adapter holds A and waits for B
            conn.execute(insert, ["repo", a.obj_id])
            done.set()

        def hold_b_then_want_a(conn: psycopg.Connection[Any]) -> None:
            conn.execute("SET deadlock_timeout = '10s'")
            conn.execute(insert, ["repo", b.obj_id])
            threading.Thread(target=want_a, args=(conn,)).start()

        if max_retries:
            assert race(
                server.admin_url, lambda: adapter.insert_objs("repo", [b, a]), hold_b_then_want_a
            ) == [False, False]
        else:
            with pytest.raises(UnknownOperationResult, match="deadlock detected"):
                race(server.admin_url, lambda: adapter.insert_objs("repo", [b, a]), hold_b_then_want_a)
        assert done.wait(10)
    finally:
        adapter.close()


def test_object_deleted_between_insert_and_bump_is_inserted_again(
    server: PostgresProvisioned, prefix: str
) -> None:
    """insert_objs finds the row existing, then (while it waits to bump "referenced") a concurrent
    transaction deletes it: the row is inserted again, so it exists afterwards, and reported new."""
    adapter = adapter_for(server.url, table_prefix=prefix)
    row = ObjRow(b"\x05" * 32, "s", None, b"new data", 9)
    try:
        adapter.setup_schema()
        adapter.insert_objs("repo", [row._replace(data=b"old data", referenced=1)])
        where = f"FROM {prefix}objs WHERE repo = 'repo'"
        inserted = race(
            server.admin_url,
            lambda: adapter.insert_objs("repo", [row]),
            lambda conn: conn.execute(f"SELECT 1 {where} FOR UPDATE").fetchall(),
            lambda conn: conn.execute(f"DELETE {where}"),
        )
        assert inserted == [True]
        assert adapter.fetch_objs("repo", [row.obj_id]) == [row]
    finally:
        adapter.close()


def test_cancelled_statements(server: PostgresProvisioned, prefix: str) -> None:
    """statement_timeout cancels a statement stuck behind a lock: for a write the outcome is
    reported unknown, for a read the server is reported unavailable."""
    adapter = adapter_for(server.url, table_prefix=prefix, options="-c statement_timeout=200")
    row = RefRow("main", b"\x01", False, 1, None, b"")
    try:
        adapter.setup_schema()
        adapter.insert_ref("repo", row)
        with psycopg.connect(server.admin_url, dbname="lochkit") as conn:
            conn.execute(f"LOCK TABLE {prefix}refs IN ACCESS EXCLUSIVE MODE")
            with pytest.raises(UnknownOperationResult, match="canceling statement due to statement timeout"):
                adapter.update_ref("repo", row, row._replace(pointer=b"\x02"))
            with pytest.raises(BackendUnavailable) as e:
                adapter.fetch_refs("repo", ["main"])
            conn.rollback()
        assert_user_facing(
            e.value, BackendUnavailable, "postgresql://lochkit@", "cancelled", "statement timeout"
        )
        assert adapter.fetch_refs("repo", ["main"]) == [row]
    finally:
        adapter.close()


# --- chunking and scans --------------------------------------------------------------------------


def test_long_lists_are_chunked(server: PostgresProvisioned, prefix: str) -> None:
    """More ids, rows and repositories than one statement carries (1000 ids, 500 rows)."""
    adapter = adapter_for(server.url, table_prefix=prefix)
    rows = [ObjRow(i.to_bytes(4, "big"), "s", None, b"x" * 10, 1) for i in range(2600)]
    ids = [r.obj_id for r in rows]
    try:
        adapter.setup_schema()
        assert adapter.insert_objs("repo", rows) == [True] * len(rows)
        assert adapter.insert_objs("repo", [r._replace(referenced=2) for r in rows]) == [False] * len(rows)
        fetched = adapter.fetch_objs("repo", [b"missing", *reversed(ids)])
        assert fetched[0] is None
        assert fetched[1:] == [r._replace(referenced=2) for r in reversed(rows)]
        names = [f"refs/heads/b{i}" for i in range(1500)]
        for name in names[:3]:
            adapter.insert_ref("repo", RefRow(name, b"\x01", False, 1, None, b""))
        assert [r is not None for r in adapter.fetch_refs("repo", names)] == [True] * 3 + [False] * 1497
        adapter.delete_objs("repo", ids[:2100])
        assert sum(r is not None for r in adapter.fetch_objs("repo", ids)) == 500
        adapter.erase_repositories([f"other-{i}" for i in range(1500)] + ["repo"])
        assert adapter.fetch_objs("repo", ids) == [None] * len(ids)
    finally:
        adapter.close()


def test_closing_a_half_read_scan_frees_its_connection(server: PostgresProvisioned, prefix: str) -> None:
    adapter = adapter_for(server.url, table_prefix=prefix, pool_min=1, pool_max=1, pool_timeout=2)
    try:
        adapter.setup_schema()
        adapter.insert_objs(
            "repo", [ObjRow(i.to_bytes(2, "big"), "s", None, b"x", 1) for i in range(1, 2000)]
        )
        scan = adapter.scan_objs("repo", None)
        assert next(scan).obj_type == "s"
        with pytest.raises(BackendUnavailable):  # the only connection is held by the open cursor
            adapter.fetch_refs("repo", ["main"])
        scan.close()
        assert adapter.fetch_refs("repo", ["main"]) == [None]
        assert len(list(adapter.scan_objs("repo", frozenset({"s", "t"})))) == 1999
        assert list(adapter.scan_objs("repo", frozenset({"t"}))) == []
    finally:
        adapter.close()


# --- the provisioner -----------------------------------------------------------------------------


def test_local_process_starts_and_stops_cleanly(tmp_path: Path) -> None:
    started = time.monotonic()
    provisioned = PROVISIONER.local_process("postgres", tmp_path)
    startup = time.monotonic() - started
    port = int(str(psycopg.conninfo.conninfo_to_dict(str(provisioned.url))["port"]))
    try:
        assert provisioned.method == "local-process"
        assert "PostgreSQL" in provisioned.server
        assert "fsync=off" in provisioned.server
        password = str(psycopg.conninfo.conninfo_to_dict(str(provisioned.url))["password"])
        assert password not in provisioned.describe()
        assert "?passfile=" in provisioned.describe()  # an address that works when pasted
        assert port_answers(port)
        assert startup < 30
    finally:
        provisioned.stop()
    assert not port_answers(port)
    assert not (tmp_path / "postgres").exists()


def test_conformance_with_a_wrong_password_ends_with_the_cause_and_its_fix(
    server: PostgresProvisioned,
) -> None:
    """A run against a server that refuses the password: one error in full, the other tests
    blocked at once, and the last lines say what is wrong and what to do (no traceback)."""
    lochkit = str(Path(sys.executable).with_name("lochkit"))
    url = url_for(server, password="not-" + SECRET)
    done = subprocess.run(
        [lochkit, "conformance", "--backend", "postgres", "--url", url, "-k", "TestPersistReferences"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1
    out = done.stdout + done.stderr
    assert SECRET not in out
    assert "Traceback" not in out
    assert len(done.stdout.splitlines()) < 40, done.stdout
    tail = done.stdout.splitlines()[-4:]
    assert tail[0] == "postgres could not be set up, so its 11 tests failed without running:"
    assert "the server rejected the credentials" in tail[1]
    assert tail[2].startswith("  fix: Check the user name and password in the URL")
    assert re.fullmatch(r"=* ?\d+ deselected, 1 error, 10 blocked in [\d.]+s ?=*", tail[3])
