"""Creating and checking the backend's tables, for ``setup_schema()`` and ``verify_schema()``.

lochkit's own tables are checked strictly (every column and type, and the recorded schema version).
Nessie's (``layout=nessie``) are checked as Nessie's ``Jdbc2Backend`` checks them: the primary-key
columns and their kinds of type must match and the required columns must exist; other columns and
tables are fine, and no version is recorded.

Existing tables are checked before anything is created, so a user who may only read and write rows
(no CREATE privilege) can use tables someone else created. Creation runs in one transaction and
tolerates a concurrent creator: "already exists" errors mean someone else won, and the caller looks
again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any, Protocol

from backends.postgres.statements import (
    NESSIE_OBJS,
    NESSIE_REFS,
    SCHEMA_COMPONENT,
    SCHEMA_VERSION,
    Statements,
    expected_columns,
)

if TYPE_CHECKING:
    from psycopg import Connection

#: What the tables of this lochkit look like: table -> column -> type.
Columns = Mapping[str, Mapping[str, str]]

#: Nessie's primary keys, column -> kind of type (java.sql.Types as PostgreSQL's JDBC driver
#: reports them, which is what Nessie compares): text and character varying are both VARCHAR.
NESSIE_PRIMARY_KEYS: dict[str, dict[str, str]] = {
    NESSIE_REFS: {"repo": "VARCHAR", "ref_name": "VARCHAR"},
    NESSIE_OBJS: {"repo": "VARCHAR", "obj_id": "BINARY"},
}
#: The columns Nessie requires, plus ``obj_ref``: Nessie does not require it, but lochkit writes
#: each object's referenced time there (and compares it before deleting an object), and Nessie's
#: own DDL has always created it.
NESSIE_REQUIRED: dict[str, tuple[str, ...]] = {
    NESSIE_REFS: ("repo", "ref_name", "pointer", "deleted", "created_at", "ext_info", "prev_ptr"),
    NESSIE_OBJS: ("repo", "obj_id", "obj_type", "obj_vers", "obj_value", "obj_ref"),
}


class Tables(Protocol):
    """What judging needs of a backend's statements: the layout and the table names."""

    nessie: bool
    prefix: str
    refs: str
    objs: str
    schema: str | None
    table_names: tuple[str, ...]


@dataclass(frozen=True)
class Rules:
    """What a SQL database's tables must look like: lochkit's columns by table prefix, and the kind
    of type Nessie's JDBC driver reports for a column type (Nessie compares its primary keys' kinds)."""

    expected_columns: Callable[[str], Mapping[str, Mapping[str, str]]]
    jdbc_kind: Callable[[str], str]
    nessie_primary_keys: Mapping[str, Mapping[str, str]]
    #: How the kinds are named here, for the message when a key does not match.
    kinds_explained: str


@dataclass(frozen=True)
class Found:
    """The tables as they are: their columns, and the recorded (version, written_by) if any."""

    columns: Columns
    version: tuple[int, str] | None
    #: table -> its primary-key columns (read for Nessie's layout only).
    primary_keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    #: Tables (or the version row, as the schema table's name) still to create.
    missing: tuple[str, ...]
    #: Why the existing tables cannot be used; None when they can.
    problem: str | None


def written_by() -> str:
    try:
        return f"lochkit {version('lochkit')}"
    except PackageNotFoundError:
        return "lochkit (unknown version)"


def inspect(conn: Connection[Any], statements: Statements) -> Found:
    columns: dict[str, dict[str, str]] = {}
    for table, column, kind in conn.execute(statements.inspect, [list(statements.table_names)]):
        columns.setdefault(table, {})[column] = kind
    if statements.nessie:
        keys: dict[str, list[str]] = {}
        for table, column in conn.execute(statements.inspect_primary_keys, [list(statements.table_names)]):
            keys.setdefault(table, []).append(column)
        return Found(columns, None, {table: tuple(names) for table, names in keys.items()})
    recorded = None
    if statements.schema in columns:
        row = conn.execute(statements.read_version, [SCHEMA_COMPONENT]).fetchone()
        recorded = None if row is None else (int(row[0]), str(row[1]))
    return Found(columns, recorded)


