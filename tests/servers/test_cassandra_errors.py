"""The errors a user of the cassandra backend meets, produced by a real Apache Cassandra node that the
provisioner starts for this module (PasswordAuthenticator and CassandraAuthorizer on): server down,
wrong or missing credentials, missing permissions, tables of another lochkit version or of another
program, tables not set up, and a request whose outcome is unknown. Every message must name the
backend and address, say what to do, and never show a password. Also checked here against the
server: consistency levels of every statement, and that an erase followed at once by a re-insert is
never shadowed by the erase's tombstones."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from backends.cassandra import CassandraBackendFactory
from backends.cassandra.adapter import CassandraAdapter
from persist_spi.adapter import ObjRow, RefRow
from persist_spi.errors import (
    BackendAuthenticationFailed,
    BackendError,
    BackendPermissionDenied,
    BackendSchemaMismatch,
    BackendStoreMissing,
    BackendUnavailable,
    UnknownOperationResult,
)
from provisioning.base import Provisioned
from provisioning.servers.cassandra import PROVISIONER, VERSION
from provisioning.servers.process import free_port

pytest.importorskip("cassandra")

FACTORY = CassandraBackendFactory()
SECRET = "Very$ecret-" + uuid.uuid4().hex


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provisioned]:
    provisioned = PROVISIONER.local_process("cassandra", tmp_path_factory.mktemp("cassandra-errors"))
    try:
        yield provisioned
    finally:
        provisioned.stop()


@pytest.fixture(scope="module")
def port(server: Provisioned) -> int:
    assert server.url is not None
    return int(server.url.rsplit(":", 1)[1].split("/", 1)[0])


@pytest.fixture(scope="module")
def admin(server: Provisioned) -> Iterator[CassandraAdapter]:
    """The superuser, on the provisioner's keyspace, with the schema set up."""
    adapter = FACTORY.create(server.url)
    adapter.setup_schema()
    try:
        yield adapter
    finally:
        adapter.close()


@pytest.fixture
def keyspace() -> str:
    return f"k{uuid.uuid4().hex[:12]}"


def url(
    port: int, keyspace: str = "lochkit", user: str | None = "cassandra", password: str = "cassandra"
) -> str:
    credentials = f"{user}:{password}@" if user else ""
    return f"cassandra://{credentials}127.0.0.1:{port}/{keyspace}?connect_timeout=5"


def make_role(admin: CassandraAdapter, *grants: str) -> str:
    """A login role with password SECRET and only the given grants (``{role}`` is filled in)."""
    role = f"r{uuid.uuid4().hex[:10]}"
    admin.execute(f"CREATE ROLE {role} WITH PASSWORD = %s AND LOGIN = true", (SECRET,), "create role")
    for grant in grants:
        admin.execute(grant.format(role=role), (), "grant")
    return role


def create_keyspace(admin: CassandraAdapter, keyspace: str) -> None:
    replication = "{'class': 'SimpleStrategy', 'replication_factor': 1}"
    admin.execute(f"CREATE KEYSPACE {keyspace} WITH replication = {replication}", (), "create keyspace")


def expect(error: type[BackendError], action: Callable[[], Any], *fragments: str) -> BackendError:
    with pytest.raises(error) as caught:
        action()
    text = str(caught.value)
    assert SECRET not in text, "the password leaked into an error message"
    assert caught.value.backend == "cassandra"
    assert caught.value.fix
    for fragment in fragments:
        assert fragment in text, f"{fragment!r} not in: {text}"
    return caught.value


def _obj(obj_id: bytes, referenced: int = 1) -> ObjRow:
    return ObjRow(obj_id, "c", None, b"value", referenced)


# --- connecting --------------------------------------------------------------------------------------


def test_server_down_is_unavailable() -> None:
    dead = free_port()
    error = expect(
        BackendUnavailable,
        lambda: FACTORY.create(url(dead, password=SECRET)),
        f"cassandra://cassandra@127.0.0.1:{dead}/lochkit",
        "no node answered",
    )
    assert "running" in error.fix


