"""MariaDB and MySQL through PyMySQL.

Every session runs in autocommit mode at ``READ COMMITTED`` (:data:`ISOLATION`), set when the
connection is made and checked by the tests. Each compare-and-swap is one UPDATE or DELETE whose
WHERE clause holds the whole expected state and succeeds when it matched one row (the connection
reports matched rows, not changed ones, through ``CLIENT_FOUND_ROWS``): InnoDB evaluates that
condition on the newest committed row under the row's lock, so two writers racing on one reference
cannot both succeed, at any isolation level. READ COMMITTED is chosen over InnoDB's default
REPEATABLE READ because it takes no gap locks: concurrent batches of insert-if-absent and deletes
of absent ids then cannot deadlock on the gaps between keys.

Bulk inserts are one ``INSERT IGNORE ... RETURNING obj_id`` per chunk (MariaDB 10.5+), which
answers per row which ids were inserted; the others get their referenced time bumped. A statement
the server rolled back for a deadlock or a lock wait timeout runs again. Statements are bounded by
the server's ``max_allowed_packet``, read at connect time and declared as the size limit. A
commit's objects and its branch's compare-and-swap go in one request of three statements
(:meth:`MariadbAdapter.insert_objs_and_update_ref`); connections accept several statements per
request for it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection, Generator, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any, Final, TypeVar

from backends.mariadb.capabilities import PACKET_MARGIN, ROW_OVERHEAD, capabilities
from backends.mariadb.config import MariadbSettings
from backends.mariadb.errors import classify, error_context
from backends.mariadb.pool import ConnectionPool, PoolClosed, PoolTimeout
from backends.mariadb.schema import RULES, create, inspect, mismatch_fix
from backends.mariadb.statements import MAX_KEY_LENGTH, MAX_NAME_BYTES, SCHEMA_VERSION, Statements, text
from backends.postgres.errors import Kind, backoff_delays
from backends.postgres.schema import Verdict, judge
from persist_spi import adapter as contract
from persist_spi.adapter import BackendAdapter, Capabilities, InsertAndSwap, ObjRow, RefRow
from persist_spi.errors import (
    BackendSchemaMismatch,
    BackendStoreMissing,
    LochkitError,
    UnknownOperationResult,
)
from persist_spi.layouts import NESSIE_LAYOUT, StorageLayout

if TYPE_CHECKING:
    from pymysql.connections import Connection
    from pymysql.cursors import Cursor

#: The isolation level of every session (see the module's docstring).
ISOLATION: Final = "READ COMMITTED"
#: Strict mode: a value that does not fit is an error, never silently cut.
SQL_MODE: Final = "STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION"
#: Ids or names per statement: bounds the size of one statement and of its result.
_ID_CHUNK = 1000
#: Rows per insert statement.
_ROW_CHUNK = 500
#: Rows a scan reads per statement.
_SCAN_BATCH = 500
#: Rounds of insert-if-absent while concurrent deletes keep removing rows found existing.
_INSERT_ROUNDS = 5
_SCHEMA_ATTEMPTS = 3
_DUPLICATE_KEY = 1062

T = TypeVar("T")
Work = Callable[["Connection[Any]"], T]


def has_returning(version: str) -> bool:
    """Whether a server (``SELECT VERSION()``: '10.11.19-MariaDB-...', '8.4.2') is MariaDB 10.5+."""
    match = re.match(r"(\d+)\.(\d+)", version)
    return "mariadb" in version.lower() and match is not None and (int(match[1]), int(match[2])) >= (10, 5)


class MariadbAdapter(BackendAdapter):
    """One database reached through a bounded pool of connections."""

    def __init__(
        self,
        settings: MariadbSettings,
        connect: Callable[[], Connection[Any]],
        version: str,
        max_allowed_packet: int,
    ) -> None:
        self.name = settings.backend
        self._settings = settings
        self._version = version
        self._packet = max_allowed_packet
        self._capabilities = capabilities(max_allowed_packet, nessie=settings.layout is NESSIE_LAYOUT)
        #: MariaDB 10.5+ answers INSERT ... RETURNING; MySQL does not.
        self._returning = has_returning(version)
        self._sql = Statements(settings.table_prefix, settings.layout)
        self._errors = error_context(
            settings.backend, settings.address, self._sql.table_names, settings.scrub
        )
        self._pool: ConnectionPool[Connection[Any]] = ConnectionPool(
            connect, lambda conn: conn.close(), settings.pool_max, settings.pool_timeout
        )

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    @property
    def address(self) -> str:
        return self._settings.address

    @property
    def layout(self) -> StorageLayout:
        return self._settings.layout

    @property
    def statements(self) -> Statements:
        return self._sql

    def server_version(self) -> str | None:
        return self._version

    def close(self) -> None:
        self._pool.close()

    # --- running statements ----------------------------------------------------------------------

    def _run(self, during: str, work: Work[T], *, write: bool) -> T:
        """Run ``work`` on a pooled connection, retrying what is safe to retry, and translate errors.
        ``work`` must only read, or be all-or-nothing (one statement or transaction)."""
        import pymysql

        delays = backoff_delays(self._settings.max_retries)
        attempts = 0
        reconnected = False
        while True:
            attempts += 1
            try:
                with self._pool.borrowed() as conn:
                    return work(conn)
            except PoolTimeout as e:  # no connection was handed out: nothing was sent
                raise self._errors.backend_error(Kind.CONNECTION, e, during) from None
            except PoolClosed:  # used after close(): a bug in the caller, not a server problem
                raise
            except pymysql.MySQLError as e:
                kind = classify(e)
                if kind is Kind.CONNECTION:
                    self._pool.discard_idle()
                if kind is Kind.CONFLICT and (delay := next(delays, None)) is not None:
                    time.sleep(delay)  # the server rolled it back: running it again is safe
                    continue
                if kind is Kind.CONNECTION and not write and not reconnected:
                    reconnected = True  # a pooled connection went stale: a read may simply go again
                    continue
                if kind is Kind.OTHER:
                    raise
                raise self._translate(kind, e, during, write=write, attempts=attempts) from e

    def _translate(
        self, kind: Kind, error: Exception, during: str, *, write: bool, attempts: int
    ) -> LochkitError:
        if kind is Kind.CONFLICT:
            return UnknownOperationResult(
                f"{self.name} at {self.address}: {during} was rolled back for deadlocks or lock waits "
                f"{attempts} times ({self._errors.detail(error)}); retry later"
            )
        if write and kind in (Kind.CONNECTION, Kind.CANCELLED):
            return self._errors.unknown_result(error, during)
        return self._errors.backend_error(kind, error, during)

    def _rowcount(self, during: str, query: str, params: Sequence[Any]) -> int:
        """Execute one write statement in autocommit mode; the number of rows it matched."""

        def work(conn: Connection[Any]) -> int:
            with conn.cursor() as cursor:
                return int(cursor.execute(query, params))

        return self._run(during, work, write=True)

    def _rows(self, during: str, query: str, params: Sequence[Any], *, write: bool = False) -> list[Any]:
        def work(conn: Connection[Any]) -> list[Any]:
            with conn.cursor() as cursor:
                cursor.execute(query, params)
                return list(cursor.fetchall())

        return self._run(during, work, write=write)

    # --- schema ----------------------------------------------------------------------------------

    def setup_schema(self) -> str:
        created = False
        for _ in range(_SCHEMA_ATTEMPTS):
            verdict = self._judge_tables()
            if not verdict.missing:
                what = "created" if created else "found"
                return f"{self._tables()} {what} ({self._schema_kind()})"
            created = self._create_tables(verdict.missing)
        raise BackendSchemaMismatch(
            self.name,
            self.address,
            f"the tables {', '.join(self._sql.table_names)} are still incomplete after "
            f"{_SCHEMA_ATTEMPTS} attempts to create them",
            "Check whether another program keeps dropping or changing them",
        )

    def _create_tables(self, missing: tuple[str, ...]) -> bool:
        return self._run("creating the tables", lambda conn: create(conn, self._sql, missing), write=True)

    def verify_schema(self) -> str:
        verdict = self._judge_tables()
        if verdict.missing:
            what = "Nessie JDBC2" if self._sql.nessie else "lochkit"
            check = "Check the URL (its database)" + (
                "" if self._sql.nessie else " and its table_prefix option"
            )
            raise BackendStoreMissing(
                self.name,
                self.address,
                f"no {what} tables here ({', '.join(verdict.missing)} missing)",
                f"{check}; lochkit's load commands and lochkit serve create the tables, this command "
                "creates nothing",
            )
        return f"{self._tables()} found"

    def _tables(self) -> str:
        return f"{self.name} at {self.address}: tables {', '.join(self._sql.table_names)}"

    def _schema_kind(self) -> str:
        return "Nessie's JDBC2 layout" if self._sql.nessie else f"schema version {SCHEMA_VERSION}"

    def _judge_tables(self) -> Verdict:
        found = self._run("checking the tables", lambda conn: inspect(conn, self._sql), write=False)
        verdict = judge(self._sql, found, RULES)
        if verdict.problem is not None:
            raise BackendSchemaMismatch(self.name, self.address, verdict.problem, mismatch_fix(self._sql))
        return verdict

    # --- references ------------------------------------------------------------------------------

    def fetch_refs(self, repo: str, names: Sequence[str]) -> list[RefRow | None]:
        found: dict[str, RefRow] = {}
        for chunk in _chunks(names, _ID_CHUNK):
            for row in self._rows("fetching references", self._sql.fetch_refs, [repo, list(chunk)]):
                ref = self._sql.ref_from_db(row)
                found[ref.name] = ref
        return [found.get(name) for name in names]

    def insert_ref(self, repo: str, row: RefRow) -> bool:
        import pymysql

        query, params = self._sql.insert_ref(repo, row)

        def work(conn: Connection[Any]) -> bool:
            try:
                with conn.cursor() as cursor:
                    cursor.execute(query, params)
            except pymysql.IntegrityError as e:
                if e.args and e.args[0] == _DUPLICATE_KEY:
                    return False
                raise
            return True

        return self._run("creating a reference", work, write=True)

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        return self._rowcount("updating a reference", *self._sql.update_ref(repo, expected, new)) == 1

    def delete_ref(self, repo: str, expected: RefRow) -> bool:
        return self._rowcount("deleting a reference", *self._sql.delete_ref(repo, expected)) == 1

    # --- objects ---------------------------------------------------------------------------------

    def fetch_objs(self, repo: str, ids: Sequence[bytes]) -> list[ObjRow | None]:
        found: dict[bytes, ObjRow] = {}
        for chunk in _chunks(ids, _ID_CHUNK):
            for row in self._rows(
                "fetching objects", self._sql.fetch_objs, [repo, [bytes(i) for i in chunk]]
            ):
                obj = self._sql.obj_from_db(row)
                found[obj.obj_id] = obj
        return [found.get(bytes(i)) for i in ids]

    def insert_objs(self, repo: str, rows: Sequence[ObjRow]) -> list[bool]:
        """Insert-if-absent, then bump ``referenced`` of the ids that existed. An id that vanished
        between the two steps (a concurrent delete) is inserted again, so afterwards every row exists."""
        _check_lengths(self.name, repo, rows)
        # Sorted by id, so concurrent batches lock shared ids in the same order (no deadlock cycle).
        pending = sorted(rows, key=lambda r: r.obj_id)
        inserted: set[bytes] = set()
        for _ in range(_INSERT_ROUNDS):
            inserted |= self._insert_absent(repo, pending)
            existing = [r for r in pending if r.obj_id not in inserted]
            if not self._bump_referenced(repo, existing):
                return [row.obj_id in inserted for row in rows]
            pending = existing  # some vanished: insert whichever are still missing, bump the rest
        raise UnknownOperationResult(
            f"{self.name} at {self.address}: {len(pending)} object(s) were deleted by others each time "
            f"they were found existing, {_INSERT_ROUNDS} times in a row; retry"
        )

    def insert_objs_and_update_ref(
        self, repo: str, rows: Sequence[ObjRow], expected: RefRow, new: RefRow
    ) -> InsertAndSwap:
        """One request (:meth:`Statements.insert_objs_and_update_ref`) when the server answers
        RETURNING (MariaDB, not MySQL) and the rows fit one statement; otherwise the two steps.
        When some row existed, the request swapped nothing and the call ends as the two steps do.

        A deadlock or lock wait timeout in the UPDATE comes after the insert committed; the request
        then runs again, finds its rows existing and leaves the swap to the caller, which reads the
        target and decides, as for any target that existed."""
        contract.target_row(rows, new.pointer)  # refused before anything is written
        if not self._returning or len(chunks := list(self._row_chunks(rows))) != 1:
            return super().insert_objs_and_update_ref(repo, rows, expected, new)
        _check_lengths(self.name, repo, rows)
        # Sorted by id, as insert_objs does, so concurrent writers lock shared ids in one order.
        ordered = sorted(chunks[0], key=lambda r: r.obj_id)
        query, params = self._sql.insert_objs_and_update_ref(repo, ordered, expected, new)

        def work(conn: Connection[Any]) -> tuple[set[bytes], int]:
            with conn.cursor() as cursor:
                cursor.execute(query, params)
                ids = {bytes(r[0]) for r in cursor.fetchall()}
                cursor.nextset()  # the SET
                cursor.nextset()  # the UPDATE: rows matched
                return ids, cursor.rowcount

        inserted, matched = self._run("storing objects and updating a reference", work, write=True)
        if len(inserted) == len(rows):
            return InsertAndSwap([True] * len(rows), matched == 1)
        return contract.finish_store_and_swap(self, repo, rows, inserted, expected, new)

    def _insert_absent(self, repo: str, rows: Sequence[ObjRow]) -> set[bytes]:
        inserted: set[bytes] = set()
        for chunk in self._row_chunks(rows):
            if self._returning:
                query, params = self._sql.insert_objs(repo, chunk, returning=True)
                found = self._rows("storing objects", query, params, write=True)
                inserted.update(bytes(r[0]) for r in found)
            else:
                inserted |= self._insert_absent_in_transaction(repo, chunk)
        return inserted

    def _insert_absent_in_transaction(self, repo: str, chunk: Sequence[ObjRow]) -> set[bytes]:
        """For servers without RETURNING (MySQL): lock the existing ids, insert the others, and
        roll back (and run again) if a concurrent writer inserted one of them in between."""
        ids = [r.obj_id for r in chunk]

        def work(conn: Connection[Any]) -> set[bytes]:
            while True:
                with _transaction(conn) as cursor:
                    cursor.execute(self._sql.fetch_objs + " FOR UPDATE", [repo, ids])
                    existing = {bytes(r[0]) for r in cursor.fetchall()}
                    absent = [r for r in chunk if r.obj_id not in existing]
                    if absent:
                        query, params = self._sql.insert_objs(repo, absent, returning=False)
                        if cursor.execute(query, params) != len(absent):
                            conn.rollback()  # one appeared meanwhile (commit below is a no-op): again
                            continue
                return {r.obj_id for r in absent}

        return self._run("storing objects", work, write=True)

    def _bump_referenced(self, repo: str, rows: Sequence[ObjRow]) -> bool:
        """Set ``referenced`` on existing rows; True when some row was missing (deleted meanwhile)."""
        by_value: dict[int, list[bytes]] = {}
        for row in rows:
            by_value.setdefault(row.referenced, []).append(row.obj_id)
        vanished = False
        for referenced, ids in by_value.items():
            for chunk in _chunks(ids, _ID_CHUNK):
                params = [referenced, repo, list(chunk)]
                matched = self._rowcount(
                    "refreshing objects' referenced time", self._sql.bump_referenced, params
                )
                vanished |= matched < len(chunk)
        return vanished

    def upsert_objs(self, repo: str, rows: Sequence[ObjRow]) -> None:
        _check_lengths(self.name, repo, rows)
        for chunk in self._row_chunks(sorted(rows, key=lambda r: r.obj_id)):
            self._rowcount("upserting objects", *self._sql.upsert_objs(repo, chunk))

    def delete_objs(self, repo: str, ids: Sequence[bytes]) -> None:
        for chunk in _chunks(ids, _ID_CHUNK):
            self._rowcount("deleting objects", self._sql.delete_objs, [repo, [bytes(i) for i in chunk]])

    def delete_obj_if_referenced(self, repo: str, obj_id: bytes, referenced: int) -> bool:
        params = [repo, obj_id, referenced]
        return self._rowcount("deleting an object", self._sql.delete_obj_if_referenced, params) == 1

    def update_obj_if_version(self, repo: str, expected_type: str, expected_token: str, row: ObjRow) -> bool:
        _check_lengths(self.name, repo, [row])
        params = [row.obj_type, row.version_token, row.data, row.referenced]
        params += [repo, row.obj_id, expected_type, expected_token]
        return self._rowcount("updating an object", self._sql.update_obj_if_version, params) == 1

    def delete_obj_if_version(
        self, repo: str, obj_id: bytes, expected_type: str, expected_token: str
    ) -> bool:
        params = [repo, obj_id, expected_type, expected_token]
        return self._rowcount("deleting an object", self._sql.delete_obj_if_version, params) == 1

    def scan_objs(self, repo: str, types: frozenset[str] | None) -> Generator[ObjRow, None, None]:
        """Pages of ``_SCAN_BATCH`` rows in id order, each read by a statement of its own."""
        wanted = sorted(types) if types else None
        after = b""
        while True:
            query, params = self._sql.scan_page(repo, after, wanted, _SCAN_BATCH)
            page = self._rows("scanning objects", query, params)
            for row in page:
                yield self._sql.obj_from_db(row)
            if len(page) < _SCAN_BATCH:
                return
            after = bytes(page[-1][0])

    def list_repositories(self) -> Iterator[str]:
        yield from (
            text(row[0]) for row in self._rows("listing repositories", self._sql.list_repositories, [])
        )

    def erase_repositories(self, repos: Collection[str]) -> None:
        """Both tables in one transaction, so a repository is erased whole or not at all."""
        for chunk in _chunks(sorted(repos), _ID_CHUNK):
            names = list(chunk)

            def work(conn: Connection[Any], names: list[str] = names) -> None:
                with _transaction(conn) as cursor:
                    cursor.execute(self._sql.erase_refs, [names])
                    cursor.execute(self._sql.erase_objs, [names])

            self._run("erasing repositories", work, write=True)

    def _row_chunks(self, rows: Sequence[ObjRow]) -> Iterator[list[ObjRow]]:
        """Chunks of at most ``_ROW_CHUNK`` rows whose statement fits ``max_allowed_packet``."""
        budget = self._packet - PACKET_MARGIN
        chunk: list[ObjRow] = []
        size = 0
        for row in rows:
            row_size = 2 * len(row.data) + ROW_OVERHEAD
            if chunk and (len(chunk) >= _ROW_CHUNK or size + row_size > budget):
                yield chunk
                chunk, size = [], 0
            chunk.append(row)
            size += row_size
        if chunk:
            yield chunk


@contextmanager
def _transaction(conn: Connection[Any]) -> Iterator[Cursor]:
    """An explicit transaction on an autocommit connection: committed when the block ends, rolled
    back when it raises (a failed rollback on a lost connection does not hide the first error)."""
    conn.begin()
    try:
        with conn.cursor() as cursor:
            yield cursor
    except BaseException:
        with suppress(Exception):
            conn.rollback()
        raise
    conn.commit()


def _check_lengths(backend: str, repo: str, rows: Sequence[ObjRow]) -> None:
    """Refuse what the columns cannot hold (INSERT IGNORE would store it cut short)."""
    too_long = ["repository name"] if len(repo.encode()) > MAX_NAME_BYTES else []
    for row in rows:
        if len(row.obj_id) > MAX_KEY_LENGTH:
            too_long.append("object id")
        if len(row.obj_type) > MAX_KEY_LENGTH or len(row.version_token or "") > MAX_KEY_LENGTH:
            too_long.append("object type or version token")
    if too_long:
        raise ValueError(
            f"{backend}: {', '.join(sorted(set(too_long)))} too long for the tables (names hold "
            f"{MAX_NAME_BYTES} bytes of UTF-8, or 255 characters in Nessie's tables; ids, types and "
            f"version tokens {MAX_KEY_LENGTH})"
        )


def _chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
