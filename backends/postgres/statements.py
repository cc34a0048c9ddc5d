"""The SQL of the PostgreSQL / CockroachDB backend, per dialect and table prefix.

Three tables: ``<prefix>refs`` and ``<prefix>objs`` keyed by (repository, name or id), and
``<prefix>schema`` with one row recording the schema version, so a lochkit that finds tables of
another version says so instead of failing on the first odd column.

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

#: Bump when the tables change shape; a lochkit finding another number refuses to use the tables.
SCHEMA_VERSION: Final = 1
SCHEMA_COMPONENT: Final = "lochkit"


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


POSTGRESQL: Final = Dialect("postgresql", "postgres", 'TEXT COLLATE "C"', has_upsert=False)
COCKROACHDB: Final = Dialect("cockroachdb", "cockroachdb", "STRING", has_upsert=True)
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

    def __init__(self, prefix: str, dialect: Dialect) -> None:
        self.dialect = dialect
        self.prefix = prefix
        self.refs = refs = f"{prefix}refs"
        self.objs = objs = f"{prefix}objs"
        self.schema = schema = f"{prefix}schema"
        self.table_names = (refs, objs, schema)
        name = dialect.name_type
        # Fixed-width columns first: PostgreSQL pads less that way.
        self.create = {
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
        # pg_catalog rather than information_schema: the latter hides tables the user has no
        # privilege on, which would turn "permission denied" into a confusing "already exists".
        self.inspect = """SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod)
            FROM pg_catalog.pg_attribute a
            JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = current_schema() AND c.relname = ANY(%s)
              AND a.attnum > 0 AND NOT a.attisdropped"""
        self.read_version = f"SELECT version, written_by FROM {schema} WHERE component = %s"
        self.write_version = (
            f"INSERT INTO {schema} (component, version, written_by) VALUES (%s, %s, %s) "
            "ON CONFLICT DO NOTHING"
        )

        ref_cols = "ref_name, pointer, deleted, created_at, ext_info, prev_ptr"
        self.fetch_refs = f"SELECT {ref_cols} FROM {refs} WHERE repo = %s AND ref_name = ANY(%s)"
        self.insert_ref = (
            f"INSERT INTO {refs} (repo, {ref_cols}) VALUES (%s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT DO NOTHING"
        )
        # The full expected state in the WHERE clause makes each change one atomic compare-and-swap
        # (PostgreSQL re-checks the predicate after waiting for a concurrent writer's row lock).
        # ext_info is nullable, hence IS NOT DISTINCT FROM.
        ref_condition = (
            "repo = %s AND ref_name = %s AND pointer = %s AND deleted = %s AND created_at = %s "
            "AND ext_info IS NOT DISTINCT FROM %s"
        )
        self.update_ref = (
            f"UPDATE {refs} SET pointer = %s, deleted = %s, created_at = %s, ext_info = %s, prev_ptr = %s "
            f"WHERE {ref_condition}"
        )
        self.delete_ref = f"DELETE FROM {refs} WHERE {ref_condition}"

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


def ref_condition(repo: str, expected: RefRow) -> list[Any]:
    """The parameters that identify a reference in its expected state, for a compare-and-swap."""
    return [
        repo,
        expected.name,
        expected.pointer,
        expected.deleted,
        expected.created_at_micros,
        expected.extended_info,
    ]


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