def judge(statements: Tables, found: Found, rules: Rules | None = None) -> Verdict:
    """Compare what exists with what this lochkit needs (PostgreSQL's rules unless others are given)."""
    rules = rules or POSTGRES_RULES
    if statements.nessie:
        return _judge_nessie(found, rules)
    expected = rules.expected_columns(statements.prefix)
    for table, columns in found.columns.items():
        if dict(columns) != expected[table]:
            return Verdict(
                (), f"table {table} has columns {_describe(columns)}, expected {_describe(expected[table])}"
            )
    data_tables = [t for t in (statements.refs, statements.objs) if t in found.columns]
    if statements.schema not in found.columns and data_tables:
        return Verdict(
            (),
            f"table(s) {', '.join(data_tables)} exist without the version table {statements.schema}: "
            "they were created by a lochkit older than schema versioning, or by another program",
        )
    if found.version is not None and found.version[0] != SCHEMA_VERSION:
        number, writer = found.version
        return Verdict(
            (),
            f"the tables were created for schema version {number} (by {writer}); this lochkit "
            f"({written_by()}) uses schema version {SCHEMA_VERSION}",
        )
    missing = tuple(t for t in statements.table_names if t not in found.columns)
    if found.version is None and statements.schema is not None and statements.schema not in missing:
        missing += (statements.schema,)  # the table exists but has no version row yet
    return Verdict(missing, None)


def _judge_nessie(found: Found, rules: Rules) -> Verdict:
    for table, columns in found.columns.items():
        expected_key = rules.nessie_primary_keys[table]
        key = {name: rules.jdbc_kind(columns.get(name, "")) for name in found.primary_keys.get(table, ())}
        if key != expected_key:
            return Verdict(
                (),
                f"table {table} has the primary key {_describe(key)}, but Nessie's {table} has "
                f"{_describe(expected_key)} ({rules.kinds_explained})",
            )
        absent = [name for name in NESSIE_REQUIRED[table] if name not in columns]
        if absent:
            problem = f"table {table} lacks the column(s) {', '.join(absent)} of Nessie's {table}"
            if absent == ["obj_ref"]:
                problem += (
                    "; lochkit writes each object's referenced time there: add it with "
                    f"ALTER TABLE {table} ADD COLUMN obj_ref BIGINT"
                )
            return Verdict((), problem)
    return Verdict(tuple(t for t in (NESSIE_REFS, NESSIE_OBJS) if t not in found.columns), None)


def _jdbc_kind(format_type: str) -> str:
    """The java.sql.Types name PostgreSQL's JDBC driver reports for a column type, for the types
    Nessie's primary keys use; any other type keeps its own name (and so never matches)."""
    if format_type in ("text", "name") or format_type.startswith("character varying"):
        return "VARCHAR"
    if format_type == "bytea":
        return "BINARY"
    return format_type


POSTGRES_RULES = Rules(
    expected_columns,
    _jdbc_kind,
    NESSIE_PRIMARY_KEYS,
    "VARCHAR: text or character varying; BINARY: bytea",
)


def create(conn: Connection[Any], statements: Statements, missing: tuple[str, ...]) -> bool:
    """Create the missing tables and the version row in one transaction. False when a concurrent
    creator got there first (the caller inspects again)."""
    from psycopg import errors

    try:
        with conn.transaction():
            for table in missing:
                conn.execute(statements.create[table])
                for statement in statements.after_create.get(table, ()):
                    conn.execute(statement)
            if statements.schema is not None:
                conn.execute(statements.write_version, [SCHEMA_COMPONENT, SCHEMA_VERSION, written_by()])
    except (errors.DuplicateTable, errors.DuplicateObject, errors.UniqueViolation):
        # PostgreSQL's CREATE TABLE IF NOT EXISTS checks existence before taking locks, so two
        # creators can both pass the check; the loser fails on the catalog's unique index.
        return False
    return True


def mismatch_fix(statements: Tables) -> str:
    tables = statements.table_names
    if statements.nessie:
        return (
            "Point lochkit at the database (or schema, through libpq's options=-csearch_path%3DSCHEMA) "
            "a Nessie server's JDBC2 store uses, or at one without these tables, where lochkit creates "
            f"them with Nessie's DDL (drop {', '.join(tables)} only if their data is disposable)"
        )
    return (
        "Use the lochkit version that created these tables, or export the data and import it with "
        "this version, or point this lochkit at other tables with the table_prefix option "
        f"(drop {', '.join(tables)} only if their data is disposable)"
    )


def _describe(columns: Mapping[str, str]) -> str:
    return "(" + ", ".join(f"{name} {kind}" for name, kind in sorted(columns.items())) + ")"
