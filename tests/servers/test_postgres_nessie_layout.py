"""Nessie's layout (``layout=nessie``) on a real PostgreSQL: tables created first with Nessie's own
DDL, as a Nessie server creates them, are opened, written and read; Nessie's NULL conventions hold
in the rows; tables that are not Nessie's are refused clearly; and both layouts share one database.

Each test works in a schema of its own (libpq's ``options=-csearch_path=...``), because Nessie's
table names are fixed."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest

from backends.postgres import PostgresBackendFactory
from backends.postgres.adapter import PostgresAdapter
from conformance.rows import obj_row
from persist_spi.adapter import ObjRow, RefRow
from persist_spi.config import StoreConfig
from persist_spi.errors import BackendSchemaMismatch, BackendStoreMissing
from persist_spi.layouts import NESSIE_LAYOUT
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.objs import tag_obj
from persist_spi.opening import open_persist
from persist_spi.versionstore.content import ContentKey, IcebergTable, Namespace
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch
from persist_spi.versionstore.store import VersionStore
from provisioning.servers.postgres import PROVISIONER, PostgresProvisioned

LOCHKIT = str(Path(sys.executable).with_name("lochkit"))
FACTORY = PostgresBackendFactory()
POINTER = b"\x01" * 32
EXT = b"\x02" * 32

#: Nessie 0.99's DDL for PostgreSQL, as its Jdbc2Backend builds it.
NESSIE_REFS_DDL = """CREATE TABLE refs2 (
    repo VARCHAR COLLATE ucs_basic, ref_name VARCHAR COLLATE ucs_basic,
    pointer BYTEA, ext_info BYTEA, prev_ptr BYTEA,
    created_at BIGINT DEFAULT 0, deleted BOOLEAN,
    PRIMARY KEY (repo, ref_name))"""
NESSIE_OBJS_DDL = """CREATE TABLE objs2 (
    repo VARCHAR COLLATE ucs_basic, obj_id BYTEA, obj_type VARCHAR COLLATE ucs_basic,
    obj_vers VARCHAR COLLATE ucs_basic, obj_value BYTEA, obj_ref BIGINT,
    PRIMARY KEY (repo, obj_id))"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresProvisioned]:
    provisioned = PROVISIONER.local_process("postgres", tmp_path_factory.mktemp("postgres-nessie-layout"))
    try:
        yield provisioned
    finally:
        provisioned.stop()


class Schema:
    """A fresh schema of the test database, and URLs whose sessions work in it."""

    def __init__(self, server: PostgresProvisioned) -> None:
        self.server_url = server.url or ""
        self.name = f"nl{uuid.uuid4().hex[:8]}"
        self.sql(f"CREATE SCHEMA {self.name}")

    def url(self, **options: str) -> str:
        query = "&".join(f"{k}={quote(v, safe='')}" for k, v in options.items())
        search_path = quote(f"-csearch_path={self.name}", safe="")
        return f"{self.server_url}{'&' if '?' in self.server_url else '?'}options={search_path}&{query}"

    def sql(self, text: str, params: list[object] | None = None) -> list[tuple[object, ...]]:
        with psycopg.connect(self.server_url, autocommit=True) as conn:
            conn.execute(f"SET search_path = {self.name}")
            cursor = conn.execute(text, params)
            return cursor.fetchall() if cursor.description else []

    def tables(self) -> list[str]:
        rows = self.sql("SELECT tablename FROM pg_tables WHERE schemaname = %s", [self.name])
        return sorted(str(r[0]) for r in rows)

    def nessie(self) -> PostgresAdapter:
        return FACTORY.create(self.url(layout="nessie"))


@pytest.fixture
def schema(server: PostgresProvisioned) -> Schema:
    return Schema(server)


