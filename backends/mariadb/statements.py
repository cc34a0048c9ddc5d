"""The SQL of the MariaDB / MySQL backend, per layout and table prefix, and the row values it sends
and reads.

lochkit's own layout has three InnoDB tables, as the PostgreSQL backend's: ``<prefix>refs`` and
``<prefix>objs`` keyed by (repository, name or id), and ``<prefix>schema`` recording the schema
version. Repository and reference names are stored as their UTF-8 bytes (``VARBINARY(1024)``): they
compare byte by byte, as Nessie's reference order needs, trailing spaces included (every text
collation of MariaDB's ``utf8mb4_bin`` kind pads them away), the same on MariaDB and MySQL, and a
name of lochkit's longest (1024 bytes) fits in the primary key, which a ``VARCHAR(1024)`` of up to
4 bytes per character would not.

Nessie's layout (``layout=nessie``) has the two tables of Nessie's JDBC2 backend with the column
types Nessie uses on MariaDB and MySQL (names ``VARCHAR(255) utf8mb4_bin``, ids ``TINYBLOB``, values
``LONGBLOB``, flags ``BIT(1)``, the id key column as ``obj_id(255)``), every non-key column
nullable, and Nessie's NULL conventions as in the PostgreSQL backend.

PyMySQL interpolates parameters on the client, so a list parameter becomes ``(a, b, ...)`` and
``IN %s`` takes a whole list. Table names are interpolated into the SQL text: the prefix is
validated to ``[a-z_][a-z0-9_]*`` (:mod:`backends.mariadb.config`), so they never need quoting.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from backends.postgres.statements import ref_condition, stored_ref
from persist_spi.adapter import ObjRow, RefRow
from persist_spi.layouts import LOCHKIT_LAYOUT, NESSIE_LAYOUT, StorageLayout

#: Bump when the tables change shape; a lochkit finding another number refuses to use the tables.
SCHEMA_VERSION: Final = 1
SCHEMA_COMPONENT: Final = "lochkit"
NESSIE_REFS: Final = "refs2"
NESSIE_OBJS: Final = "objs2"
#: A statement's text and its parameters.
Statement = tuple[str, list[Any]]
#: Longest name, object id, type or version token the tables hold (VARCHAR(255), VARBINARY(255)).
MAX_KEY_LENGTH: Final = 255

#: Nessie's name type on MariaDB / MySQL. ``utf8mb4_bin`` compares bytes but, like every PAD SPACE
#: collation, ignores trailing spaces ('a' = 'a '); lochkit's own tables use it for types and tokens.
_NESSIE_NAME = "VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
#: lochkit's repository and reference names: UTF-8 bytes.
_NAME_BYTES = "VARBINARY(1024)"
#: Longest repository name, in UTF-8 bytes, lochkit's tables hold (Nessie's: 255 characters).
MAX_NAME_BYTES: Final = 1024
_ROW_VALUES = "(%s, %s, %s, %s, %s, %s)"
#: The session variable the store-and-swap keeps its insert's warning count in (set before each use).
_INSERT_WARNINGS = "@lochkit_insert_warnings"


def expected_columns(prefix: str) -> dict[str, dict[str, str]]:
    """The columns each of lochkit's tables must have, as information_schema's DATA_TYPE names them."""
    return {
        f"{prefix}refs": {
            "repo": "varbinary",
            "ref_name": "varbinary",
            "pointer": "varbinary",
            "deleted": "tinyint",
            "created_at": "bigint",
            "ext_info": "varbinary",
            "prev_ptr": "longblob",
        },
        f"{prefix}objs": {
            "repo": "varbinary",
            "obj_id": "varbinary",
            "obj_type": "varchar",
            "obj_vers": "varchar",
            "obj_value": "longblob",
            "obj_ref": "bigint",
        },
        f"{prefix}schema": {"component": "varchar", "version": "bigint", "written_by": "varchar"},
    }


class Statements:
    """Every statement the adapter runs, for one table prefix and layout."""

    def __init__(self, prefix: str, layout: StorageLayout = LOCHKIT_LAYOUT) -> None:
        self.prefix = prefix
        self.nessie = layout is NESSIE_LAYOUT
        refs, objs = (NESSIE_REFS, NESSIE_OBJS) if self.nessie else (f"{prefix}refs", f"{prefix}objs")
        self.refs, self.objs = refs, objs
        self.schema: str | None = None
        self.table_names: tuple[str, ...] = (refs, objs)
        if self.nessie:
            self.create = _nessie_tables()
        else:
            self.schema = schema = f"{prefix}schema"
            self.table_names = (refs, objs, schema)
            self.create = _lochkit_tables(refs, objs, schema)
            self.read_version = f"SELECT version, written_by FROM {schema} WHERE component = %s"
            self.write_version = (
                f"INSERT IGNORE INTO {schema} (component, version, written_by) VALUES (%s, %s, %s)"
            )
        self.inspect = (
            "SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS "
            "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN %s"
        )
        self.inspect_primary_keys = (
            "SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE "
            "WHERE TABLE_SCHEMA = DATABASE() AND CONSTRAINT_NAME = 'PRIMARY' AND TABLE_NAME IN %s "
            "ORDER BY TABLE_NAME, ORDINAL_POSITION"
        )

        ref_cols = "ref_name, pointer, deleted, created_at, ext_info, prev_ptr"
        self.fetch_refs = f"SELECT {ref_cols} FROM {refs} WHERE repo = %s AND ref_name IN %s"
        # A plain INSERT (a duplicate key is an error the adapter reads as "exists"): INSERT IGNORE
        # would also turn a too-long name into a silently truncated one.
        self.insert_ref_text = f"INSERT INTO {refs} (repo, {ref_cols}) VALUES (%s, %s, %s, %s, %s, %s, %s)"
        # The full expected state in the WHERE clause makes each change one atomic compare-and-swap:
        # InnoDB evaluates an UPDATE's or DELETE's condition on the newest committed row under its
        # row lock, whatever the isolation level.
        self._update_ref = (
            f"UPDATE {refs} SET pointer = %s, deleted = %s, created_at = %s, ext_info = %s, prev_ptr = %s"
        )
        self._delete_ref = f"DELETE FROM {refs}"

        obj_cols = "obj_id, obj_type, obj_vers, obj_value, obj_ref"
        self.fetch_objs = f"SELECT {obj_cols} FROM {objs} WHERE repo = %s AND obj_id IN %s"
        # Values are checked for length before they are sent (IGNORE would truncate, not refuse).
        self._insert_objs = f"INSERT IGNORE INTO {objs} (repo, {obj_cols}) VALUES "
        self.bump_referenced = f"UPDATE {objs} SET obj_ref = %s WHERE repo = %s AND obj_id IN %s"
        self._upsert_objs = f"INSERT INTO {objs} (repo, {obj_cols}) VALUES "
        self._upsert_update = (
            " ON DUPLICATE KEY UPDATE obj_type = VALUES(obj_type), obj_vers = VALUES(obj_vers), "
            "obj_value = VALUES(obj_value), obj_ref = VALUES(obj_ref)"
        )
        self.delete_objs = f"DELETE FROM {objs} WHERE repo = %s AND obj_id IN %s"
        self.delete_obj_if_referenced = f"DELETE FROM {objs} WHERE repo = %s AND obj_id = %s AND obj_ref = %s"
        version_condition = "repo = %s AND obj_id = %s AND obj_type = %s AND obj_vers = %s"
        self.update_obj_if_version = (
            f"UPDATE {objs} SET obj_type = %s, obj_vers = %s, obj_value = %s, obj_ref = %s "
            f"WHERE {version_condition}"
        )
        self.delete_obj_if_version = f"DELETE FROM {objs} WHERE {version_condition}"
        self.list_repositories = f"SELECT DISTINCT repo FROM {refs}"
        # Keyset pages: each is a statement of its own, so a scan holds no connection between pages.
        self._scan_page = f"SELECT {obj_cols} FROM {objs} WHERE repo = %s AND obj_id > %s"
        self.erase_refs = f"DELETE FROM {refs} WHERE repo IN %s"
        self.erase_objs = f"DELETE FROM {objs} WHERE repo IN %s"

    # --- objects ----------------------------------------------------------------------------------

    def insert_objs(self, repo: str, rows: Sequence[ObjRow], *, returning: bool) -> Statement:
        """Insert-if-absent of ``rows``; with ``returning`` (MariaDB 10.5+), the inserted ids come back."""
        text = self._insert_objs + ", ".join([_ROW_VALUES] * len(rows))
        return (text + " RETURNING obj_id" if returning else text), _row_params(repo, rows)

    def insert_objs_and_update_ref(
        self, repo: str, rows: Sequence[ObjRow], expected: RefRow, new: RefRow
    ) -> Statement:
        """Three statements sent in one request, each committed on its own, in order: the
        insert-if-absent answering the inserted ids; keeping the count of warnings it raised (each
        row that existed raises one, as does anything else INSERT IGNORE let through); the
        reference's UPDATE, which matches only when that count is 0. MariaDB has no writable
        common table expression, and ``ROW_COUNT()`` answers -1 after a statement with RETURNING."""
        insert, insert_params = self.insert_objs(repo, rows, returning=True)
        update, update_params = self.update_ref(repo, expected, new)
        text = f"{insert}; SET {_INSERT_WARNINGS} = @@warning_count; {update} AND {_INSERT_WARNINGS} = 0"
        return text, [*insert_params, *update_params]

    def upsert_objs(self, repo: str, rows: Sequence[ObjRow]) -> Statement:
        text = self._upsert_objs + ", ".join([_ROW_VALUES] * len(rows)) + self._upsert_update
        return text, _row_params(repo, rows)

    def scan_page(self, repo: str, after: bytes, types: Sequence[str] | None, size: int) -> Statement:
        text, params = self._scan_page, [repo, after]
        if types:
            text += " AND obj_type IN %s"
            params.append(list(types))
        return f"{text} ORDER BY obj_id LIMIT {int(size)}", params

    # --- reference rows: values sent and read, per layout ----------------------------------------

    def insert_ref(self, repo: str, row: RefRow) -> Statement:
        return self.insert_ref_text, [repo, *self._stored(row)]

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> Statement:
        """One UPDATE that replaces the row if it is still in the ``expected`` state."""
        condition, params = self._ref_condition(repo, expected)
        return f"{self._update_ref} WHERE {condition}", [*self._stored(new)[1:], *params]

    def delete_ref(self, repo: str, expected: RefRow) -> Statement:
        """One DELETE of the row if it is still in the ``expected`` state."""
        condition, params = self._ref_condition(repo, expected)
        return f"{self._delete_ref} WHERE {condition}", params

    def ref_from_db(self, row: Sequence[Any]) -> RefRow:
        """A fetched ``fetch_refs`` row; NULLs (Nessie's "none") read as 0, None and ``b""``, and a
        ``BIT(1)`` flag (bytes) as a bool."""
        name, pointer, deleted, created_at, ext_info, history = row
        return RefRow(
            text(name),
            bytes(pointer),
            _flag(deleted),
            created_at or 0,
            _bytes_or_none(ext_info),
            bytes(history or b""),
        )

    def obj_from_db(self, row: Sequence[Any]) -> ObjRow:
        """A fetched object row; a NULL ``obj_ref`` reads as 0, as Nessie reads it."""
        obj_id, obj_type, token, data, referenced = row
        return ObjRow(bytes(obj_id), obj_type, token, bytes(data), referenced or 0)

    def _stored(self, row: RefRow) -> list[Any]:
        return stored_ref(row, nessie=self.nessie)

    def _ref_condition(self, repo: str, expected: RefRow) -> tuple[str, list[Any]]:
        return ref_condition(repo, expected, nessie=self.nessie, null_safe_equal="<=>")


def text(value: Any) -> str:
    """A name as read: lochkit's tables hold UTF-8 bytes, Nessie's text."""
    return bytes(value).decode() if isinstance(value, bytes | bytearray) else str(value)


def _flag(value: Any) -> bool:
    """BOOLEAN reads as an int, Nessie's BIT(1) as one byte."""
    if isinstance(value, bytes | bytearray):
        return int.from_bytes(value, "big") != 0
    return bool(value)


def _bytes_or_none(value: Any) -> bytes | None:
    return None if value is None else bytes(value)


def _row_params(repo: str, rows: Sequence[ObjRow]) -> list[Any]:
    params: list[Any] = []
    for r in rows:
        params += [repo, r.obj_id, r.obj_type, r.version_token, r.data, r.referenced]
    return params


def _lochkit_tables(refs: str, objs: str, schema: str) -> dict[str, str]:
    return {
        refs: f"""CREATE TABLE IF NOT EXISTS {refs} (
            repo {_NAME_BYTES} NOT NULL, ref_name {_NAME_BYTES} NOT NULL, pointer VARBINARY(255) NOT NULL,
            deleted BOOLEAN NOT NULL, created_at BIGINT NOT NULL, ext_info VARBINARY(255),
            prev_ptr LONGBLOB NOT NULL, PRIMARY KEY (repo, ref_name)) ENGINE=InnoDB""",
        objs: f"""CREATE TABLE IF NOT EXISTS {objs} (
            repo {_NAME_BYTES} NOT NULL, obj_id VARBINARY(255) NOT NULL, obj_type {_NESSIE_NAME} NOT NULL,
            obj_vers {_NESSIE_NAME}, obj_value LONGBLOB NOT NULL, obj_ref BIGINT NOT NULL,
            PRIMARY KEY (repo, obj_id)) ENGINE=InnoDB""",
        schema: f"""CREATE TABLE IF NOT EXISTS {schema} (
            component {_NESSIE_NAME} PRIMARY KEY, version BIGINT NOT NULL, written_by {_NESSIE_NAME} NOT NULL)
            ENGINE=InnoDB""",
    }


def _nessie_tables() -> dict[str, str]:
    """The tables as Nessie's JDBC2 backend creates them on MariaDB / MySQL (its column order and
    types, every non-key column nullable)."""
    return {
        NESSIE_REFS: f"""CREATE TABLE IF NOT EXISTS {NESSIE_REFS} (
            repo {_NESSIE_NAME}, ref_name {_NESSIE_NAME}, pointer TINYBLOB, ext_info TINYBLOB,
            prev_ptr LONGBLOB, created_at BIGINT DEFAULT 0, deleted BIT(1), PRIMARY KEY (repo, ref_name))""",
        NESSIE_OBJS: f"""CREATE TABLE IF NOT EXISTS {NESSIE_OBJS} (
            repo {_NESSIE_NAME}, obj_id TINYBLOB, obj_type {_NESSIE_NAME}, obj_vers {_NESSIE_NAME},
            obj_value LONGBLOB, obj_ref BIGINT, PRIMARY KEY (repo, obj_id(255)))""",
    }
