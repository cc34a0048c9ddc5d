"""Unit tests of the postgres backend's Nessie layout (``layout=nessie``): the option, Nessie's
JDBC2 tables and DDL per dialect, the NULL conventions of the rows, the compare-and-swap shapes and
the schema check. The same against a real server is in tests/servers/test_postgres_nessie_layout.py
and in the conformance suites run with ``--lochkit-layout nessie``."""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any

import pytest

from backends.postgres import CockroachBackendFactory, PostgresBackendFactory
from backends.postgres.config import OPTIONS, parse_settings
from backends.postgres.schema import Found, judge
from backends.postgres.statements import COCKROACHDB, POSTGRESQL, Dialect, Statements
from persist_spi.adapter import ObjRow, RefRow
from persist_spi.errors import BackendConfigError
from persist_spi.layouts import LOCHKIT_LAYOUT, NESSIE_LAYOUT

URL = "postgresql://alice@db.example:6543/catalog"
POINTER = b"\x01" * 32
EXT = b"\x02" * 32
HISTORY = b"\x22\x0a\x20" + b"\x03" * 32


# --- the option ----------------------------------------------------------------------------------


class TestLayoutOption:
    def test_default_is_lochkits_own(self) -> None:
        assert parse_settings("postgres", URL).layout is LOCHKIT_LAYOUT

    @pytest.mark.parametrize("given", [f"{URL}?layout=nessie", f"{URL}?layout=NESSIE"])
    def test_nessie_from_the_url(self, given: str) -> None:
        assert parse_settings("postgres", given).layout is NESSIE_LAYOUT

    def test_nessie_from_the_mapping(self) -> None:
        assert parse_settings("postgres", URL, {"layout": "nessie"}).layout is NESSIE_LAYOUT

    def test_the_option_has_help_text(self) -> None:
        assert "refs2" in OPTIONS["layout"]
        assert "nessie" in OPTIONS["layout"]

    def test_unknown_layout_is_refused(self) -> None:
        with pytest.raises(BackendConfigError, match="unknown or unsupported layout 'jdbc'"):
            parse_settings("postgres", f"{URL}?layout=jdbc")

    def test_nessie_tables_take_no_prefix(self) -> None:
        with pytest.raises(BackendConfigError) as e:
            parse_settings("postgres", f"{URL}?layout=nessie&table_prefix=x_")
        assert "refs2" in str(e.value)
        assert "search_path" in e.value.fix


# --- tables and DDL per dialect -------------------------------------------------------------------


class TestNessieTables:
    def test_postgres_ddl_is_nessies(self) -> None:
        sql = Statements("lochkit_", POSTGRESQL, NESSIE_LAYOUT)
        assert sql.table_names == ("refs2", "objs2")
        assert sql.schema is None
        refs = " ".join(sql.create["refs2"].split())
        objs = " ".join(sql.create["objs2"].split())
        assert (
            "repo VARCHAR COLLATE ucs_basic, ref_name VARCHAR COLLATE ucs_basic, pointer BYTEA, "
            "ext_info BYTEA, prev_ptr BYTEA, created_at BIGINT DEFAULT 0, deleted BOOLEAN, "
            "PRIMARY KEY (repo, ref_name)"
        ) in refs
        assert (
            "repo VARCHAR COLLATE ucs_basic, obj_id BYTEA, obj_type VARCHAR COLLATE ucs_basic, "
            "obj_vers VARCHAR COLLATE ucs_basic, obj_value BYTEA, obj_ref BIGINT, "
            "PRIMARY KEY (repo, obj_id)"
        ) in objs
        assert "NOT NULL" not in refs + objs

    def test_cockroach_ddl_uses_plain_varchar(self) -> None:
        sql = Statements("lochkit_", COCKROACHDB, NESSIE_LAYOUT)
        ddl = " ".join(" ".join(sql.create.values()).split())
        assert "repo VARCHAR, ref_name VARCHAR, pointer BYTEA" in ddl
        assert "COLLATE" not in ddl
        assert sql.upsert_objs.startswith("UPSERT INTO objs2")

    @pytest.mark.parametrize("dialect", [POSTGRESQL, COCKROACHDB])
    def test_every_statement_uses_nessies_tables(self, dialect: Dialect) -> None:
        sql = Statements("lochkit_", dialect, NESSIE_LAYOUT)
        texts = [v for k, v in vars(sql).items() if isinstance(v, str) and k not in ("prefix", "inspect")]
        texts = [t for t in texts if not t.startswith("SELECT c.relname")]  # the catalog queries
        assert texts
        for text in texts:
            assert "refs2" in text or "objs2" in text, text
            assert "lochkit_" not in text, text

    def test_object_inserts_stay_insert_if_absent(self) -> None:
        sql = Statements("lochkit_", POSTGRESQL, NESSIE_LAYOUT)
        assert sql.insert_objs.startswith("INSERT INTO objs2")
        assert "ON CONFLICT DO NOTHING" in sql.insert_objs


