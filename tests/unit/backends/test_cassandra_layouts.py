"""The cassandra adapter in either storage layout, without a server: which statements it sends for
each operation and which values it binds (Nessie's NULL conventions), the URL options that choose
the layout, and the schema checks of Nessie's tables. A recording fake stands in for the driver's
session; the real server runs the same paths in the conformance suites (``--lochkit-layout
nessie``) and in tests/servers/test_cassandra_errors.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from backends.cassandra.adapter import SCAN_STEP, CassandraAdapter
from backends.cassandra.config import parse_url
from backends.cassandra.schema import create_table_cql, nessie_table_problems
from persist_spi.adapter import ObjRow, RefRow
from persist_spi.errors import BackendConfigError, BackendSchemaMismatch, BackendStoreMissing
from persist_spi.layouts import LOCHKIT_LAYOUT, NESSIE_LAYOUT

pytest.importorskip("cassandra")

REPO = "r1"
POINTER = b"\x01" * 32
OTHER = b"\x02" * 32


class _Prepared:
    def __init__(self, text: str) -> None:
        self.text = text

    def bind(self, params: tuple[Any, ...]) -> _Bound:
        return _Bound(self.text, tuple(params))


class _Bound:
    def __init__(self, text: str, params: tuple[Any, ...]) -> None:
        self.text = text
        self.params = params
        self.fetch_size: int | None = None


class _Result(list[Any]):
    def __init__(self, rows: list[Any], applied: bool) -> None:
        super().__init__(rows)
        self.was_applied = applied

    def one(self) -> Any:
        return self[0] if self else None


#: (statement text, bound values) -> (rows, was_applied)
Answer = Callable[[str, tuple[Any, ...]], tuple[list[Any], bool]]


class FakeSession:
    """Records every statement with its values; ``answer`` decides what comes back."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.executed: list[tuple[str, tuple[Any, ...]]] = []
        self.fetch_sizes: dict[str, int | None] = {}

    def prepare(self, text: str) -> _Prepared:
        return _Prepared(text)

    def execute(self, statement: Any, params: Any = ()) -> _Result:
        if isinstance(statement, _Bound):
            text, values = statement.text, statement.params
            self.fetch_sizes[text] = statement.fetch_size
        else:
            text, values = getattr(statement, "query_string", None) or statement.text, tuple(params)
        self.executed.append((text, tuple(values)))
        rows, applied = self.answer(text, tuple(values))
        return _Result(rows, applied)

    def texts(self) -> list[str]:
        return [text for text, _ in self.executed]


def _nothing(text: str, values: tuple[Any, ...]) -> tuple[list[Any], bool]:
    return [], True


@pytest.fixture
def open_adapter(monkeypatch: pytest.MonkeyPatch) -> Callable[..., tuple[CassandraAdapter, FakeSession]]:
    import cassandra.concurrent

    def concurrent(session: FakeSession, batch: list[Any], **_: Any) -> list[tuple[bool, Any]]:
        return [(True, session.execute(statement, values)) for statement, values in batch]

    monkeypatch.setattr(cassandra.concurrent, "execute_concurrent", concurrent)

    def make(url: str, answer: Answer = _nothing) -> tuple[CassandraAdapter, FakeSession]:
        session = FakeSession(answer)
        monkeypatch.setattr("backends.cassandra.adapter._connect", lambda settings: (None, session))
        return CassandraAdapter(parse_url("cassandra", url)), session

    return make


def _ref(pointer: bytes = POINTER, history: bytes = b"", created: int = 0) -> RefRow:
    return RefRow("refs/heads/main", pointer, False, created, None, history)


# --- choosing the layout -------------------------------------------------------------------------------


