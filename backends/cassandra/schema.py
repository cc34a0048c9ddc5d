"""Keyspace and tables of the Cassandra/ScyllaDB backend, created on first use and checked after.

Layout (see docs/backends/cassandra.md for the reasoning):

* ``refs`` and ``objs``: one partition per row, keyed ``(repo, name|id)``, so every point read and
  every lightweight transaction (Paxos runs per partition) touches exactly one small partition and
  concurrent LWTs on different rows never contend.
* ``repo_keys``: a per-repository directory of the rows in ``refs`` and ``objs``, partitioned by
  ``(repo, bucket)`` with ``BUCKETS`` buckets, so scanning or erasing a repository reads its own
  directory partitions instead of filtering the whole table (Nessie's ALLOW FILTERING scan).
* ``lochkit_schema``: the schema version, so tables of another lochkit version are refused.

Nessie's layout (``layout=nessie``, :data:`NESSIE_NAMES`) has only ``refs2`` and ``objs2``, with
the same columns and keys as ``refs`` / ``objs`` (Nessie's CASSANDRA2 DDL). It keeps no directory,
because a Nessie server writes no directory entries (scans filter the tables instead), and no
schema version: like Nessie, setup checks only the partition keys and that the columns exist.
"""

from __future__ import annotations

import zlib
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Final

from persist_spi.errors import BackendConfigError, BackendSchemaMismatch, BackendStoreMissing
from persist_spi.layouts import NESSIE_LAYOUT, StorageLayout

SCHEMA_VERSION: Final = 1
#: Directory partitions per repository: more buckets keep partitions small for huge repositories
#: (32 buckets hold ~50 million objects below Cassandra's 100 MB partition guidance), fewer make
#: the scan/erase of a small repository cheaper (it reads every bucket). Part of the schema version.
BUCKETS: Final = 32
KIND_OBJ: Final = "o"
KIND_REF: Final = "r"
META_TABLE: Final = "lochkit_schema"

#: table -> column -> (kind, CQL type); kinds as in system_schema.columns.
TABLES: Final[dict[str, dict[str, tuple[str, str]]]] = {
    "refs": {
        "repo": ("partition_key", "text"),
        "ref_name": ("partition_key", "text"),
        "pointer": ("regular", "blob"),
        "deleted": ("regular", "boolean"),
        "created_at": ("regular", "bigint"),
        "ext_info": ("regular", "blob"),
        "prev_ptr": ("regular", "blob"),
    },
    "objs": {
        "repo": ("partition_key", "text"),
        "obj_id": ("partition_key", "blob"),
        "obj_type": ("regular", "text"),
        "obj_vers": ("regular", "text"),
        "obj_value": ("regular", "blob"),
        "obj_ref": ("regular", "bigint"),
    },
    "repo_keys": {
        "repo": ("partition_key", "text"),
        "bucket": ("partition_key", "int"),
        "kind": ("clustering", "ascii"),
        "row_key": ("clustering", "blob"),
    },
    META_TABLE: {
        "name": ("partition_key", "text"),
        "version": ("regular", "int"),
        "detail": ("regular", "text"),
    },
}

_PRIMARY_KEYS: Final = {
    "refs": "PRIMARY KEY ((repo, ref_name))",
    "objs": "PRIMARY KEY ((repo, obj_id))",
    "repo_keys": "PRIMARY KEY ((repo, bucket), kind, row_key)",
    META_TABLE: "PRIMARY KEY (name)",
}

#: Nessie's CASSANDRA2 tables: the columns and keys of lochkit's ``refs`` / ``objs``, other names.
NESSIE_TABLES: Final = {"refs2": TABLES["refs"], "objs2": TABLES["objs"]}
_NESSIE_PRIMARY_KEYS: Final = {"refs2": _PRIMARY_KEYS["refs"], "objs2": _PRIMARY_KEYS["objs"]}


@dataclass(frozen=True)
class TableNames:
    """The tables one layout keeps its rows in (the statements' ``{refs}``, ``{objs}``,
    ``{directory}``)."""

    refs: str
    objs: str
    #: lochkit's per-repository directory; None in Nessie's layout, which has none.
    directory: str | None


LOCHKIT_NAMES: Final = TableNames("refs", "objs", "repo_keys")
NESSIE_NAMES: Final = TableNames("refs2", "objs2", None)


