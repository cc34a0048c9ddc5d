"""The errors a user of the mongodb backend meets, produced by real FerretDB processes that this
module starts (one plain, one with authentication): server down, wrong or missing credentials, data
of another lochkit version, a write cut off by a timeout, a server that stops mid-session, and bad
settings. Every message must name the backend and the address, say what to do, and never show a
password. A user without permissions cannot be produced here (FerretDB 1.x has no authorization,
shown below); that mapping is unit-tested with mongod's error."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote_plus

import pytest
from pymongo import MongoClient

from backends.mongodb import MongoBackendFactory
from backends.mongodb.adapter import MongoAdapter
from backends.mongodb.schema import SCHEMA_VERSION
from persist_spi.adapter import ObjRow, RefRow
from persist_spi.errors import (
    BackendAuthenticationFailed,
    BackendConfigError,
    BackendError,
    BackendSchemaMismatch,
    BackendUnavailable,
    UnknownOperationResult,
)
from provisioning.servers.mongodb import FerretDB, start_ferretdb
from provisioning.servers.process import free_port

FACTORY = MongoBackendFactory()
USER = "lochkit-admin"
SECRET = "Very$ecret:@/-" + uuid.uuid4().hex


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FerretDB]:
    ferret = start_ferretdb(tmp_path_factory.mktemp("ferretdb"))
    try:
        yield ferret
    finally:
        ferret.stop()


@pytest.fixture(scope="module")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FerretDB]:
    ferret = start_ferretdb(tmp_path_factory.mktemp("ferretdb-auth"), user=USER, password=SECRET)
    try:
        yield ferret
    finally:
        ferret.stop()


@pytest.fixture
def prefix() -> str:
    """Fresh collections per test, so tests cannot see each other's schema."""
    return f"t{uuid.uuid4().hex[:8]}_"


def _open(url: str, prefix: str) -> MongoAdapter:
    adapter = FACTORY.create(url, {"collection_prefix": prefix})
    adapter.setup_schema()
    return adapter


def assert_helpful(error: BackendError, *, secret: str = SECRET) -> None:
    text = f"{error} {error!r} {error.address}"
    assert error.backend == "mongodb"
    assert error.address.startswith("mongodb://127.0.0.1:")
    assert str(error).startswith(f"mongodb at {error.address}: ")
    assert error.fix
    assert secret not in text
    assert quote_plus(secret) not in text


def test_connects_to_ferretdb_and_declares_what_it_can(server: FerretDB, prefix: str) -> None:
    adapter = _open(server.url, prefix)
    try:
        assert adapter.is_ferretdb
        assert (adapter.server_version() or "").startswith("FerretDB v1.24.2")
        assert adapter.capabilities.multi_process is False  # see backends/mongodb/capabilities.py
        assert adapter.capabilities.hard_object_size_limit == FACTORY.capabilities.hard_object_size_limit
        assert adapter.setup_schema().endswith(f"(schema version {SCHEMA_VERSION})")  # idempotent
    finally:
        adapter.close()


def test_scans_and_erasure_have_a_repository_index(server: FerretDB, prefix: str) -> None:
    _open(server.url, prefix).close()
    client: MongoClient[dict[str, object]] = MongoClient(server.url)
    try:
        db = client["lochkit"]
        objs = [list(i["key"].items()) for i in db[f"{prefix}objs"].list_indexes()]
        refs = [list(i["key"].items()) for i in db[f"{prefix}refs"].list_indexes()]
    finally:
        client.close()
    assert [("r", 1), ("y", 1)] in objs
    assert [("r", 1)] in refs


def test_a_repository_of_more_objects_than_sqlite_takes_variables_is_erased(
    server: FerretDB, prefix: str
) -> None:
    """FerretDB deletes what a filter matches with one SQLite variable per document; SQLite takes
    at most 32,766, and a plain ``delete_many`` of 33,000 objects failed with "too many SQL
    variables"."""
    adapter = _open(server.url, prefix)
    try:
        rows = [ObjRow(i.to_bytes(32, "big"), "c", None, b"x", 1) for i in range(33_000)]
        for start in range(0, len(rows), 5_000):
            chunk = rows[start : start + 5_000]
            assert adapter.insert_objs("big", chunk) == [True] * len(chunk)
        assert adapter.insert_objs("kept", rows[:3]) == [True] * 3
        adapter.erase_repositories(["big"])
        assert adapter.fetch_objs("big", [rows[0].obj_id, rows[-1].obj_id]) == [None, None]
        assert sum(1 for _ in adapter.scan_objs("big", None)) == 0
        assert adapter.fetch_objs("kept", [r.obj_id for r in rows[:3]]) == rows[:3]
    finally:
        adapter.erase_repositories(["kept"])
        adapter.close()


def test_server_down(prefix: str) -> None:
    url = f"mongodb://{USER}:{quote_plus(SECRET)}@127.0.0.1:{free_port()}/"
    started = time.monotonic()
    with pytest.raises(BackendUnavailable) as e:
        FACTORY.create(url, {"collection_prefix": prefix})
    assert time.monotonic() - started < 15  # lochkit's short server selection timeout, not 30 s
    assert_helpful(e.value)
    assert "start the server" in e.value.fix