def test_the_nessie_layout_defaults_to_nessies_keyspace_and_creates_none() -> None:
    settings = parse_url("cassandra", "cassandra://h?layout=nessie")
    assert settings.layout is NESSIE_LAYOUT
    assert (settings.keyspace, settings.create_keyspace) == ("nessie", False)
    named = parse_url("cassandra", "cassandra://h/catalog", {"layout": "nessie", "create_keyspace": "true"})
    assert (named.keyspace, named.create_keyspace) == ("catalog", True)


def test_lochkits_layout_stays_the_default() -> None:
    settings = parse_url("scylladb", "scylladb://h")
    assert settings.layout is LOCHKIT_LAYOUT
    assert (settings.keyspace, settings.create_keyspace) == ("lochkit", True)


@pytest.mark.parametrize(
    ("query", "problem"),
    [("layout=nesie", "unsupported layout"), ("create_keyspace=maybe", "create_keyspace must be")],
)
def test_bad_layout_options_are_config_errors(query: str, problem: str) -> None:
    with pytest.raises(BackendConfigError, match=problem):
        parse_url("cassandra", f"cassandra://h/ks?{query}")


def test_the_adapter_answers_its_layout(open_adapter: Any) -> None:
    nessie, _ = open_adapter("cassandra://h?layout=nessie")
    lochkit, _ = open_adapter("cassandra://h")
    assert nessie.layout is NESSIE_LAYOUT
    assert lochkit.layout is LOCHKIT_LAYOUT


# --- references: statements and NULL conventions -------------------------------------------------------

NESSIE_CONDITION = "IF pointer = ? AND deleted = ? AND created_at = ? AND ext_info = ?"


def test_adding_a_reference_in_nessies_layout_is_one_lwt_without_directory(open_adapter: Any) -> None:
    from cassandra.query import UNSET_VALUE

    adapter, session = open_adapter("cassandra://h?layout=nessie")
    assert adapter.insert_ref(REPO, _ref())
    [(text, values)] = session.executed
    assert text == (
        "INSERT INTO nessie.refs2 (repo, ref_name, pointer, deleted, created_at, ext_info, prev_ptr) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) IF NOT EXISTS"
    )
    # created_at written even when 0; no extended info and no history: null (left unset).
    assert values == (REPO, "refs/heads/main", POINTER, False, 0, UNSET_VALUE, UNSET_VALUE)


def test_updating_a_reference_in_nessies_layout_writes_null_for_an_empty_history(open_adapter: Any) -> None:
    adapter, session = open_adapter("cassandra://h?layout=nessie")
    assert adapter.update_ref(REPO, _ref(), _ref(OTHER))
    [(text, values)] = session.executed
    assert text.startswith("UPDATE nessie.refs2 SET pointer = ?, deleted = ?, created_at = ?, ext_info = ?, ")
    assert text.endswith(NESSIE_CONDITION)
    # new values, key, then the expected state with a null extended info bound.
    assert values == (OTHER, False, 0, None, None, REPO, "refs/heads/main", POINTER, False, 0, None)


def test_a_history_is_written_as_given_in_both_layouts(open_adapter: Any) -> None:
    for url in ("cassandra://h?layout=nessie", "cassandra://h"):
        adapter, session = open_adapter(url)
        adapter.update_ref(REPO, _ref(), _ref(OTHER, history=b"\x22history", created=7))
        assert session.executed[0][1][:5] == (OTHER, False, 7, None, b"\x22history")


def test_lochkits_layout_keeps_an_empty_history_as_an_empty_blob(open_adapter: Any) -> None:
    adapter, session = open_adapter("cassandra://h/ks")
    adapter.update_ref(REPO, _ref(), _ref(OTHER))
    [(text, values)] = session.executed
    assert text.startswith("UPDATE ks.refs SET")
    assert values[4] == b""


def test_purging_a_reference_in_nessies_layout_is_conditional(open_adapter: Any) -> None:
    adapter, session = open_adapter("cassandra://h?layout=nessie")
    adapter.delete_ref(REPO, _ref(created=5))
    [(text, values)] = session.executed
    assert text == f"DELETE FROM nessie.refs2 WHERE repo = ? AND ref_name = ? {NESSIE_CONDITION}"
    assert values == (REPO, "refs/heads/main", POINTER, False, 5, None)