def table_names(layout: StorageLayout) -> TableNames:
    return NESSIE_NAMES if layout is NESSIE_LAYOUT else LOCHKIT_NAMES


def bucket_of(key: bytes) -> int:
    """Stable across processes and versions (unlike ``hash``)."""
    return zlib.crc32(key) % BUCKETS


def create_table_cql(keyspace: str, table: str) -> str:
    """lochkit's DDL for one of :data:`TABLES` or :data:`NESSIE_TABLES` (the latter as Nessie's)."""
    definition = TABLES.get(table) or NESSIE_TABLES[table]
    key = _PRIMARY_KEYS.get(table) or _NESSIE_PRIMARY_KEYS[table]
    columns = ", ".join(f"{name} {cql_type}" for name, (_, cql_type) in definition.items())
    return f"CREATE TABLE IF NOT EXISTS {keyspace}.{table} ({columns}, {key})"


def nessie_table_problems(table: str, actual: dict[str, tuple[str, str, int]]) -> list[str]:
    """Why an existing ``refs2`` / ``objs2`` cannot be used, checked as Nessie checks it: the
    partition key's columns (names, types, order) must match and every column must exist; other
    columns, and other types of the regular ones, are left alone. ``actual`` maps column name to
    (kind, CQL type, position) from ``system_schema.columns``. Nessie does not require ``obj_ref``
    (tables of older Nessie versions lack it), but lochkit writes it, so it is required here."""
    expected = NESSIE_TABLES[table]
    want_key = [(name, cql_type) for name, (kind, cql_type) in expected.items() if kind == "partition_key"]
    found_key = [
        (name, cql_type)
        for name, (kind, cql_type, _) in sorted(actual.items(), key=lambda item: item[1][2])
        if kind == "partition_key"
    ]
    problems = []
    if found_key != want_key:
        shown = ", ".join(f"{n} {t}" for n, t in found_key) or "none"
        problems.append(f"partition key ({shown}) is not ({', '.join(f'{n} {t}' for n, t in want_key)})")
    problems += [f"column {name} is missing" for name in expected if name not in actual]
    return problems


def create_keyspace_cql(keyspace: str, replication: str, scylla: bool) -> str:
    # ScyllaDB tablets do not support lightweight transactions, and every lochkit write that must
    # not be lost is one: a ScyllaDB keyspace must use vnodes.
    tablets = " AND tablets = {'enabled': false}" if scylla else ""
    return f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = {replication}{tablets}"