def test_wrong_password(auth_server: FerretDB, prefix: str) -> None:
    wrong = "not-" + SECRET
    url = f"mongodb://{USER}:{quote_plus(wrong)}@127.0.0.1:{auth_server.port}/"
    with pytest.raises(BackendAuthenticationFailed) as e:
        FACTORY.create(url, {"collection_prefix": prefix})
    assert_helpful(e.value, secret=wrong)
    assert "Authentication failed" in str(e.value)


def test_missing_credentials(auth_server: FerretDB, prefix: str) -> None:
    with pytest.raises(BackendAuthenticationFailed) as e:
        FACTORY.create(auth_server.url, {"collection_prefix": prefix})
    assert_helpful(e.value)
    assert "requires authentication" in str(e.value)


def test_right_password_works_and_stays_hidden(auth_server: FerretDB, prefix: str) -> None:
    url = f"mongodb://{USER}:{quote_plus(SECRET)}@127.0.0.1:{auth_server.port}/?authSource=admin"
    adapter = _open(url, prefix)
    try:
        assert adapter.insert_ref("repo", RefRow("main", b"\x01", False, 1, None, b""))
        assert SECRET not in adapter.address
        assert quote_plus(SECRET) not in adapter.address
    finally:
        adapter.close()


def test_ferretdb_has_no_authorization(auth_server: FerretDB) -> None:
    """Why BackendPermissionDenied is not exercised here: a user with no roles may still write."""
    admin_url = f"mongodb://{USER}:{quote_plus(SECRET)}@127.0.0.1:{auth_server.port}/"
    name = f"u{uuid.uuid4().hex[:8]}"
    admin: MongoClient[dict[str, object]] = MongoClient(admin_url)
    admin.admin.command("createUser", name, pwd="pw", roles=[])
    weak: MongoClient[dict[str, object]] = MongoClient(f"mongodb://{name}:pw@127.0.0.1:{auth_server.port}/")
    try:
        assert weak["lochkit"]["anything"].insert_one({"x": 1}).acknowledged
    finally:
        weak.close()
        admin.close()


def test_data_of_another_schema_version(server: FerretDB, prefix: str) -> None:
    _open(server.url, prefix).close()
    client: MongoClient[dict[str, object]] = MongoClient(server.url)
    client["lochkit"][f"{prefix}meta"].update_one({"_id": "schema"}, {"$set": {"version": 999}})
    client.close()
    with pytest.raises(BackendSchemaMismatch) as e:
        FACTORY.create(server.url, {"collection_prefix": prefix})
    assert_helpful(e.value)
    assert "schema version 999" in str(e.value)


def test_foreign_data_without_a_version_marker(server: FerretDB, prefix: str) -> None:
    client: MongoClient[dict[str, object]] = MongoClient(server.url)
    client["lochkit"][f"{prefix}objs"].insert_one({"_id": "written by something else"})
    client.close()
    with pytest.raises(BackendSchemaMismatch) as e:
        FACTORY.create(server.url, {"collection_prefix": prefix})
    assert "no schema version" in str(e.value)


def test_write_cut_off_by_a_timeout_has_an_unknown_outcome(server: FerretDB, prefix: str) -> None:
    _open(server.url, prefix).close()
    adapter = FACTORY.create(f"{server.url}?socketTimeoutMS=1", {"collection_prefix": prefix})
    rows = [ObjRow(os.urandom(32), "c", None, os.urandom(512 * 1024), 1) for _ in range(16)]
    try:
        with pytest.raises(UnknownOperationResult) as e:
            adapter.upsert_objs("repo", rows)
        assert "may or may not have been applied" in str(e.value)
    finally:
        adapter.close()


def test_server_stopping_mid_session(tmp_path: Path, prefix: str) -> None:
    ferret = start_ferretdb(tmp_path)
    adapter = _open(ferret.url, prefix)
    try:
        assert adapter.insert_ref("repo", RefRow("main", b"\x01", False, 1, None, b""))
        ferret.stop()
        # The first calls may still use pooled connections (refused: outcome unknown, retryable);
        # once the driver has marked the server down, calls fail with BackendUnavailable.
        seen: list[Exception] = []
        for _ in range(3):
            with pytest.raises((BackendUnavailable, UnknownOperationResult)) as e:
                adapter.insert_ref("repo", RefRow("other", b"\x01", False, 1, None, b""))
            seen.append(e.value)
        assert isinstance(seen[-1], BackendUnavailable)
        assert_helpful(seen[-1])
    finally:
        adapter.close()
        ferret.stop()


@pytest.mark.parametrize(
    ("query", "options", "problem"),
    [
        ("?nosuchoption=1", None, "Unknown option"),
        ("", {"prefix": "x_"}, "unknown option(s) prefix"),
        ("?collection_prefix=bad$prefix", None, "invalid collection_prefix"),
    ],
)
def test_bad_settings(server: FerretDB, query: str, options: dict[str, str] | None, problem: str) -> None:
    url = f"mongodb://{USER}:{quote_plus(SECRET)}@127.0.0.1:{server.port}/{query}"
    with pytest.raises(BackendConfigError) as e:
        FACTORY.create(url, options)
    assert problem in str(e.value)
    assert SECRET not in str(e.value)
    assert quote_plus(SECRET) not in str(e.value)
