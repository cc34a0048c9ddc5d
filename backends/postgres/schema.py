"""Creating and checking the backend's tables, for ``setup_schema()``.

Existing tables are checked before anything is created, so a user who may only read and write rows
(no CREATE privilege) can use tables someone else created. Creation runs in one transaction and
tolerates a concurrent creator: "already exists" errors mean someone else won, and the caller looks
again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from backends.postgres.statements import SCHEMA_COMPONENT, SCHEMA_VERSION, Statements, expected_columns

if TYPE_CHECKING:
    from psycopg import Connection

#: What the tables of this lochkit look like: table -> column -> type.
Columns = Mapping[str, Mapping[str, str]]


@dataclass(frozen=True)
class Found:
    """The tables as they are: their columns, and the recorded (version, written_by) if any."""

    columns: Columns
    version: tuple[int, str] | None


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
    recorded = None
    if statements.schema in columns:
        row = conn.execute(statements.read_version, [SCHEMA_COMPONENT]).fetchone()
        recorded = None if row is None else (int(row[0]), str(row[1]))
    return Found(columns, recorded)


def judge(statements: Statements, found: Found) -> Verdict:
    """Compare what exists with what this lochkit needs."""
    expected = expected_columns(statements.prefix)
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
    if found.version is None and statements.schema not in missing:
        missing += (statements.schema,)  # the table exists but has no version row yet
    return Verdict(missing, None)


def create(conn: Connection[Any], statements: Statements, missing: tuple[str, ...]) -> bool:
    """Create the missing tables and the version row in one transaction. False when a concurrent
    creator got there first (the caller inspects again)."""
    from psycopg import errors

    try:
        with conn.transaction():
            for table in missing:
                conn.execute(statements.create[table])
            conn.execute(statements.write_version, [SCHEMA_COMPONENT, SCHEMA_VERSION, written_by()])
    except (errors.DuplicateTable, errors.DuplicateObject, errors.UniqueViolation):
        # PostgreSQL's CREATE TABLE IF NOT EXISTS checks existence before taking locks, so two
        # creators can both pass the check; the loser fails on the catalog's unique index.
        return False
    return True


def mismatch_fix(tables: tuple[str, ...]) -> str:
    return (
        "Use the lochkit version that created these tables, or export the data and import it with "
        "this version, or point this lochkit at other tables with the table_prefix option "
        f"(drop {', '.join(tables)} only if their data is disposable)"
    )


def _describe(columns: Mapping[str, str]) -> str:
    return "(" + ", ".join(f"{name} {kind}" for name, kind in sorted(columns.items())) + ")"
