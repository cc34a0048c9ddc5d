"""Creating and checking the MariaDB / MySQL backend's tables.

The checks are the PostgreSQL backend's (:func:`backends.postgres.schema.judge`) with this
database's rules: lochkit's tables must have exactly their columns and types (information_schema's
``DATA_TYPE``) and the recorded schema version; Nessie's need its primary-key columns, of the kinds
Nessie's JDBC driver reports, and its required columns.

MariaDB commits each CREATE TABLE on its own (DDL is not transactional), so the tables are created
one statement at a time with ``IF NOT EXISTS``: a concurrent creator's table is simply found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from backends.mariadb.statements import NESSIE_OBJS, NESSIE_REFS, SCHEMA_COMPONENT, SCHEMA_VERSION, Statements
from backends.mariadb.statements import expected_columns as lochkit_columns
from backends.postgres.schema import NESSIE_REQUIRED, Found, Rules, written_by

if TYPE_CHECKING:
    from pymysql.connections import Connection

__all__ = ["NESSIE_REQUIRED", "RULES", "create", "inspect", "mismatch_fix"]


def _jdbc_kind(data_type: str) -> str:
    """The java.sql.Types name MariaDB's JDBC driver reports for the types of Nessie's keys."""
    if data_type in ("varchar", "char", "text", "tinytext"):
        return "VARCHAR"
    if data_type in ("tinyblob", "varbinary", "binary"):
        return "VARBINARY"
    return data_type


RULES = Rules(
    lochkit_columns,
    _jdbc_kind,
    {
        NESSIE_REFS: {"repo": "VARCHAR", "ref_name": "VARCHAR"},
        NESSIE_OBJS: {"repo": "VARCHAR", "obj_id": "VARBINARY"},
    },
    "VARCHAR: varchar or char; VARBINARY: tinyblob, varbinary or binary",
)


def inspect(conn: Connection[Any], statements: Statements) -> Found:
    names = list(statements.table_names)
    columns: dict[str, dict[str, str]] = {}
    with conn.cursor() as cursor:
        cursor.execute(statements.inspect, [names])
        for table, column, kind in cursor.fetchall():
            columns.setdefault(table, {})[column] = str(kind).lower()
        if statements.nessie:
            keys: dict[str, list[str]] = {}
            cursor.execute(statements.inspect_primary_keys, [names])
            for table, column in cursor.fetchall():
                keys.setdefault(table, []).append(column)
            return Found(columns, None, {table: tuple(cols) for table, cols in keys.items()})
        recorded = None
        if statements.schema in columns:
            cursor.execute(statements.read_version, [SCHEMA_COMPONENT])
            row = cursor.fetchone()
            recorded = None if row is None else (int(row[0]), str(row[1]))
    return Found(columns, recorded)


def create(conn: Connection[Any], statements: Statements, missing: tuple[str, ...]) -> bool:
    """Create the missing tables (each its own implicit commit), then the version row."""
    with conn.cursor() as cursor:
        for table in missing:
            if table in statements.create:
                cursor.execute(statements.create[table])
        if statements.schema is not None:
            cursor.execute(statements.write_version, [SCHEMA_COMPONENT, SCHEMA_VERSION, written_by()])
    return True


def mismatch_fix(statements: Statements) -> str:
    tables = ", ".join(statements.table_names)
    if statements.nessie:
        return (
            "Point lochkit at the database a Nessie server's JDBC2 store uses, or at one without these "
            f"tables, where lochkit creates them with Nessie's DDL (drop {tables} only if their data is "
            "disposable)"
        )
    return (
        "Use the lochkit version that created these tables, or point this lochkit at other tables with "
        f"the table_prefix option (drop {tables} only if their data is disposable)"
    )