def test_tables_nessie_created_are_opened_written_and_read(schema: Schema, tmp_path: Path) -> None:
    schema.sql(NESSIE_REFS_DDL)
    schema.sql(NESSIE_OBJS_DDL)
    adapter = schema.nessie()
    try:
        assert adapter.layout is NESSIE_LAYOUT
        assert "refs2, objs2 found (Nessie's JDBC2 layout)" in adapter.setup_schema()
        assert schema.tables() == ["objs2", "refs2"]  # no version table, nothing else

        # NULL conventions: unset values are NULL in the row, and read back as 0 / None / b"".
        assert adapter.insert_ref("r", RefRow("refs/heads/a", POINTER, False, 0, None, b""))
        raw = "SELECT created_at, ext_info, prev_ptr FROM refs2 WHERE repo = %s AND ref_name = %s"
        assert schema.sql(raw, ["r", "refs/heads/a"]) == [(None, None, None)]
        row = adapter.fetch_refs("r", ["refs/heads/a"])[0]
        assert row == RefRow("refs/heads/a", POINTER, False, 0, None, b"")
        # The compare-and-swap finds the row through IS NULL, and a wrong expectation misses it.
        moved = row._replace(pointer=EXT)
        assert not adapter.update_ref("r", row._replace(created_at_micros=5), moved)
        assert not adapter.update_ref("r", row._replace(extended_info=EXT), moved)
        assert adapter.update_ref("r", row, moved)
        assert adapter.delete_ref("r", moved)

        # A row as Nessie's addReference writes it (NULLs), then set values through lochkit.
        schema.sql(
            "INSERT INTO refs2 (repo, ref_name, pointer, deleted, created_at, ext_info, prev_ptr) "
            "VALUES ('r', 'refs/heads/b', %s, false, NULL, NULL, NULL)",
            [POINTER],
        )
        nessie_row = adapter.fetch_refs("r", ["refs/heads/b"])[0]
        assert nessie_row == RefRow("refs/heads/b", POINTER, False, 0, None, b"")
        with_values = RefRow("refs/heads/b", EXT, False, 77, EXT, b"\x01\x02")
        assert adapter.update_ref("r", nessie_row, with_values)
        assert schema.sql(raw, ["r", "refs/heads/b"]) == [(77, EXT, b"\x01\x02")]
        assert adapter.delete_ref("r", with_values)

        # Objects: obj_vers NULL without a token, obj_ref written, and bumped when it exists.
        tag = obj_row(tag_obj("t"), 1000, NESSIE_LAYOUT)
        assert adapter.insert_objs("r", [tag]) == [True]
        raw_obj = "SELECT obj_type, obj_vers, obj_ref FROM objs2 WHERE repo = %s AND obj_id = %s"
        assert schema.sql(raw_obj, ["r", tag.obj_id]) == [("t", None, 1000)]
        assert adapter.insert_objs("r", [tag._replace(referenced=2000)]) == [False]
        assert schema.sql(raw_obj, ["r", tag.obj_id]) == [("t", None, 2000)]
        assert adapter.fetch_objs("r", [tag.obj_id]) == [tag._replace(referenced=2000)]

        # The version store on top: a repository, a branch and commits.
        store = VersionStore(open_persist(adapter, StoreConfig(repository_id="nessie")))
        RepositoryLogic(store.persist).initialize("main")
        key = ContentKey.of("db", "t1")
        store.commit(
            branch("main"), None, CommitMeta("ns"), [Put(ContentKey.of("db"), Namespace(elements=("db",)))]
        )
        store.commit(
            branch("main"),
            None,
            CommitMeta("t1"),
            [Put(key, IcebergTable(metadata_location="s3://t1/0", snapshot_id=1))],
        )
        head = store.reference(branch("main")).hash
    finally:
        adapter.close()

    # Read-only, as lochkit check and inventory open a Nessie database: nothing is created.
    reader = FACTORY.open_existing(schema.url(layout="nessie"))
    try:
        store = VersionStore(open_persist(reader, StoreConfig(repository_id="nessie")))
        assert store.reference(branch("main")).hash == head
        value = store.get_value(branch("main"), key)
        assert isinstance(value, IcebergTable)
        assert value.metadata_location == "s3://t1/0"
    finally:
        reader.close()
    checked = subprocess.run(
        [
            LOCHKIT,
            "check",
            "--backend",
            "postgres",
            "--url",
            schema.url(layout="nessie"),
            "--repository",
            "nessie",
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert schema.tables() == ["objs2", "refs2"]


def test_every_object_write_works_on_nessies_tables(schema: Schema) -> None:
    """The object statements the suites reach only through custom object types, on rows of
    opaque bytes (the adapter never decodes them)."""
    schema.sql(NESSIE_REFS_DDL)
    schema.sql(NESSIE_OBJS_DDL)
    adapter = schema.nessie()
    try:
        adapter.setup_schema()
        one = ObjRow(b"\x05" * 32, "c-e", "v1", b"first", 10)
        plain = ObjRow(b"\x06" * 32, "t", None, b"tag", 11)
        adapter.upsert_objs("r", [one, plain])
        assert adapter.fetch_objs("r", [one.obj_id, plain.obj_id]) == [one, plain]
        assert not adapter.update_obj_if_version("r", "c-e", "v0", one._replace(data=b"lost"))
        assert adapter.update_obj_if_version(
            "r", "c-e", "v1", two := one._replace(version_token="v2", data=b"2nd")
        )
        assert sorted(adapter.scan_objs("r", frozenset({"c-e"}))) == [two]
        assert sorted(adapter.scan_objs("r", None)) == [two, plain]
        assert not adapter.delete_obj_if_version("r", one.obj_id, "c-e", "v1")
        assert adapter.delete_obj_if_version("r", one.obj_id, "c-e", "v2")
        assert not adapter.delete_obj_if_referenced("r", plain.obj_id, 12)
        assert adapter.delete_obj_if_referenced("r", plain.obj_id, 11)
        assert adapter.fetch_objs("r", [one.obj_id, plain.obj_id]) == [None, None]
    finally:
        adapter.close()


def test_lochkit_creates_nessies_tables_when_missing(schema: Schema) -> None:
    adapter = schema.nessie()
    try:
        assert "refs2, objs2 created (Nessie's JDBC2 layout)" in adapter.setup_schema()
        assert "found" in adapter.setup_schema()
    finally:
        adapter.close()
    assert schema.tables() == ["objs2", "refs2"]
    types = schema.sql(
        "SELECT table_name, column_name, data_type, is_nullable, collation_name "
        "FROM information_schema.columns WHERE table_schema = %s "
        "AND column_name IN ('ref_name', 'obj_type', 'created_at', 'prev_ptr')",
        [schema.name],
    )
    assert sorted(types) == [
        ("objs2", "obj_type", "character varying", "YES", "ucs_basic"),
        ("refs2", "created_at", "bigint", "YES", None),
        ("refs2", "prev_ptr", "bytea", "YES", None),
        ("refs2", "ref_name", "character varying", "NO", "ucs_basic"),  # a key column
    ]


def test_verify_schema_creates_nothing(schema: Schema) -> None:
    with pytest.raises(BackendStoreMissing, match=r"no Nessie JDBC2 tables here \(refs2, objs2 missing\)"):
        FACTORY.open_existing(schema.url(layout="nessie"))
    assert schema.tables() == []


@pytest.mark.parametrize(
    ("objs_ddl", "needles"),
    [
        (
            NESSIE_OBJS_DDL.replace("obj_vers VARCHAR COLLATE ucs_basic, ", ""),
            ["lacks the column(s) obj_vers"],
        ),
        (
            NESSIE_OBJS_DDL.replace(", obj_ref BIGINT", ""),
            ["lacks the column(s) obj_ref", "ALTER TABLE objs2 ADD COLUMN obj_ref BIGINT"],
        ),
        (
            NESSIE_OBJS_DDL.replace("obj_id BYTEA", "obj_id VARCHAR"),
            [
                "table objs2 has the primary key (obj_id VARCHAR, repo VARCHAR)",
                "(obj_id BINARY, repo VARCHAR)",
            ],
        ),
    ],
    ids=["missing-column", "missing-obj-ref", "wrong-key-type"],
)
def test_tables_that_are_not_nessies_are_refused(schema: Schema, objs_ddl: str, needles: list[str]) -> None:
    schema.sql(NESSIE_REFS_DDL)
    schema.sql(objs_ddl)
    for opening in (
        lambda: schema.nessie().setup_schema(),
        lambda: FACTORY.open_existing(schema.url(layout="nessie")),
    ):
        with pytest.raises(BackendSchemaMismatch) as e:
            opening()
        for needle in needles:
            assert needle in str(e.value)
        assert "search_path" in e.value.fix
    assert schema.tables() == ["objs2", "refs2"]


def test_both_layouts_share_one_database(schema: Schema) -> None:
    nessie = schema.nessie()
    lochkit = FACTORY.create(schema.url())
    try:
        nessie.setup_schema()
        lochkit.setup_schema()
        assert schema.tables() == ["lochkit_objs", "lochkit_refs", "lochkit_schema", "objs2", "refs2"]
        heads = {}
        for adapter in (nessie, lochkit):
            store = VersionStore(open_persist(adapter, StoreConfig(repository_id="shared")))
            RepositoryLogic(store.persist).initialize("main")
            store.commit(
                branch("main"),
                None,
                CommitMeta(adapter.layout.name),
                [Put(ContentKey.of("n"), Namespace(elements=("n",)))],
            )
            heads[adapter.layout.name] = store.reference(branch("main")).hash
        # Same repository id, different commit messages: each layout holds its own chain.
        assert heads["nessie"] != heads["lochkit"]
        for adapter in (nessie, lochkit):
            store = VersionStore(open_persist(adapter, StoreConfig(repository_id="shared")))
            assert store.reference(branch("main")).hash == heads[adapter.layout.name]
        assert schema.sql("SELECT count(*) FROM refs2") == schema.sql("SELECT count(*) FROM lochkit_refs")
        lochkit.erase_repositories(["shared"])
        assert schema.sql("SELECT count(*) FROM lochkit_objs") == [(0,)]
        assert list(nessie.list_repositories()) == ["shared"]
        assert schema.sql("SELECT count(*) FROM objs2")[0][0] > 0  # type: ignore[operator]
    finally:
        nessie.close()
        lochkit.close()


def _value_storage(schema: Schema, table: str) -> str:
    """``attstorage`` of the table's ``obj_value``: 'x' extended (compressed, the default), 'e' external."""
    rows = schema.sql(
        "SELECT a.attstorage FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid "
        "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relname = %s AND a.attname = 'obj_value'",
        [schema.name, table],
    )
    return str(rows[0][0])


def test_lochkit_stores_its_objects_uncompressed_and_leaves_nessies_ddl_as_nessie_writes_it(
    schema: Schema,
) -> None:
    """lochkit's own objects table keeps large values out of the row without trying to compress
    them (a commit object barely compresses); the tables it creates in Nessie's layout keep
    PostgreSQL's default, as Nessie's DDL leaves it."""
    own = FACTORY.create(schema.url(table_prefix="own_"))
    nessie = schema.nessie()
    try:
        own.setup_schema()
        nessie.setup_schema()
        assert _value_storage(schema, "own_objs") == "e"
        assert _value_storage(schema, "objs2") == "x"
        # Values of every size still round-trip (a large one goes to the TOAST table uncompressed).
        rows = [obj_row(tag_obj("s" * n)) for n in (10, 3_000, 200_000)]
        assert own.insert_objs("r", rows) == [True, True, True]
        assert own.fetch_objs("r", [r.obj_id for r in rows]) == rows
    finally:
        own.close()
        nessie.close()
