"""Every CQL statement of the Cassandra / ScyllaDB backend (``{ks}`` stands for the keyspace), and
the values a row binds to them. The tables are described in :mod:`backends.cassandra.schema`.

Every conditional write is a lightweight transaction (``IF NOT EXISTS`` / ``IF EXISTS`` /
``IF col = ?``); the adapter prepares those as not idempotent, so the driver never retries them.
"""

from __future__ import annotations

from typing import Any, Final

from persist_spi.adapter import ObjRow, RefRow

_OBJ_COLUMNS: Final = "obj_id, obj_type, obj_vers, obj_value, obj_ref"
_REF_COLUMNS: Final = "ref_name, pointer, deleted, created_at, ext_info, prev_ptr"
_REF_CONDITION: Final = "IF pointer = ? AND deleted = ? AND created_at = ? AND ext_info = ?"

CASSANDRA_VERSION: Final = "SELECT release_version FROM system.local"
SCYLLA_VERSION: Final = "SELECT version FROM system.versions WHERE key = 'local'"

FETCH_REFS: Final = f"SELECT {_REF_COLUMNS} FROM {{ks}}.refs WHERE repo = ? AND ref_name IN ?"
INSERT_REF: Final = (
    f"INSERT INTO {{ks}}.refs (repo, {_REF_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) IF NOT EXISTS"
)
UPDATE_REF: Final = (
    "UPDATE {ks}.refs SET pointer = ?, deleted = ?, created_at = ?, ext_info = ?, prev_ptr = ? "
    f"WHERE repo = ? AND ref_name = ? {_REF_CONDITION}"
)
DELETE_REF: Final = f"DELETE FROM {{ks}}.refs WHERE repo = ? AND ref_name = ? {_REF_CONDITION}"
LIST_REPOSITORIES: Final = "SELECT DISTINCT repo, ref_name FROM {ks}.refs"

FETCH_OBJS: Final = f"SELECT {_OBJ_COLUMNS} FROM {{ks}}.objs WHERE repo = ? AND obj_id IN ?"
INSERT_OBJ: Final = f"INSERT INTO {{ks}}.objs (repo, {_OBJ_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) IF NOT EXISTS"
#: IF EXISTS: a row deleted since the insert was refused must not come back as a row that holds
#: nothing but obj_ref.
BUMP_REFERENCED: Final = "UPDATE {ks}.objs SET obj_ref = ? WHERE repo = ? AND obj_id = ? IF EXISTS"
UPSERT_OBJ: Final = f"INSERT INTO {{ks}}.objs (repo, {_OBJ_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"
DELETE_OBJ: Final = "DELETE FROM {ks}.objs WHERE repo = ? AND obj_id = ?"
DELETE_OBJ_IF_REFERENCED: Final = "DELETE FROM {ks}.objs WHERE repo = ? AND obj_id = ? IF obj_ref = ?"
UPDATE_OBJ_IF_VERSION: Final = (
    "UPDATE {ks}.objs SET obj_vers = ?, obj_value = ?, obj_ref = ? WHERE repo = ? AND obj_id = ? "
    "IF obj_type = ? AND obj_vers = ?"
)
DELETE_OBJ_IF_VERSION: Final = (
    "DELETE FROM {ks}.objs WHERE repo = ? AND obj_id = ? IF obj_type = ? AND obj_vers = ?"
)

INDEX_KEY: Final = "INSERT INTO {ks}.repo_keys (repo, bucket, kind, row_key) VALUES (?, ?, ?, ?)"
READ_DIRECTORY: Final = (
    "SELECT kind, row_key FROM {ks}.repo_keys WHERE repo = ? AND bucket IN ? AND kind IN ?"
)
#: Erasing: a reference row without condition, then the repository's whole directory.
ERASE_REF: Final = "DELETE FROM {ks}.refs WHERE repo = ? AND ref_name = ?"
ERASE_DIRECTORY: Final = "DELETE FROM {ks}.repo_keys WHERE repo = ? AND bucket IN ?"


def ref_values(row: RefRow, *, unset_nulls: bool) -> tuple[Any, ...]:
    # An INSERT of a new row leaves absent values unset instead of writing null tombstones; an
    # UPDATE must write null to clear a value the row had before.
    ext = row.extended_info if row.extended_info is not None or not unset_nulls else unset()
    return (row.name, row.pointer, row.deleted, row.created_at_micros, ext, row.previous_pointers)


def ref_condition(row: RefRow) -> tuple[Any, ...]:
    # `ext_info = null` is a valid LWT condition: it holds when the column has no value.
    return (row.pointer, row.deleted, row.created_at_micros, row.extended_info)


def obj_values(row: ObjRow, *, unset_nulls: bool) -> tuple[Any, ...]:
    token = row.version_token if row.version_token is not None or not unset_nulls else unset()
    return (row.obj_id, row.obj_type, token, row.data, row.referenced)


def unset() -> Any:
    from cassandra.query import UNSET_VALUE

    return UNSET_VALUE