def test_wrong_password_is_an_authentication_failure(port: int) -> None:
    expect(
        BackendAuthenticationFailed,
        lambda: FACTORY.create(url(port, password=SECRET)),
        f"cassandra://cassandra@127.0.0.1:{port}/lochkit",
        "rejected the user name or password",
    )


def test_missing_credentials_are_an_authentication_failure(port: int) -> None:
    expect(BackendAuthenticationFailed, lambda: FACTORY.create(url(port, user=None)), "requires a user name")


# --- permissions -------------------------------------------------------------------------------------


def test_role_without_create_permission_cannot_set_up_a_keyspace(
    admin: CassandraAdapter, port: int, keyspace: str
) -> None:
    role = make_role(admin)
    adapter = FACTORY.create(url(port, keyspace, role, SECRET))
    try:
        expect(
            BackendPermissionDenied,
            adapter.setup_schema,
            f"cassandra://{role}@127.0.0.1:{port}/{keyspace}",
            f"create keyspace {keyspace} was refused",
        )
    finally:
        adapter.close()


def test_read_only_role_can_read_but_not_write(admin: CassandraAdapter, port: int) -> None:
    role = make_role(admin, "GRANT SELECT ON KEYSPACE lochkit TO {role}")
    adapter = FACTORY.create(url(port, "lochkit", role, SECRET))
    try:
        assert adapter.fetch_refs("perm", ["main"]) == [None]
        error = expect(
            BackendPermissionDenied,
            lambda: adapter.insert_ref("perm", RefRow("main", b"\1" * 32, False, 1, None, b"")),
            "was refused",
        )
        assert "MODIFY" in error.fix
        expect(BackendPermissionDenied, adapter.setup_schema, "record the schema version was refused")
    finally:
        adapter.close()


# --- schema ------------------------------------------------------------------------------------------


def test_tables_of_another_schema_version_are_refused(
    admin: CassandraAdapter, port: int, keyspace: str
) -> None:
    first = FACTORY.create(url(port, keyspace))
    try:
        first.setup_schema()
        admin.execute(f"UPDATE {keyspace}.lochkit_schema SET version = 99 WHERE name = 'lochkit'", (), "age")
        expect(BackendSchemaMismatch, first.setup_schema, "schema version 99", keyspace)
    finally:
        first.close()


def test_foreign_tables_with_the_same_name_are_refused(
    admin: CassandraAdapter, port: int, keyspace: str
) -> None:
    create_keyspace(admin, keyspace)
    # Nessie's first Cassandra schema kept object ids as hex text.
    admin.execute(
        f"CREATE TABLE {keyspace}.objs (repo text, obj_id ascii, PRIMARY KEY ((repo, obj_id)))", (), "t"
    )
    adapter = FACTORY.create(url(port, keyspace))
    try:
        error = expect(BackendSchemaMismatch, adapter.setup_schema, f"{keyspace}.objs", "obj_id")
        assert "keyspace" in error.fix
    finally:
        adapter.close()


def test_operations_before_setup_name_the_fix(admin: CassandraAdapter, port: int, keyspace: str) -> None:
    create_keyspace(admin, keyspace)
    adapter = FACTORY.create(url(port, keyspace))
    try:
        error = expect(BackendSchemaMismatch, lambda: adapter.fetch_objs("r", [b"x"]), "do not exist")
        assert "setup" in error.fix
    finally:
        adapter.close()


def test_setup_is_idempotent_and_reports_the_layout(admin: CassandraAdapter) -> None:
    text = admin.setup_schema()
    assert "existing" in text
    assert "schema version 1" in text
    assert admin.server_version() == f"Apache Cassandra {VERSION}"


# --- outcomes and consistency -----------------------------------------------------------------------


def test_a_request_that_times_out_has_an_unknown_outcome(admin: CassandraAdapter, port: int) -> None:
    hasty = FACTORY.create(url(port) + "&timeout=0.000001")
    try:
        with pytest.raises(UnknownOperationResult) as caught:
            hasty.insert_objs("unknown", [_obj(os.urandom(32))])
        assert "cassandra" in str(caught.value)
        assert "cassandra:cassandra@" not in str(caught.value)
    finally:
        hasty.close()


