"""The SQL of the PostgreSQL / CockroachDB backend, per dialect, layout and table prefix, and the
row values it sends and reads.

lochkit's own layout has three tables: ``<prefix>refs`` and ``<prefix>objs`` keyed by (repository,
name or id), and ``<prefix>schema`` with one row recording the schema version, so a lochkit that
finds tables of another version says so instead of failing on the first odd column.

Nessie's layout (``layout=nessie``) has the two tables of Nessie's JDBC2 backend, ``refs2`` and
``objs2``, created with Nessie's DDL, every non-key column nullable, and no version record (Nessie
keeps none). Its rows follow Nessie's NULL conventions: ``created_at`` is NULL when 0, ``prev_ptr``
when the history is empty, ``ext_info`` when there is none, and a reference compare-and-swap says
``created_at IS NULL`` / ``ext_info IS NULL`` when it expects those, as Nessie's statements do.

Lists travel as one array parameter (``= ANY(%s)``, ``unnest(...)``), so every statement has a
fixed text (prepared on its first use on a connection) and a handful of bind parameters, far from
PostgreSQL's 65,535 limit; callers still chunk long lists to bound the size of one statement.
Arrays of ``bytea`` (object ids and serialised objects) are sent in binary (``%b``): as text,
psycopg hex-encodes and escapes every element in Python, which made storing a commit of a few
kilobytes cost more than twice its round trip.

Table names are interpolated into the SQL text: the prefix is validated to ``[a-z_][a-z0-9_]*``
(:mod:`backends.postgres.config`), so the names never need quoting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from persist_spi.adapter import ObjRow, RefRow
from persist_spi.layouts import LOCHKIT_LAYOUT, NESSIE_LAYOUT, StorageLayout

#: Bump when the tables change shape; a lochkit finding another number refuses to use the tables.
SCHEMA_VERSION: Final = 1
SCHEMA_COMPONENT: Final = "lochkit"
#: Nessie's JDBC2 table names: fixed, in the connection's current schema.
NESSIE_REFS: Final = "refs2"
NESSIE_OBJS: Final = "objs2"
#: A statement's text and its parameters.
Statement = tuple[str, list[Any]]


@dataclass(frozen=True)
class Dialect:
    """What differs between PostgreSQL and CockroachDB, as far as this backend is concerned."""

    name: str
    #: The backend name shown in messages and reports.
    backend: str
    #: Text type for names. PostgreSQL's default collation follows the locale (which ignores
    #: whitespace and case in places); "C" compares bytes, as Nessie's ref ordering needs.
    #: CockroachDB's STRING already compares bytes.
    name_type: str
    #: Whether ``UPSERT INTO`` exists (CockroachDB; faster there than ON CONFLICT DO UPDATE).
    has_upsert: bool
    #: Text type of Nessie's DDL for this database (its JDBC2 ``DatabaseSpecifics``): PostgreSQL's
    #: ``ucs_basic`` orders by code point; CockroachDB's strings compare bytes already.
    nessie_name_type: str
    #: How the serialised objects are stored, set on the objects table lochkit creates in its own
    #: layout (None: the database's default). See ``_UNCOMPRESSED_VALUES``.
    value_storage: str | None = None


#: PostgreSQL compresses a value of more than about 2 KB before moving it out of the row (the
#: column's default ``EXTENDED`` storage). A commit object (about 6.5 KB: ids and an incremental
#: index of keys and hashes) barely compresses, so every commit paid for a compression attempt
#: that was thrown away. ``EXTERNAL`` moves large values out of the row uncompressed.
_UNCOMPRESSED_VALUES: Final = "EXTERNAL"

POSTGRESQL: Final = Dialect(
    "postgresql",
    "postgres",
    'TEXT COLLATE "C"',
    has_upsert=False,
    nessie_name_type="VARCHAR COLLATE ucs_basic",
    # CockroachDB has no per-column storage clause (and no TOAST): it keeps its default.
    value_storage=_UNCOMPRESSED_VALUES,
)
COCKROACHDB: Final = Dialect(
    "cockroachdb", "cockroachdb", "STRING", has_upsert=True, nessie_name_type="VARCHAR"
)
DIALECTS: Final = {d.name: d for d in (POSTGRESQL, COCKROACHDB)}


def detect_dialect(version_text: str) -> Dialect:
    """The dialect of a server, from ``SELECT version()``. CockroachDB speaks the PostgreSQL wire
    protocol and reports a PostgreSQL ``server_version``, but names itself in ``version()``."""
    return COCKROACHDB if "cockroachdb" in version_text.lower() else POSTGRESQL


def short_version(version_text: str) -> str:
    """'PostgreSQL 15.18 (Debian ...) on x86_64...' -> 'PostgreSQL 15.18 (Debian ...)';
    'CockroachDB CCL v25.2.4 (x86_64-pc-linux-gnu, ...)' -> 'CockroachDB CCL v25.2.4'."""
    if "cockroachdb" in version_text.lower():
        return version_text.split(" (", 1)[0].strip()
    return version_text.split(" on ", 1)[0].strip()


#: The columns each table must have, as ``format_type()`` names them (both dialects agree).
def expected_columns(prefix: str) -> dict[str, dict[str, str]]:
    return {
        f"{prefix}refs": {
            "repo": "text",
            "ref_name": "text",
            "created_at": "bigint",
            "deleted": "boolean",
            "pointer": "bytea",
            "ext_info": "bytea",
            "prev_ptr": "bytea",
        },
        f"{prefix}objs": {
            "repo": "text",
            "obj_id": "bytea",
            "obj_ref": "bigint",
            "obj_type": "text",
            "obj_vers": "text",
            "obj_value": "bytea",
        },
        f"{prefix}schema": {"component": "text", "version": "bigint", "written_by": "text"},
    }


class Statements:
    """Every statement the adapter runs, for one table prefix and dialect."""

    def __init__(self, prefix: str, dialect: Dialect, layout: StorageLayout = LOCHKIT_LAYOUT) -> None:
        self.dialect = dialect
        self.prefix = prefix
        #: Nessie's JDBC2 tables and NULL conventions rather than lochkit's own.
        self.nessie = layout is NESSIE_LAYOUT
        refs, objs = (NESSIE_REFS, NESSIE_OBJS) if self.nessie else (f"{prefix}refs", f"{prefix}objs")
        self.refs, self.objs = refs, objs
        #: The version table; None in Nessie's layout, which records no version.
        self.schema: str | None = None
        self.table_names: tuple[str, ...] = (refs, objs)
        #: Statements run right after a table's CREATE, in the same transaction. Nessie's tables
        #: get none: they are created exactly as Nessie creates them.
        self.after_create: dict[str, tuple[str, ...]] = {}
        if self.nessie:
            self.create = _nessie_tables(dialect.nessie_name_type)
        else:
            self.schema = schema = f"{prefix}schema"
            self.table_names = (refs, objs, schema)
            self.create = _lochkit_tables(refs, objs, schema, dialect.name_type)
            if dialect.value_storage is not None:
                self.after_create[objs] = (
                    f"ALTER TABLE {objs} ALTER COLUMN obj_value SET STORAGE {dialect.value_storage}",
                )
            self.read_version = f"SELECT version, written_by FROM {schema} WHERE component = %s"
            self.write_version = (
                f"INSERT INTO {schema} (component, version, written_by) VALUES (%s, %s, %s) "
                "ON CONFLICT DO NOTHING"
            )
        # pg_catalog rather than information_schema: the latter hides tables the user has no
        # privilege on, which would turn "permission denied" into a confusing "already exists".
        self.inspect = """SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod)
            FROM pg_catalog.pg_attribute a
            JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = current_schema() AND c.relname = ANY(%s)
              AND a.attnum > 0 AND NOT a.attisdropped"""
        # Nessie's schema check compares the primary keys (lochkit's own compares whole tables).
        self.inspect_primary_keys = """SELECT c.relname, a.attname
            FROM pg_catalog.pg_constraint k
            JOIN pg_catalog.pg_class c ON c.oid = k.conrelid
            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY(k.conkey)
            WHERE n.nspname = current_schema() AND c.relname = ANY(%s) AND k.contype = 'p'"""

        ref_cols = "ref_name, pointer, deleted, created_at, ext_info, prev_ptr"
        self.fetch_refs = f"SELECT {ref_cols} FROM {refs} WHERE repo = %s AND ref_name = ANY(%s)"
        self.insert_ref_text = (
            f"INSERT INTO {refs} (repo, {ref_cols}) VALUES (%s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT DO NOTHING"
        )
        # The full expected state in the WHERE clause makes each change one atomic compare-and-swap
        # (PostgreSQL re-checks the predicate after waiting for a concurrent writer's row lock).
        self._update_ref = (
            f"UPDATE {refs} SET pointer = %s, deleted = %s, created_at = %s, ext_info = %s, prev_ptr = %s"
        )
        self._delete_ref = f"DELETE FROM {refs}"

        obj_cols = "obj_id, obj_type, obj_vers, obj_value, obj_ref"
        # One index lookup per id, whatever the statistics say: with ``obj_id = ANY(...)``, a
        # repository the table's statistics did not know yet (every new one, until autovacuum
        # analyses the table) was estimated at one object, and PostgreSQL read all of its objects
        # with the ids as a filter. ``OFFSET 0`` keeps the subquery from being merged into a join
        # the planner could make the same choice for. CockroachDB's planner is another one: it
        # keeps the plain form (its parameters in the same order: ids, then repository).
        if dialect.has_upsert:
            self.fetch_objs = f"SELECT {obj_cols} FROM {objs} WHERE obj_id = ANY(%b) AND repo = %s"
        else:
            self.fetch_objs = (
                f"SELECT o.* FROM unnest(%b::bytea[]) AS u(id) CROSS JOIN LATERAL "
                f"(SELECT {obj_cols} FROM {objs} WHERE repo = %s AND obj_id = u.id OFFSET 0) AS o"
            )
        rows = (
            "SELECT %s::text, u.* FROM unnest(%b::bytea[], %s::text[], %s::text[], %b::bytea[], %s::int8[]) "
            f"AS u({obj_cols})"
        )
        self.insert_objs = (
            f"INSERT INTO {objs} (repo, {obj_cols}) {rows} ON CONFLICT DO NOTHING RETURNING obj_id"
        )
        self.bump_referenced = (
            f"UPDATE {objs} SET obj_ref = %s WHERE repo = %s AND obj_id = ANY(%b) RETURNING obj_id"
        )
        if dialect.has_upsert:
            self.upsert_objs = f"UPSERT INTO {objs} (repo, {obj_cols}) {rows}"
        else:
            self.upsert_objs = (
                f"INSERT INTO {objs} (repo, {obj_cols}) {rows} ON CONFLICT (repo, obj_id) DO UPDATE SET "
                "obj_type = EXCLUDED.obj_type, obj_vers = EXCLUDED.obj_vers, "
                "obj_value = EXCLUDED.obj_value, obj_ref = EXCLUDED.obj_ref"
            )
        # Storing a commit's objects and moving its branch, as one statement (see
        # :meth:`insert_objs_and_update_ref`). Not on CockroachDB (untested there).
        self._insert_objs_and_update_ref: str | None = None
        if not dialect.has_upsert:
            self._insert_objs_and_update_ref = (
                f"WITH ins AS (INSERT INTO {objs} (repo, {obj_cols}) {rows} "
                "ON CONFLICT DO NOTHING RETURNING obj_id), "
                f"swap AS ({self._update_ref} WHERE {{condition}} "
                "AND (SELECT count(*) FROM ins) = %s RETURNING 1) "
                "SELECT ARRAY(SELECT obj_id FROM ins), (SELECT count(*) FROM swap)"
            )
        self.delete_objs = f"DELETE FROM {objs} WHERE repo = %s AND obj_id = ANY(%b)"
        self.delete_obj_if_referenced = f"DELETE FROM {objs} WHERE repo = %s AND obj_id = %s AND obj_ref = %s"
        version_condition = "repo = %s AND obj_id = %s AND obj_type = %s AND obj_vers = %s"
        self.update_obj_if_version = (
            f"UPDATE {objs} SET obj_type = %s, obj_vers = %s, obj_value = %s, obj_ref = %s "
            f"WHERE {version_condition}"
        )
        self.delete_obj_if_version = f"DELETE FROM {objs} WHERE {version_condition}"
        self.list_repositories = f"SELECT DISTINCT repo FROM {refs}"
        self.scan_objs = f"SELECT {obj_cols} FROM {objs} WHERE repo = %s"
        self.scan_objs_of_types = f"{self.scan_objs} AND obj_type = ANY(%s)"
        # One statement for both tables: atomic without BEGIN/COMMIT round trips (a data-modifying
        # WITH clause always runs to completion, whether or not the main statement reads it).
        self.erase_repositories = (
            f"WITH refs_gone AS (DELETE FROM {refs} WHERE repo = ANY(%s)) "
            f"DELETE FROM {objs} WHERE repo = ANY(%s)"
        )

    # --- reference rows: values sent and read, per layout ----------------------------------------

    def insert_ref(self, repo: str, row: RefRow) -> Statement:
        # The insert's columns follow RefRow's field order.
        return self.insert_ref_text, [repo, *self._stored(row)]

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> Statement:
        """One UPDATE that replaces the row if it is still in the ``expected`` state."""
        new_values = self._stored(new)[1:]  # the SET columns: RefRow's fields after the name
        condition, params = self._ref_condition(repo, expected)
        return f"{self._update_ref} WHERE {condition}", [*new_values, *params]

    @property
    def stores_and_swaps_at_once(self) -> bool:
        """Whether :meth:`insert_objs_and_update_ref` exists for this dialect."""
        return self._insert_objs_and_update_ref is not None

    def insert_objs_and_update_ref(
        self, repo: str, rows: Sequence[ObjRow], expected: RefRow, new: RefRow
    ) -> Statement:
        """One statement (so one implicit transaction) that inserts the rows absent and swaps the
        reference only when every row was inserted by it (the row ``new`` points at included). It
        answers the inserted ids and the number of references swapped (0 or 1).

        Every sub-statement of one WITH sees the same snapshot and none sees another's changes;
        the swap reads only the insert's RETURNING rows, and what decides it is the UPDATE's own
        condition, re-checked by PostgreSQL on the newest row version when it had to wait for a
        concurrent writer (as ``update_ref``). A row that existed is neither inserted nor swapped
        over: the caller then refreshes ``referenced`` of the existing rows and swaps in two more
        statements, as ``insert_objs`` and ``update_ref`` do (the count they had before). Leaving
        the refresh out of this statement keeps its plan free of any read of the objects table,
        whose generic plan could otherwise turn into a scan as the table grows."""
        assert self._insert_objs_and_update_ref is not None, "not for this dialect"
        condition, condition_params = self._ref_condition(repo, expected)
        params = [*unnest_params(repo, rows), *self._stored(new)[1:], *condition_params, len(rows)]
        return self._insert_objs_and_update_ref.format(condition=condition), params

    def delete_ref(self, repo: str, expected: RefRow) -> Statement:
        """One DELETE of the row if it is still in the ``expected`` state."""
        condition, params = self._ref_condition(repo, expected)
        return f"{self._delete_ref} WHERE {condition}", params

    def ref_from_db(self, row: Sequence[Any]) -> RefRow:
        """A fetched ``fetch_refs`` row; NULLs (Nessie's "none") read as 0, None and ``b""``."""
        name, pointer, deleted, created_at, ext_info, history = row
        return RefRow(name, pointer, bool(deleted), created_at or 0, ext_info, history or b"")

    def obj_from_db(self, row: Sequence[Any]) -> ObjRow:
        """A fetched object row; a NULL ``obj_ref`` reads as 0, as Nessie reads it."""
        obj_id, obj_type, token, data, referenced = row
        return ObjRow(obj_id, obj_type, token, data, referenced or 0)

    def _stored(self, row: RefRow) -> list[Any]:
        return stored_ref(row, nessie=self.nessie)

    def _ref_condition(self, repo: str, expected: RefRow) -> tuple[str, list[Any]]:
        return ref_condition(repo, expected, nessie=self.nessie, null_safe_equal="IS NOT DISTINCT FROM")


def stored_ref(row: RefRow, *, nessie: bool) -> list[Any]:
    """``row``'s column values in RefRow's order; Nessie's layout writes NULL for 0 and empty."""
    if not nessie:
        return list(row)
    return [
        row.name,
        row.pointer,
        row.deleted,
        row.created_at_micros or None,
        row.extended_info,
        row.previous_pointers or None,
    ]


def ref_condition(
    repo: str, expected: RefRow, *, nessie: bool, null_safe_equal: str
) -> tuple[str, list[Any]]:
    """The WHERE clause and parameters that identify a reference in its expected state (any SQL
    backend's). lochkit's ``created_at`` is never NULL and its nullable ``ext_info`` compares with
    ``null_safe_equal`` (PostgreSQL's IS NOT DISTINCT FROM, MariaDB's <=>); Nessie's layout asks
    ``IS NULL`` for an unset ``created_at`` or ``ext_info``, as Nessie does, so each of its four
    shapes has a fixed text."""
    head = "repo = %s AND ref_name = %s AND pointer = %s AND deleted = %s"
    params: list[Any] = [repo, expected.name, expected.pointer, expected.deleted]
    if not nessie:
        condition = f"{head} AND created_at = %s AND ext_info {null_safe_equal} %s"
        return condition, [*params, expected.created_at_micros, expected.extended_info]
    if expected.created_at_micros:
        head += " AND created_at = %s"
        params.append(expected.created_at_micros)
    else:
        head += " AND created_at IS NULL"
    if expected.extended_info is not None:
        head += " AND ext_info = %s"
        params.append(expected.extended_info)
    else:
        head += " AND ext_info IS NULL"
    return head, params


def _lochkit_tables(refs: str, objs: str, schema: str, name: str) -> dict[str, str]:
    # Fixed-width columns first: PostgreSQL pads less that way.
    return {
        refs: f"""CREATE TABLE IF NOT EXISTS {refs} (
            created_at BIGINT NOT NULL, deleted BOOLEAN NOT NULL, repo {name} NOT NULL,
            ref_name {name} NOT NULL, pointer BYTEA NOT NULL, ext_info BYTEA, prev_ptr BYTEA NOT NULL,
            PRIMARY KEY (repo, ref_name))""",
        objs: f"""CREATE TABLE IF NOT EXISTS {objs} (
            obj_ref BIGINT NOT NULL, repo {name} NOT NULL, obj_id BYTEA NOT NULL,
            obj_type {name} NOT NULL, obj_vers {name}, obj_value BYTEA NOT NULL,
            PRIMARY KEY (repo, obj_id))""",
        schema: f"""CREATE TABLE IF NOT EXISTS {schema} (
            component {name} PRIMARY KEY, version BIGINT NOT NULL, written_by {name} NOT NULL)""",
    }


def _nessie_tables(name: str) -> dict[str, str]:
    """The tables as Nessie's ``Jdbc2Backend`` creates them (column order and types as Nessie's,
    every non-key column nullable); "IF NOT EXISTS" only spares a concurrent creator an error."""
    return {
        NESSIE_REFS: f"""CREATE TABLE IF NOT EXISTS {NESSIE_REFS} (
            repo {name}, ref_name {name}, pointer BYTEA, ext_info BYTEA, prev_ptr BYTEA,
            created_at BIGINT DEFAULT 0, deleted BOOLEAN, PRIMARY KEY (repo, ref_name))""",
        NESSIE_OBJS: f"""CREATE TABLE IF NOT EXISTS {NESSIE_OBJS} (
            repo {name}, obj_id BYTEA, obj_type {name}, obj_vers {name}, obj_value BYTEA,
            obj_ref BIGINT, PRIMARY KEY (repo, obj_id))""",
    }


def unnest_params(repo: str, rows: Sequence[ObjRow]) -> list[Any]:
    """The parameters of the ``unnest(...)`` row source: the repository, then one array per column."""
    return [
        repo,
        [r.obj_id for r in rows],
        [r.obj_type for r in rows],
        [r.version_token for r in rows],
        [r.data for r in rows],
        [r.referenced for r in rows],
    ]