def test_references_are_read_from_nessies_table_with_nulls_as_empty(open_adapter: Any) -> None:
    def answer(text: str, values: tuple[Any, ...]) -> tuple[list[Any], bool]:
        return [("refs/heads/main", POINTER, False, 0, None, None)], True

    adapter, session = open_adapter("cassandra://h?layout=nessie", answer)
    assert adapter.fetch_refs(REPO, ["refs/heads/main"]) == [_ref()]
    assert session.texts()[0].startswith(
        "SELECT ref_name, pointer, deleted, created_at, ext_info, prev_ptr FROM nessie.refs2"
    )


# --- objects -------------------------------------------------------------------------------------------


def test_storing_objects_in_nessies_layout_bumps_referenced_of_existing_ones(open_adapter: Any) -> None:
    from cassandra.query import UNSET_VALUE

    def answer(text: str, values: tuple[Any, ...]) -> tuple[list[Any], bool]:
        return [], not (text.startswith("INSERT") and values[1] == b"old")  # b"old" exists already

    adapter, session = open_adapter("cassandra://h?layout=nessie", answer)
    rows = [ObjRow(b"new", "c", None, b"\x0a\x00", 11), ObjRow(b"old", "c", None, b"\x0a\x00", 12)]
    assert adapter.insert_objs(REPO, rows) == [True, False]
    inserts = [values for text, values in session.executed if text.startswith("INSERT")]
    assert session.texts()[0] == (
        "INSERT INTO nessie.objs2 (repo, obj_id, obj_type, obj_vers, obj_value, obj_ref) "
        "VALUES (?, ?, ?, ?, ?, ?) IF NOT EXISTS"
    )
    # Not updateable: no version token, so obj_vers stays null; obj_ref in microseconds as given.
    assert inserts == [
        (REPO, b"new", "c", UNSET_VALUE, b"\x0a\x00", 11),
        (REPO, b"old", "c", UNSET_VALUE, b"\x0a\x00", 12),
    ]
    assert session.executed[-1] == (
        "UPDATE nessie.objs2 SET obj_ref = ? WHERE repo = ? AND obj_id = ? IF EXISTS",
        (12, REPO, b"old"),
    )
    assert not any("repo_keys" in text for text in session.texts())


def test_conditional_object_writes_in_nessies_layout(open_adapter: Any) -> None:
    adapter, session = open_adapter("cassandra://h?layout=nessie")
    adapter.update_obj_if_version(REPO, "x", "v1", ObjRow(b"id", "x", "v2", b"data", 3))
    adapter.delete_obj_if_version(REPO, b"id", "x", "v2")
    adapter.upsert_objs(REPO, [ObjRow(b"id2", "c", None, b"data", 4)])
    assert session.executed == [
        (
            (
                "UPDATE nessie.objs2 SET obj_vers = ?, obj_value = ?, obj_ref = ? "
                "WHERE repo = ? AND obj_id = ? IF obj_type = ? AND obj_vers = ?"
            ),
            ("v2", b"data", 3, REPO, b"id", "x", "v1"),
        ),
        (
            "DELETE FROM nessie.objs2 WHERE repo = ? AND obj_id = ? IF obj_type = ? AND obj_vers = ?",
            (REPO, b"id", "x", "v2"),
        ),
        (
            (
                "INSERT INTO nessie.objs2 (repo, obj_id, obj_type, obj_vers, obj_value, obj_ref) "
                "VALUES (?, ?, ?, ?, ?, ?)"
            ),
            (REPO, b"id2", "c", None, b"data", 4),
        ),
    ]


# --- scans, erase, listing -----------------------------------------------------------------------------