def test_every_statement_runs_at_local_quorum_and_local_serial(admin: CassandraAdapter) -> None:
    from cassandra import ConsistencyLevel

    repo = f"cl-{uuid.uuid4().hex[:8]}"
    ref = RefRow("main", b"\1" * 32, False, 1, None, b"")
    obj = ObjRow(os.urandom(32), "x", "v1", b"data", 5)
    admin.insert_ref(repo, ref)
    admin.update_ref(repo, ref, ref._replace(deleted=True))
    admin.delete_ref(repo, ref._replace(deleted=True))
    admin.fetch_refs(repo, ["main"])
    admin.insert_objs(repo, [obj])
    admin.insert_objs(repo, [obj])
    admin.upsert_objs(repo, [obj])
    admin.update_obj_if_version(repo, "x", "v1", obj._replace(version_token="v2"))
    admin.delete_obj_if_version(repo, obj.obj_id, "x", "v2")
    admin.delete_obj_if_referenced(repo, obj.obj_id, 5)
    admin.delete_objs(repo, [obj.obj_id])
    list(admin.scan_objs(repo, None))
    admin.erase_repositories([repo])
    statements = admin._prepared
    assert len(statements) >= 15
    for cql, statement in statements.items():
        assert statement.consistency_level == ConsistencyLevel.LOCAL_QUORUM, cql
        assert statement.serial_consistency_level == ConsistencyLevel.LOCAL_SERIAL, cql


def test_reinserting_right_after_an_erase_is_never_shadowed(
    admin: CassandraAdapter, server: Provisioned
) -> None:
    """Erase deletes rows with plain (non-LWT) deletes and re-inserts are LWTs: with client
    timestamps a skewed or same-microsecond clock could let the tombstone win. A second connection
    does the re-inserts, as another process would."""
    other = FACTORY.create(server.url)
    try:
        repo = f"shadow-{uuid.uuid4().hex[:8]}"
        ids = [os.urandom(32) for _ in range(5)]
        ref = RefRow("main", b"\1" * 32, False, 1, None, b"")
        for round_ in range(40):
            admin.erase_repositories([repo])
            assert other.insert_objs(repo, [_obj(i, round_ + 1) for i in ids]) == [True] * 5
            assert other.insert_ref(repo, ref)
            assert all(row is not None for row in admin.fetch_objs(repo, ids)), f"round {round_}"
            assert admin.fetch_refs(repo, ["main"]) == [ref], f"round {round_}"
        assert sorted(r.obj_id for r in admin.scan_objs(repo, None)) == sorted(ids)
        admin.erase_repositories([repo])
    finally:
        other.close()


def test_scan_and_erase_page_through_a_large_directory(admin: CassandraAdapter) -> None:
    """More directory entries than one page (1,000) and than one scan step (400)."""
    repo = f"big-{uuid.uuid4().hex[:8]}"
    rows = [ObjRow(os.urandom(32), "c" if i % 3 else "v", None, b"x", 1) for i in range(2345)]
    admin.upsert_objs(repo, rows)
    assert len(list(admin.scan_objs(repo, None))) == 2345
    assert {r.obj_id for r in admin.scan_objs(repo, frozenset({"v"}))} == {
        r.obj_id for r in rows if r.obj_type == "v"
    }
    admin.erase_repositories([repo])
    assert list(admin.scan_objs(repo, None)) == []
    assert admin.fetch_objs(repo, [r.obj_id for r in rows[:50]]) == [None] * 50


# --- Nessie's layout (layout=nessie) -----------------------------------------------------------------


def nessie_url(port: int, keyspace: str) -> str:
    return url(port, keyspace) + "&layout=nessie"