# --- NULL conventions ------------------------------------------------------------------------------


class TestNullConventions:
    nessie = Statements("lochkit_", POSTGRESQL, NESSIE_LAYOUT)
    lochkit = Statements("lochkit_", POSTGRESQL)

    def test_nessie_writes_null_for_zero_empty_and_none(self) -> None:
        _, params = self.nessie.insert_ref("r", RefRow("main", POINTER, False, 0, None, b""))
        assert params == ["r", "main", POINTER, False, None, None, None]

    def test_nessie_writes_values_that_are_set(self) -> None:
        _, params = self.nessie.insert_ref("r", RefRow("main", POINTER, True, 5, EXT, HISTORY))
        assert params == ["r", "main", POINTER, True, 5, EXT, HISTORY]

    def test_nessie_update_sets_nulls_too(self) -> None:
        expected = RefRow("main", POINTER, False, 5, EXT, HISTORY)
        _, params = self.nessie.update_ref("r", expected, expected._replace(created_at_micros=0))
        assert params[:5] == [POINTER, False, None, EXT, HISTORY]

    def test_lochkit_keeps_zero_and_empty(self) -> None:
        _, params = self.lochkit.insert_ref("r", RefRow("main", POINTER, False, 0, None, b""))
        assert params == ["r", "main", POINTER, False, 0, None, b""]

    @pytest.mark.parametrize("sql", [nessie, lochkit], ids=["nessie", "lochkit"])
    def test_nulls_read_back_as_zero_empty_and_none(self, sql: Statements) -> None:
        assert sql.ref_from_db(("main", POINTER, False, None, None, None)) == RefRow(
            "main", POINTER, False, 0, None, b""
        )
        assert sql.obj_from_db((POINTER, "c", None, b"x", None)) == ObjRow(POINTER, "c", None, b"x", 0)

    def test_values_read_back_unchanged(self) -> None:
        row = ("main", POINTER, True, 5, EXT, HISTORY)
        assert self.nessie.ref_from_db(row) == RefRow(*row)
        assert self.nessie.obj_from_db((POINTER, "c", "tok", b"x", 9)) == ObjRow(POINTER, "c", "tok", b"x", 9)


# --- compare-and-swap shapes ----------------------------------------------------------------------


def _where(text: str) -> str:
    return text.split("WHERE", 1)[1]


class TestCompareAndSwap:
    nessie = Statements("lochkit_", POSTGRESQL, NESSIE_LAYOUT)

    def test_unset_created_at_and_ext_info_compare_with_is_null(self) -> None:
        expected = RefRow("main", POINTER, False, 0, None, HISTORY)
        for text, params in (
            self.nessie.update_ref("r", expected, expected._replace(pointer=EXT)),
            self.nessie.delete_ref("r", expected),
        ):
            where = _where(text)
            assert "created_at IS NULL" in where
            assert "ext_info IS NULL" in where
            assert "prev_ptr" not in where
            assert text.count("%s") == len(params)
            assert params[-4:] == ["r", "main", POINTER, False]

    def test_set_created_at_and_ext_info_compare_with_equality(self) -> None:
        expected = RefRow("main", POINTER, False, 5, EXT, b"")
        text, params = self.nessie.delete_ref("r", expected)
        assert text.startswith("DELETE FROM refs2 WHERE")
        where = _where(text)
        assert "created_at = %s" in where
        assert "ext_info = %s" in where
        assert "IS NULL" not in where
        assert params == ["r", "main", POINTER, False, 5, EXT]

    def test_mixed(self) -> None:
        text, params = self.nessie.delete_ref("r", RefRow("main", POINTER, False, 5, None, b""))
        assert "created_at = %s" in text
        assert "ext_info IS NULL" in text
        assert params == ["r", "main", POINTER, False, 5]

    def test_lochkit_layout_keeps_its_statement(self) -> None:
        lochkit = Statements("p_", POSTGRESQL)
        text, params = lochkit.delete_ref("r", RefRow("main", POINTER, False, 0, None, b""))
        assert "created_at = %s AND ext_info IS NOT DISTINCT FROM %s" in text
        assert params == ["r", "main", POINTER, False, 0, None]


# --- the schema check ------------------------------------------------------------------------------

NESSIE_REFS = {
    "repo": "character varying",
    "ref_name": "character varying",
    "pointer": "bytea",
    "ext_info": "bytea",
    "prev_ptr": "bytea",
    "created_at": "bigint",
    "deleted": "boolean",
}
NESSIE_OBJS = {
    "repo": "character varying",
    "obj_id": "bytea",
    "obj_type": "character varying",
    "obj_vers": "character varying",
    "obj_value": "bytea",
    "obj_ref": "bigint",
}
KEYS = {"refs2": ("repo", "ref_name"), "objs2": ("repo", "obj_id")}


