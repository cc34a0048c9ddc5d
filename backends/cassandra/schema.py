"""Keyspace and tables of the Cassandra/ScyllaDB backend, created on first use and checked after.

Layout (see docs/backends/cassandra.md for the reasoning):

* ``refs`` and ``objs``: one partition per row, keyed ``(repo, name|id)``, so every point read and
  every lightweight transaction (Paxos runs per partition) touches exactly one small partition and
  concurrent LWTs on different rows never contend.
* ``repo_keys``: a per-repository directory of the rows in ``refs`` and ``objs``, partitioned by
  ``(repo, bucket)`` with ``BUCKETS`` buckets, so scanning or erasing a repository reads its own
  directory partitions instead of filtering the whole table (Nessie's ALLOW FILTERING scan).
* ``lochkit_schema``: the schema version, so tables of another lochkit version are refused.
"""

from __future__ import annotations

import zlib
from typing import Any, Final

from persist_spi.errors import BackendConfigError, BackendSchemaMismatch

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


def bucket_of(key: bytes) -> int:
    """Stable across processes and versions (unlike ``hash``)."""
    return zlib.crc32(key) % BUCKETS


def create_table_cql(keyspace: str, table: str) -> str:
    columns = ", ".join(f"{name} {cql_type}" for name, (_, cql_type) in TABLES[table].items())
    return f"CREATE TABLE IF NOT EXISTS {keyspace}.{table} ({columns}, {_PRIMARY_KEYS[table]})"


def create_keyspace_cql(keyspace: str, replication: str, scylla: bool) -> str:
    # ScyllaDB tablets do not support lightweight transactions, and every lochkit write that must
    # not be lost is one: a ScyllaDB keyspace must use vnodes.
    tablets = " AND tablets = {'enabled': false}" if scylla else ""
    return f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = {replication}{tablets}"


class SchemaManager:
    """Runs the DDL and checks; ``execute(cql, params)`` is the adapter's statement runner."""

    def __init__(self, adapter: Any, keyspace: str, scylla: bool) -> None:
        self._adapter = adapter
        self._keyspace = keyspace
        self._scylla = scylla

    def setup(self, replication: str) -> str:
        created = self._ensure_keyspace(replication)
        existing = self._existing_columns()
        if META_TABLE in existing:
            self._check_version()
        for table in TABLES:
            if table in existing:
                self._check_columns(table, existing[table])
            else:
                self._adapter.execute(create_table_cql(self._keyspace, table), (), "create table " + table)
        self._record_version()
        how = "created" if created else "existing"
        return (
            f"keyspace {self._keyspace} ({how}), tables refs, objs, repo_keys ({BUCKETS} buckets per "
            f"repository), schema version {SCHEMA_VERSION}"
        )

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

    def _existing_columns(self) -> dict[str, dict[str, tuple[str, str]]]:
        rows = self._adapter.execute(
            "SELECT table_name, column_name, kind, type FROM system_schema.columns WHERE keyspace_name = %s",
            (self._keyspace,),
            "read the table definitions",
        )
        found: dict[str, dict[str, tuple[str, str]]] = {}
        for table, column, kind, cql_type in rows:
            if table in TABLES:
                found.setdefault(table, {})[column] = (kind, cql_type)
        return found

    def _check_columns(self, table: str, actual: dict[str, tuple[str, str]]) -> None:
        expected = TABLES[table]
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