class SchemaManager:
    """Runs the DDL and checks; ``execute(cql, params)`` is the adapter's statement runner."""

    def __init__(
        self,
        adapter: Any,
        keyspace: str,
        scylla: bool,
        *,
        nessie: bool = False,
        create_keyspace: bool = True,
    ) -> None:
        self._adapter = adapter
        self._keyspace = keyspace
        self._scylla = scylla
        self._nessie = nessie
        self._create_keyspace = create_keyspace

    def setup(self, replication: str) -> str:
        created = self._ensure_keyspace(replication)
        how = "created" if created else "existing"
        if self._nessie:
            return self._setup_nessie_tables(how)
        existing = self._existing_columns(TABLES)
        if META_TABLE in existing:
            self._check_version()
        for table in TABLES:
            if table in existing:
                self._check_columns(table, existing[table])
            else:
                self._create_table(table)
        self._record_version()
        return (
            f"keyspace {self._keyspace} ({how}), tables refs, objs, repo_keys ({BUCKETS} buckets per "
            f"repository), schema version {SCHEMA_VERSION}"
        )

    def _setup_nessie_tables(self, how: str) -> str:
        """Nessie's ``setupSchema``: check the tables that exist, create the missing ones; no
        directory and no version record (a Nessie server would not keep either up to date)."""
        existing = self._existing_columns(NESSIE_TABLES)
        for table in NESSIE_TABLES:
            if table not in existing:
                self._create_table(table)
                continue
            problems = nessie_table_problems(table, existing[table])
            if problems:
                raise BackendSchemaMismatch(
                    self._adapter.name,
                    self._adapter.address,
                    f"table {self._keyspace}.{table} is not a Nessie CASSANDRA2 table "
                    f"({'; '.join(problems)})",
                    f"Use a keyspace whose {table} a Nessie server created, or one without it (lochkit "
                    f"then creates it as Nessie does: {create_table_cql(self._keyspace, table)}); "
                    "lochkit never alters existing tables",
                )
        return f"keyspace {self._keyspace} ({how}), Nessie's tables refs2, objs2 (layout=nessie)"

    def _create_table(self, table: str) -> None:
        self._adapter.execute(create_table_cql(self._keyspace, table), (), "create table " + table)

    def _ensure_keyspace(self, replication: str) -> bool:
        found = self._adapter.execute(
            "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = %s",
            (self._keyspace,),
            "look up the keyspace",
        ).one()
        if found is not None:
            if self._scylla:
                self._refuse_tablets()
            return False
        cql = create_keyspace_cql(self._keyspace, replication, self._scylla)
        if not self._create_keyspace:
            raise BackendStoreMissing(
                self._adapter.name,
                self._adapter.address,
                f"keyspace {self._keyspace} does not exist, and lochkit creates none here"
                + (" (a Nessie server requires its keyspace to exist, too)" if self._nessie else ""),
                f"Create it with the replication your cluster needs (e.g. {cql}), name an existing "
                "keyspace in the URL's path, or add create_keyspace=true to the URL",
            )
        self._adapter.execute(cql, (), f"create keyspace {self._keyspace}")
        return True

    def _refuse_tablets(self) -> None:
        from cassandra import InvalidRequest

        try:
            row = self._adapter.execute(
                "SELECT initial_tablets FROM system_schema.scylla_keyspaces WHERE keyspace_name = %s",
                (self._keyspace,),
                "check the keyspace for tablets",
            ).one()
        except InvalidRequest:  # a ScyllaDB without tablets has no such table
            return
        if row is not None and row[0] is not None:
            raise BackendConfigError(
                self._adapter.name,
                self._adapter.address,
                f"keyspace {self._keyspace} uses tablets, which do not support lightweight transactions",
                "Drop it or use another keyspace; lochkit creates it WITH tablets = {'enabled': false}",
            )

    def _existing_columns(self, tables: Collection[str]) -> dict[str, dict[str, tuple[str, str, int]]]:
        """table -> column -> (kind, CQL type, position) for those of ``tables`` that exist."""
        rows = self._adapter.execute(
            "SELECT table_name, column_name, kind, type, position FROM system_schema.columns "
            "WHERE keyspace_name = %s",
            (self._keyspace,),
            "read the table definitions",
        )
        found: dict[str, dict[str, tuple[str, str, int]]] = {}
        for table, column, kind, cql_type, position in rows:
            if table in tables:
                found.setdefault(table, {})[column] = (kind, cql_type, position)
        return found

    def _check_columns(self, table: str, columns: dict[str, tuple[str, str, int]]) -> None:
        expected = TABLES[table]
        actual = {name: (kind, cql_type) for name, (kind, cql_type, _) in columns.items()}
        if actual == expected:
            return
        differences = [
            f"{name}: expected {want[0]} {want[1]}, found "
            + (f"{actual[name][0]} {actual[name][1]}" if name in actual else "nothing")
            for name, want in expected.items()
            if actual.get(name) != want
        ]
        differences += [f"unexpected column {name}" for name in actual if name not in expected]
        raise self._mismatch(f"table {self._keyspace}.{table} differs ({'; '.join(differences)})")

    def _check_version(self) -> None:
        row = self._adapter.execute(
            f"SELECT version FROM {self._keyspace}.{META_TABLE} WHERE name = 'lochkit'",
            (),
            "read the schema version",
        ).one()
        if row is not None and row[0] != SCHEMA_VERSION:
            raise self._mismatch(f"the tables were created by lochkit schema version {row[0]}")

    def _record_version(self) -> None:
        result = self._adapter.execute(
            f"INSERT INTO {self._keyspace}.{META_TABLE} (name, version, detail) VALUES ('lochkit', %s, %s) "
            "IF NOT EXISTS",
            (SCHEMA_VERSION, f"buckets={BUCKETS}"),
            "record the schema version",
        )
        if not result.was_applied:
            # Another process created the schema first (or the check above raced): verify.
            self._check_version()

    def _mismatch(self, problem: str) -> BackendSchemaMismatch:
        return BackendSchemaMismatch(
            self._adapter.name,
            self._adapter.address,
            f"{problem}; this lochkit uses schema version {SCHEMA_VERSION}",
            "Use another keyspace (the URL's path), or migrate the data with the lochkit version "
            "that wrote it",
        )