class TestNessieSchemaCheck:
    sql = Statements("lochkit_", POSTGRESQL, NESSIE_LAYOUT)

    def judge(self, columns: dict[str, dict[str, str]], keys: Mapping[str, tuple[str, ...]] = KEYS) -> Any:
        return judge(self.sql, Found(columns, None, {t: k for t, k in keys.items() if t in columns}))

    def test_nothing_exists(self) -> None:
        verdict = self.judge({})
        assert (verdict.missing, verdict.problem) == (("refs2", "objs2"), None)

    def test_nessies_tables_are_accepted_without_a_version_table(self) -> None:
        verdict = self.judge({"refs2": NESSIE_REFS, "objs2": NESSIE_OBJS})
        assert (verdict.missing, verdict.problem) == ((), None)

    def test_text_keys_and_extra_columns_are_accepted(self) -> None:
        refs = {**NESSIE_REFS, "repo": "text", "ref_name": "text", "comment": "text"}
        objs = {**NESSIE_OBJS, "repo": "character varying(255)", "extra": "integer"}
        assert self.judge({"refs2": refs, "objs2": objs}).problem is None

    def test_one_table_missing(self) -> None:
        verdict = self.judge({"refs2": NESSIE_REFS})
        assert (verdict.missing, verdict.problem) == (("objs2",), None)

    def test_a_missing_required_column_is_refused(self) -> None:
        objs = {k: v for k, v in NESSIE_OBJS.items() if k != "obj_vers"}
        problem = self.judge({"refs2": NESSIE_REFS, "objs2": objs}).problem
        assert problem is not None
        assert "objs2" in problem
        assert "obj_vers" in problem

    def test_obj_ref_is_required_by_lochkit(self) -> None:
        objs = {k: v for k, v in NESSIE_OBJS.items() if k != "obj_ref"}
        problem = self.judge({"refs2": NESSIE_REFS, "objs2": objs}).problem
        assert problem is not None
        assert "ALTER TABLE objs2 ADD COLUMN obj_ref BIGINT" in problem

    def test_a_wrong_key_type_is_refused(self) -> None:
        objs = {**NESSIE_OBJS, "obj_id": "text"}
        problem = self.judge({"refs2": NESSIE_REFS, "objs2": objs}).problem
        assert problem is not None
        assert "primary key" in problem
        assert "obj_id" in problem

    def test_other_key_columns_are_refused(self) -> None:
        problem = self.judge({"refs2": NESSIE_REFS}, {"refs2": ("ref_name",)}).problem
        assert problem is not None
        assert "refs2" in problem
        assert "primary key" in problem


# --- dialect selection, through the factory with a fake server -----------------------------------


class _FakeCursor:
    def __init__(self, version: str) -> None:
        self.version = version

    def fetchone(self) -> tuple[str]:
        return (self.version,)


class _FakeConnection:
    def __init__(self, version: str) -> None:
        self.version = version

    def __enter__(self) -> _FakeConnection:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        return None

    def execute(self, query: str) -> _FakeCursor:
        assert query == "SELECT version()"
        return _FakeCursor(self.version)


class _FakePool:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def open(self, **kwargs: Any) -> None:
        pass

    def close(self, **kwargs: Any) -> None:
        pass


@pytest.fixture
def fake_server(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``psycopg.connect`` answers the version in ``versions[0]``; the pool connects to nothing."""
    import psycopg
    import psycopg_pool

    versions = ["PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on x86_64-pc-linux-gnu"]
    monkeypatch.setattr(psycopg, "connect", lambda *a, **k: _FakeConnection(versions[0]))
    monkeypatch.setattr(psycopg_pool, "ConnectionPool", _FakePool)
    return versions


def test_a_cockroach_server_gets_nessies_cockroach_tables(fake_server: list[str]) -> None:
    fake_server[0] = "CockroachDB CCL v25.2.4 (x86_64-pc-linux-gnu, built 2025/07/30, go1.23.7)"
    for factory in (PostgresBackendFactory(), CockroachBackendFactory()):
        adapter = factory.create(f"{URL}?layout=nessie")
        try:
            assert adapter.name == "cockroachdb"
            assert adapter.layout is NESSIE_LAYOUT
            ddl = " ".join(adapter.statements.create.values())
            assert "refs2" in ddl
            assert "COLLATE" not in ddl
            assert adapter.statements.upsert_objs.startswith("UPSERT INTO objs2")
        finally:
            adapter.close()


def test_a_postgres_server_gets_nessies_postgres_tables(fake_server: list[str]) -> None:
    adapter = PostgresBackendFactory().create(URL, {"layout": "nessie"})
    try:
        assert (adapter.name, adapter.layout) == ("postgres", NESSIE_LAYOUT)
        assert "VARCHAR COLLATE ucs_basic" in adapter.statements.create["refs2"]
    finally:
        adapter.close()


def test_without_the_option_the_tables_stay_lochkits(fake_server: list[str]) -> None:
    adapter = PostgresBackendFactory().create(URL)
    try:
        assert adapter.layout is LOCHKIT_LAYOUT
        assert adapter.statements.table_names == ("lochkit_refs", "lochkit_objs", "lochkit_schema")
    finally:
        adapter.close()