def test_scanning_in_nessies_layout_filters_the_table(open_adapter: Any) -> None:
    def answer(text: str, values: tuple[Any, ...]) -> tuple[list[Any], bool]:
        return [(b"a", "c", None, b"va", None), (b"b", "x", "t", b"vb", 9)], True

    adapter, session = open_adapter("cassandra://h?layout=nessie", answer)
    assert list(adapter.scan_objs(REPO, None)) == [
        ObjRow(b"a", "c", None, b"va", 0),
        ObjRow(b"b", "x", "t", b"vb", 9),
    ]
    assert list(adapter.scan_objs(REPO, frozenset({"x"}))) == [ObjRow(b"b", "x", "t", b"vb", 9)]
    scan = (
        "SELECT obj_id, obj_type, obj_vers, obj_value, obj_ref FROM nessie.objs2 "
        "WHERE repo = ? ALLOW FILTERING"
    )
    assert session.executed == [(scan, (REPO,)), (scan, (REPO,))]
    assert session.fetch_sizes[scan] == SCAN_STEP


def test_erasing_in_nessies_layout_deletes_the_rows_the_filtered_scans_find(open_adapter: Any) -> None:
    def answer(text: str, values: tuple[Any, ...]) -> tuple[list[Any], bool]:
        if "SELECT ref_name FROM nessie.refs2" in text:
            return [("main",), ("dev",)], True
        if "SELECT obj_id FROM nessie.objs2" in text:
            return [(b"o1",)], True
        return [], True

    adapter, session = open_adapter("cassandra://h?layout=nessie", answer)
    adapter.erase_repositories([REPO])
    assert session.executed == [
        ("SELECT ref_name FROM nessie.refs2 WHERE repo = ? ALLOW FILTERING", (REPO,)),
        ("SELECT obj_id FROM nessie.objs2 WHERE repo = ? ALLOW FILTERING", (REPO,)),
        ("DELETE FROM nessie.refs2 WHERE repo = ? AND ref_name = ?", (REPO, "main")),
        ("DELETE FROM nessie.refs2 WHERE repo = ? AND ref_name = ?", (REPO, "dev")),
        ("DELETE FROM nessie.objs2 WHERE repo = ? AND obj_id = ?", (REPO, b"o1")),
    ]


def test_listing_repositories_in_nessies_layout_reads_the_reference_keys(open_adapter: Any) -> None:
    def answer(text: str, values: tuple[Any, ...]) -> tuple[list[Any], bool]:
        return [("a", "main"), ("b", "main"), ("a", "dev")], True

    adapter, session = open_adapter("cassandra://h?layout=nessie", answer)
    assert sorted(adapter.list_repositories()) == ["a", "b"]
    assert session.texts() == ["SELECT DISTINCT repo, ref_name FROM nessie.refs2"]


# --- schema --------------------------------------------------------------------------------------------


def _columns(table: str) -> dict[str, tuple[str, str, int]]:
    """The columns of Nessie's CASSANDRA2 DDL as system_schema.columns lists them."""
    refs = {
        "repo": ("partition_key", "text", 0),
        "ref_name": ("partition_key", "text", 1),
        "pointer": ("regular", "blob", -1),
        "deleted": ("regular", "boolean", -1),
        "created_at": ("regular", "bigint", -1),
        "ext_info": ("regular", "blob", -1),
        "prev_ptr": ("regular", "blob", -1),
    }
    objs = {
        "repo": ("partition_key", "text", 0),
        "obj_id": ("partition_key", "blob", 1),
        "obj_type": ("regular", "text", -1),
        "obj_vers": ("regular", "text", -1),
        "obj_value": ("regular", "blob", -1),
        "obj_ref": ("regular", "bigint", -1),
    }
    return dict(refs if table == "refs2" else objs)