def test_nessie_layout_requires_its_keyspace_to_exist(
    admin: CassandraAdapter, port: int, keyspace: str
) -> None:
    adapter = FACTORY.create(nessie_url(port, keyspace))
    try:
        error = expect(BackendStoreMissing, adapter.setup_schema, f"keyspace {keyspace} does not exist")
        assert "create_keyspace=true" in error.fix
    finally:
        adapter.close()
    found = admin.execute(
        "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = %s", (keyspace,), "look"
    )
    assert found.one() is None, "nothing was created"


def test_nessie_layout_keeps_nessies_tables_and_nulls(
    admin: CassandraAdapter, port: int, keyspace: str
) -> None:
    """Only refs2 / objs2 in the keyspace; no history, no extended info and no version token are
    null, created_at 0 is written; a reference row as Nessie writes it (nulls bound explicitly) is
    read and moved by lochkit's compare-and-swap."""
    create_keyspace(admin, keyspace)
    adapter = FACTORY.create(nessie_url(port, keyspace))
    try:
        adapter.setup_schema()
        tables = admin.execute(
            "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", (keyspace,), "tables"
        )
        assert sorted(row[0] for row in tables) == ["objs2", "refs2"]
        ref = RefRow("main", b"\1" * 32, False, 0, None, b"")
        assert adapter.insert_ref("nl", ref)
        assert adapter.update_ref("nl", ref, ref._replace(pointer=b"\2" * 32))
        assert adapter.insert_objs("nl", [_obj(b"\3" * 32, 17)]) == [True]
        stored = admin.execute(
            f"SELECT created_at, ext_info, prev_ptr FROM {keyspace}.refs2 "
            "WHERE repo = 'nl' AND ref_name = 'main'",
            (),
            "read",
        ).one()
        assert tuple(stored) == (0, None, None)
        obj = admin.execute(
            f"SELECT obj_vers, obj_ref FROM {keyspace}.objs2 WHERE repo = 'nl' ALLOW FILTERING", (), "read"
        )
        assert tuple(obj.one()) == (None, 17)
        admin.execute(
            f"INSERT INTO {keyspace}.refs2 "
            "(repo, ref_name, pointer, deleted, created_at, ext_info, prev_ptr) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s)",
            ("nl", "written-by-nessie", b"\4" * 32, False, 0, None, None),
            "insert as Nessie does",
        )
        [found] = adapter.fetch_refs("nl", ["written-by-nessie"])
        assert found == RefRow("written-by-nessie", b"\4" * 32, False, 0, None, b"")
        assert adapter.update_ref("nl", found, found._replace(pointer=b"\5" * 32))
        assert sorted(adapter.list_repositories()) == ["nl"]
        assert [row.obj_id for row in adapter.scan_objs("nl", None)] == [b"\3" * 32]
        adapter.erase_repositories(["nl"])
        assert list(adapter.scan_objs("nl", None)) == []
        assert adapter.fetch_refs("nl", ["main", "written-by-nessie"]) == [None, None]
    finally:
        adapter.close()


def test_nessie_layout_checks_tables_as_nessie_does(
    admin: CassandraAdapter, port: int, keyspace: str
) -> None:
    create_keyspace(admin, keyspace)
    # Extra columns are fine; a partition key of another type is not.
    admin.execute(
        f"CREATE TABLE {keyspace}.refs2 (repo text, ref_name text, pointer blob, deleted boolean, "
        "created_at bigint, ext_info blob, prev_ptr blob, note text, PRIMARY KEY ((repo, ref_name)))",
        (),
        "t",
    )
    admin.execute(
        f"CREATE TABLE {keyspace}.objs2 (repo text, obj_id text, obj_type text, obj_vers text, "
        "obj_value blob, obj_ref bigint, PRIMARY KEY ((repo, obj_id)))",
        (),
        "t",
    )
    adapter = FACTORY.create(nessie_url(port, keyspace))
    try:
        error = expect(BackendSchemaMismatch, adapter.setup_schema, f"{keyspace}.objs2", "obj_id text")
        assert "never alters" in error.fix
    finally:
        adapter.close()
