"""Every CQL statement of the Cassandra / ScyllaDB backend, and the values a row binds to them.

In the templates ``{ks}`` stands for the keyspace and ``{refs}``, ``{objs}``, ``{directory}`` for the
tables of the layout (:class:`~backends.cassandra.schema.TableNames`; see :func:`cql`). The tables
are described in :mod:`backends.cassandra.schema`.

Every conditional write is a lightweight transaction (``IF NOT EXISTS`` / ``IF EXISTS`` /
``IF col = ?``), in both layouts; the adapter prepares those as not idempotent, so the driver never
retries them.

NULL conventions: lochkit's layout writes an empty reference history as an empty blob; Nessie's
layout writes it as null, as Nessie does (``ProtoSerialization.serializePreviousPointers`` returns
null for none). In both, ``created_at`` is always written (0 when unknown), and an absent extended
info or version token is null.
"""

from __future__ import annotations

from typing import Any, Final

from backends.cassandra.schema import TableNames
from persist_spi.adapter import ObjRow, RefRow

_OBJ_COLUMNS: Final = "obj_id, obj_type, obj_vers, obj_value, obj_ref"
_REF_COLUMNS: Final = "ref_name, pointer, deleted, created_at, ext_info, prev_ptr"
_REF_CONDITION: Final = "IF pointer = ? AND deleted = ? AND created_at = ? AND ext_info = ?"

CASSANDRA_VERSION: Final = "SELECT release_version FROM system.local"
SCYLLA_VERSION: Final = "SELECT version FROM system.versions WHERE key = 'local'"

FETCH_REFS: Final = f"SELECT {_REF_COLUMNS} FROM {{ks}}.{{refs}} WHERE repo = ? AND ref_name IN ?"
INSERT_REF: Final = (
    f"INSERT INTO {{ks}}.{{refs}} (repo, {_REF_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) IF NOT EXISTS"
)
UPDATE_REF: Final = (
    "UPDATE {ks}.{refs} SET pointer = ?, deleted = ?, created_at = ?, ext_info = ?, prev_ptr = ? "
    f"WHERE repo = ? AND ref_name = ? {_REF_CONDITION}"
)
DELETE_REF: Final = f"DELETE FROM {{ks}}.{{refs}} WHERE repo = ? AND ref_name = ? {_REF_CONDITION}"
LIST_REPOSITORIES: Final = "SELECT DISTINCT repo, ref_name FROM {ks}.{refs}"

FETCH_OBJS: Final = f"SELECT {_OBJ_COLUMNS} FROM {{ks}}.{{objs}} WHERE repo = ? AND obj_id IN ?"
INSERT_OBJ: Final = (
    f"INSERT INTO {{ks}}.{{objs}} (repo, {_OBJ_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) IF NOT EXISTS"
)
#: IF EXISTS: a row deleted since the insert was refused must not come back as a row that holds
#: nothing but obj_ref.
BUMP_REFERENCED: Final = "UPDATE {ks}.{objs} SET obj_ref = ? WHERE repo = ? AND obj_id = ? IF EXISTS"
UPSERT_OBJ: Final = f"INSERT INTO {{ks}}.{{objs}} (repo, {_OBJ_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"
DELETE_OBJ: Final = "DELETE FROM {ks}.{objs} WHERE repo = ? AND obj_id = ?"
DELETE_OBJ_IF_REFERENCED: Final = "DELETE FROM {ks}.{objs} WHERE repo = ? AND obj_id = ? IF obj_ref = ?"
UPDATE_OBJ_IF_VERSION: Final = (
    "UPDATE {ks}.{objs} SET obj_vers = ?, obj_value = ?, obj_ref = ? WHERE repo = ? AND obj_id = ? "
    "IF obj_type = ? AND obj_vers = ?"
)
DELETE_OBJ_IF_VERSION: Final = (
    "DELETE FROM {ks}.{objs} WHERE repo = ? AND obj_id = ? IF obj_type = ? AND obj_vers = ?"
)

INDEX_KEY: Final = "INSERT INTO {ks}.{directory} (repo, bucket, kind, row_key) VALUES (?, ?, ?, ?)"
READ_DIRECTORY: Final = (
    "SELECT kind, row_key FROM {ks}.{directory} WHERE repo = ? AND bucket IN ? AND kind IN ?"
)
#: Nessie's layout has no directory: a repository's rows are found by filtering the whole table
#: (every node reads all its partitions; the cost grows with the table, not the repository).
SCAN_OBJS: Final = f"SELECT {_OBJ_COLUMNS} FROM {{ks}}.{{objs}} WHERE repo = ? ALLOW FILTERING"
SCAN_OBJ_IDS: Final = "SELECT obj_id FROM {ks}.{objs} WHERE repo = ? ALLOW FILTERING"
SCAN_REF_NAMES: Final = "SELECT ref_name FROM {ks}.{refs} WHERE repo = ? ALLOW FILTERING"
#: Erasing: a reference row without condition, then the repository's whole directory.
ERASE_REF: Final = "DELETE FROM {ks}.{refs} WHERE repo = ? AND ref_name = ?"
ERASE_DIRECTORY: Final = "DELETE FROM {ks}.{directory} WHERE repo = ? AND bucket IN ?"


def cql(template: str, keyspace: str, tables: TableNames) -> str:
    """``template`` with the keyspace and the layout's table names filled in."""
    return template.format(ks=keyspace, refs=tables.refs, objs=tables.objs, directory=tables.directory)


def ref_values(row: RefRow, *, unset_nulls: bool, empty_history_null: bool) -> tuple[Any, ...]:
    """(name, pointer, deleted, created_at, ext_info, prev_ptr) for an INSERT (``unset_nulls``)
    or an UPDATE. ``empty_history_null``: Nessie's layout, where no history is null."""
    # An INSERT of a new row leaves absent values unset instead of writing null tombstones (they
    # read back as null all the same); an UPDATE must write null to clear a value the row had.
    history = row.previous_pointers or (None if empty_history_null else b"")
    return (
        row.name,
        row.pointer,
        row.deleted,
        row.created_at_micros,
        _absent(row.extended_info, unset_nulls),
        _absent(history, unset_nulls),
    )


def ref_condition(row: RefRow) -> tuple[Any, ...]:
    # `ext_info = null` is a valid LWT condition: it holds when the column has no value.
    return (row.pointer, row.deleted, row.created_at_micros, row.extended_info)


def obj_values(row: ObjRow, *, unset_nulls: bool) -> tuple[Any, ...]:
    # No version token (objects that are not updateable): null, in both layouts.
    return (row.obj_id, row.obj_type, _absent(row.version_token, unset_nulls), row.data, row.referenced)


def _absent(value: Any, unset_nulls: bool) -> Any:
    return unset() if value is None and unset_nulls else value


def unset() -> Any:
    from cassandra.query import UNSET_VALUE

    return UNSET_VALUE