def test_nessies_tables_are_created_with_nessies_ddl() -> None:
    assert create_table_cql("nessie", "refs2") == (
        "CREATE TABLE IF NOT EXISTS nessie.refs2 (repo text, ref_name text, pointer blob, deleted boolean, "
        "created_at bigint, ext_info blob, prev_ptr blob, PRIMARY KEY ((repo, ref_name)))"
    )
    assert create_table_cql("nessie", "objs2") == (
        "CREATE TABLE IF NOT EXISTS nessie.objs2 (repo text, obj_id blob, obj_type text, obj_vers text, "
        "obj_value blob, obj_ref bigint, PRIMARY KEY ((repo, obj_id)))"
    )


def test_nessie_tables_are_checked_as_nessie_checks_them() -> None:
    for table in ("refs2", "objs2"):
        assert nessie_table_problems(table, _columns(table)) == []
        extra = _columns(table) | {"note": ("regular", "text", -1)}
        assert nessie_table_problems(table, extra) == [], "extra columns are fine"
    other_type = _columns("objs2") | {
        "obj_id": ("partition_key", "text", 1),
        "obj_value": ("regular", "text", -1),
    }
    assert nessie_table_problems("objs2", other_type) == [
        "partition key (repo text, obj_id text) is not (repo text, obj_id blob)"
    ]
    swapped = _columns("refs2") | {
        "repo": ("partition_key", "text", 1),
        "ref_name": ("partition_key", "text", 0),
    }
    assert nessie_table_problems("refs2", swapped)[0].startswith("partition key (ref_name text, repo text)")
    missing = {n: c for n, c in _columns("objs2").items() if n != "obj_ref"}
    assert nessie_table_problems("objs2", missing) == ["column obj_ref is missing"]


def _schema(keyspace_exists: bool, tables: dict[str, dict[str, tuple[str, str, int]]]) -> Answer:
    def answer(text: str, values: tuple[Any, ...]) -> tuple[list[Any], bool]:
        if "system_schema.keyspaces" in text:
            return ([("nessie",)] if keyspace_exists else []), True
        if "system_schema.columns" in text:
            return [(t, n, *c) for t, cs in tables.items() for n, c in cs.items()], True
        return [], True

    return answer


def test_a_missing_keyspace_is_not_created_in_nessies_layout(open_adapter: Any) -> None:
    adapter, session = open_adapter("cassandra://h?layout=nessie", _schema(False, {}))
    with pytest.raises(BackendStoreMissing, match="keyspace nessie does not exist") as caught:
        adapter.setup_schema()
    assert "create_keyspace=true" in caught.value.fix
    assert not any(text.startswith("CREATE") for text in session.texts())


def test_setup_in_nessies_layout_creates_only_nessies_tables(open_adapter: Any) -> None:
    adapter, session = open_adapter("cassandra://h?layout=nessie&create_keyspace=true", _schema(False, {}))
    assert "Nessie's tables refs2, objs2" in adapter.setup_schema()
    written = [text for text in session.texts() if not text.startswith("SELECT")]
    assert written == [
        (
            "CREATE KEYSPACE IF NOT EXISTS nessie WITH replication = "
            "{'class': 'SimpleStrategy', 'replication_factor': '1'}"
        ),
        create_table_cql("nessie", "refs2"),
        create_table_cql("nessie", "objs2"),
    ]


def test_setup_in_nessies_layout_accepts_nessies_tables_and_refuses_others(open_adapter: Any) -> None:
    tables = {"refs2": _columns("refs2"), "objs2": _columns("objs2")}
    adapter, session = open_adapter("cassandra://h?layout=nessie", _schema(True, tables))
    adapter.setup_schema()
    assert all(text.startswith("SELECT") for text in session.texts()), "nothing created or recorded"
    tables["refs2"] = {n: c for n, c in tables["refs2"].items() if n != "prev_ptr"}
    adapter, _ = open_adapter("cassandra://h?layout=nessie", _schema(True, tables))
    with pytest.raises(BackendSchemaMismatch, match=r"nessie\.refs2 is not a Nessie CASSANDRA2 table"):
        adapter.setup_schema()
