"""PostgreSQL backend, and CockroachDB (which speaks PostgreSQL's protocol), through psycopg 3.

Pooled connections run in autocommit mode, so each statement (every compare-and-swap) is one
round trip and atomic by itself. Statements are prepared on first use, and connections that come
back healthy are reused without a trip through the pool (:mod:`backends.postgres.connections`).
Bulk writes run one statement per chunk, since the contract needs only per-row atomicity;
creating tables runs in an explicit transaction, and a scan in a read transaction that holds its
server-side cursor.
A compare-and-swap is one UPDATE or DELETE whose WHERE clause holds the whole expected state, and
succeeds when it touched one row. That is safe under PostgreSQL's default READ COMMITTED (a writer
that waited for a concurrent one re-checks the WHERE clause on the newest row) and under
CockroachDB's SERIALIZABLE.

The tables and statements are in :mod:`backends.postgres.statements`, URL parsing in
:mod:`backends.postgres.config`, error mapping in :mod:`backends.postgres.errors` and table
creation in :mod:`backends.postgres.schema`. psycopg is imported only when an adapter is created.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Collection, Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from backends.postgres.capabilities import CAPABILITIES
from backends.postgres.config import PgSettings
from backends.postgres.connections import ConnectionShelf
from backends.postgres.errors import ErrorContext, Kind, backoff_delays, classify
from backends.postgres.schema import Verdict, create, inspect, judge, mismatch_fix
from backends.postgres.statements import SCHEMA_VERSION, Dialect, Statements, short_version, unnest_params
from backends.postgres.watchdog import Deadline, StatementWatchdog
from persist_spi.adapter import (
    BackendAdapter,
    Capabilities,
    InsertAndSwap,
    ObjRow,
    RefRow,
    finish_store_and_swap,
    target_row,
)
from persist_spi.errors import (
    BackendSchemaMismatch,
    BackendStoreMissing,
    LochkitError,
    UnknownOperationResult,
)
from persist_spi.layouts import StorageLayout

if TYPE_CHECKING:
    from psycopg import Connection

#: Ids or names per statement: bounds the size of one statement and of its result.
_ID_CHUNK = 1000
#: Rows per insert statement, and the most bytes of object data in one.
_ROW_CHUNK = 500
_CHUNK_BYTES = 16 * 1024 * 1024
#: Rows a scan fetches per round trip.
_SCAN_BATCH = 500
#: Rounds of insert-if-absent while concurrent deletes keep removing rows found existing.
_INSERT_ROUNDS = 5
#: Attempts at creating the tables while concurrent creators keep winning.
_SCHEMA_ATTEMPTS = 3

T = TypeVar("T")
Work = Callable[["Connection[Any]"], T]


class PostgresAdapter(BackendAdapter):
    """One database reached through a bounded pool of connections."""

    def __init__(self, settings: PgSettings, version_text: str, dialect: Dialect) -> None:
        from psycopg_pool import ConnectionPool, PoolTimeout

        self.name = dialect.backend
        self._settings = settings
        self._version = short_version(version_text)
        self._sql = Statements(settings.table_prefix, dialect, settings.layout)
        self._errors = ErrorContext(dialect.backend, settings.address, self._sql.table_names, settings.scrub)
        self._pool = ConnectionPool(
            settings.conninfo,
            # Every statement text is fixed, so each is prepared on its first use on a connection
            # rather than after psycopg's default five.
            kwargs={"autocommit": True, "prepare_threshold": 0},
            min_size=settings.pool_min,
            max_size=settings.pool_max,
            timeout=settings.pool_timeout,
            name=f"lochkit-{self.name}",
            open=False,
        )
        try:
            self._pool.open(wait=True, timeout=settings.pool_timeout)
        except PoolTimeout as e:
            self._pool.close()
            raise self._errors.backend_error(Kind.CONNECTION, e, "opening the connection pool") from None
        self._connections = ConnectionShelf(self._pool)
        self._watchdog = StatementWatchdog(settings.request_timeout)
        self._closed = False

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    @property
    def address(self) -> str:
        return self._settings.address

    @property
    def layout(self) -> StorageLayout:
        return self._settings.layout

    @property
    def statements(self) -> Statements:
        """The tables and statements this adapter uses (its dialect and layout decide them)."""
        return self._sql

    def server_version(self) -> str | None:
        return self._version

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._connections.close()
            self._watchdog.close()
            self._pool.close(timeout=5)

    # --- running statements ----------------------------------------------------------------------

    def _run(self, during: str, work: Work[T], *, write: bool) -> T:
        """Run ``work`` on a pooled connection, retrying what is safe to retry, and translate errors
        for the user. ``work`` must only read, or be all-or-nothing (one statement or transaction), so
        that running it again after a conflict cannot apply anything twice."""
        from psycopg import Error
        from psycopg_pool import PoolClosed, PoolTimeout

        delays = backoff_delays(self._settings.max_retries)
        attempts = 0
        reconnected = False
        while True:
            attempts += 1
            deadline: Deadline | None = None
            try:
                with (
                    self._connections.borrowed() as conn,
                    self._watchdog.guard(conn.pgconn.socket) as deadline,
                ):
                    return work(conn)
            except PoolTimeout as e:  # no connection was handed out: nothing was sent
                raise self._errors.backend_error(Kind.CONNECTION, e, during) from None
            except PoolClosed:  # used after close(): a bug in the caller, not a server problem
                raise
            except Error as e:
                kind = classify(e)
                stalled = deadline is not None and deadline.expired
                if kind is Kind.CONFLICT and (delay := next(delays, None)) is not None:
                    time.sleep(delay)  # the server rolled it all back: running it again is safe
                    continue
                if kind is Kind.CONNECTION and not write and not reconnected and not stalled:
                    reconnected = True  # a pooled connection went stale: a read may simply go again
                    continue
                if kind is Kind.OTHER and not stalled:
                    raise
                if stalled:
                    kind = Kind.CONNECTION
                    during += f" (no answer within request_timeout={self._settings.request_timeout:g} s)"
                raise self._translate(kind, e, during, write=write, attempts=attempts) from e

    def _translate(
        self, kind: Kind, error: Exception, during: str, *, write: bool, attempts: int
    ) -> LochkitError:
        if kind is Kind.CONFLICT:
            return UnknownOperationResult(
                f"{self.name} at {self.address}: {during} was aborted for conflicting concurrent "
                f"transactions {attempts} times ({self._errors.detail(error)}); the last attempt was "
                "rolled back. Retry later"
            )
        if write and kind in (Kind.CONNECTION, Kind.AMBIGUOUS, Kind.CANCELLED):
            return self._errors.unknown_result(error, during)
        return self._errors.backend_error(kind, error, during)

    def _rowcount(self, during: str, query: str, params: Sequence[Any]) -> int:
        """Execute one write statement in autocommit mode; the number of rows it touched."""
        return self._run(during, lambda conn: conn.execute(query, params).rowcount, write=True)

    def _returning(self, during: str, query: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """Execute one write statement with RETURNING in autocommit mode; the rows it returned."""
        return self._run(during, lambda conn: conn.execute(query, params).fetchall(), write=True)

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

    def verify_schema(self) -> str:
        verdict = self._judge_tables()
        if verdict.missing:
            if self._sql.nessie:
                problem = f"no Nessie JDBC2 tables here ({', '.join(verdict.missing)} missing)"
                check = "Check the URL (database, and the schema in libpq's options=-csearch_path%3D...)"
            else:
                problem = f"no lochkit tables here ({', '.join(verdict.missing)} missing)"
                check = "Check the URL and its table_prefix option"
            raise BackendStoreMissing(
                self.name,
                self.address,
                problem,
                f"{check}; lochkit's load commands and lochkit serve create the tables, this command "
                "creates nothing",
            )
        return f"{self._tables()} found"

    def _tables(self) -> str:
        return f"{self.name} at {self.address}: tables {', '.join(self._sql.table_names)}"

    def _schema_kind(self) -> str:
        return "Nessie's JDBC2 layout" if self._sql.nessie else f"schema version {SCHEMA_VERSION}"

    def _judge_tables(self) -> Verdict:
        """The tables as they are, judged; raises when they exist in a form this lochkit cannot use."""
        found = self._run("checking the tables", lambda conn: inspect(conn, self._sql), write=False)
        verdict = judge(self._sql, found)
        if verdict.problem is not None:
            raise BackendSchemaMismatch(self.name, self.address, verdict.problem, mismatch_fix(self._sql))
        return verdict

    def _create_tables(self, missing: tuple[str, ...]) -> bool:
        return self._run("creating the tables", lambda conn: create(conn, self._sql, missing), write=True)

    # --- references ------------------------------------------------------------------------------

    def fetch_refs(self, repo: str, names: Sequence[str]) -> list[RefRow | None]:
        def work(conn: Connection[Any]) -> dict[str, RefRow]:
            found: dict[str, RefRow] = {}
            for chunk in _chunks(names, _ID_CHUNK):
                for row in conn.execute(self._sql.fetch_refs, [repo, list(chunk)], binary=True):
                    found[row[0]] = self._sql.ref_from_db(row)
            return found

        found = self._run("fetching references", work, write=False)
        return [found.get(name) for name in names]

    def insert_ref(self, repo: str, row: RefRow) -> bool:
        return self._rowcount("creating a reference", *self._sql.insert_ref(repo, row)) == 1

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        return self._rowcount("updating a reference", *self._sql.update_ref(repo, expected, new)) == 1

    def delete_ref(self, repo: str, expected: RefRow) -> bool:
        return self._rowcount("deleting a reference", *self._sql.delete_ref(repo, expected)) == 1

    # --- objects ---------------------------------------------------------------------------------

    def fetch_objs(self, repo: str, ids: Sequence[bytes]) -> list[ObjRow | None]:
        def work(conn: Connection[Any]) -> dict[bytes, ObjRow]:
            found: dict[bytes, ObjRow] = {}
            for chunk in _chunks(ids, _ID_CHUNK):
                for row in conn.execute(self._sql.fetch_objs, [list(chunk), repo], binary=True):
                    found[row[0]] = self._sql.obj_from_db(row)
            return found

        found = self._run("fetching objects", work, write=False)
        return [found.get(bytes(i)) for i in ids]

    def insert_objs(self, repo: str, rows: Sequence[ObjRow]) -> list[bool]:
        """Insert-if-absent, then bump ``referenced`` of the ids that existed. Each statement runs
        on its own (autocommit): the contract needs only per-row atomicity, and one round trip per
        statement beats BEGIN/COMMIT around them. An id that vanished between the two steps (a
        concurrent delete) is inserted again, so afterwards every row exists."""
        # Sorted by id, so concurrent batches lock shared ids in the same order (no deadlock cycle).
        pending = sorted(rows, key=lambda r: r.obj_id)
        inserted: set[bytes] = set()
        for _ in range(_INSERT_ROUNDS):
            inserted |= self._insert_absent(repo, pending)
            existing = [r for r in pending if r.obj_id not in inserted]
            vanished = self._bump_referenced(repo, existing)
            if not vanished:
                return [row.obj_id in inserted for row in rows]
            pending = [r for r in existing if r.obj_id in vanished]
        raise UnknownOperationResult(
            f"{self.name} at {self.address}: {len(pending)} object(s) were deleted by others each time "
            f"they were found existing, {_INSERT_ROUNDS} times in a row; retry"
        )

    def _insert_absent(self, repo: str, rows: Sequence[ObjRow]) -> set[bytes]:
        """The ids actually inserted. One ``_run`` per statement: a retried statement was rolled
        back, whereas re-running an already committed one would report its rows as pre-existing."""
        inserted: set[bytes] = set()
        for chunk in _row_chunks(rows):
            found = self._returning("storing objects", self._sql.insert_objs, unnest_params(repo, chunk))
            inserted.update(bytes(r[0]) for r in found)
        return inserted

    def _bump_referenced(self, repo: str, rows: Sequence[ObjRow]) -> set[bytes]:
        """Set ``referenced`` of existing rows; returns the ids that no longer exist."""
        by_value: dict[int, list[bytes]] = {}
        for row in rows:
            by_value.setdefault(row.referenced, []).append(row.obj_id)
        missing = {bytes(r.obj_id) for r in rows}
        for referenced, ids in by_value.items():
            for chunk in _chunks(ids, _ID_CHUNK):
                params = [referenced, repo, list(chunk)]
                found = self._returning(
                    "refreshing objects' referenced time", self._sql.bump_referenced, params
                )
                missing.difference_update(bytes(r[0]) for r in found)
        return missing

    def insert_objs_and_update_ref(
        self, repo: str, rows: Sequence[ObjRow], expected: RefRow, new: RefRow
    ) -> InsertAndSwap:
        """One statement, one round trip (:meth:`Statements.insert_objs_and_update_ref`) when the
        rows fit one statement and are all new, which is what a commit stores; otherwise the two
        steps (more rows or bytes than one statement carries, or CockroachDB). When some rows
        existed, the statement swaps nothing and the call ends as the two steps do
        (:func:`finish_store_and_swap`)."""
        target_row(rows, new.pointer)  # refused before anything is written
        if not self._sql.stores_and_swaps_at_once or len(rows) > _ROW_CHUNK or _bytes(rows) > _CHUNK_BYTES:
            return super().insert_objs_and_update_ref(repo, rows, expected, new)
        # Sorted by id, as insert_objs does, so concurrent writers lock shared ids in one order.
        ordered = sorted(rows, key=lambda r: r.obj_id)
        statement = self._sql.insert_objs_and_update_ref(repo, ordered, expected, new)
        answer = self._run(
            "storing objects and updating a reference",
            lambda conn: conn.execute(*statement).fetchone(),
            write=True,
        )
        assert answer is not None  # a SELECT without FROM answers one row
        ids, swapped = answer
        inserted = {bytes(i) for i in ids}
        if len(inserted) == len(rows):
            return InsertAndSwap([True] * len(rows), swapped == 1)
        return finish_store_and_swap(self, repo, rows, inserted, expected, new)

    def upsert_objs(self, repo: str, rows: Sequence[ObjRow]) -> None:
        for chunk in _row_chunks(sorted(rows, key=lambda r: r.obj_id)):
            self._rowcount("upserting objects", self._sql.upsert_objs, unnest_params(repo, chunk))

    def delete_objs(self, repo: str, ids: Sequence[bytes]) -> None:
        for chunk in _chunks(ids, _ID_CHUNK):
            self._rowcount("deleting objects", self._sql.delete_objs, [repo, list(chunk)])

    def delete_obj_if_referenced(self, repo: str, obj_id: bytes, referenced: int) -> bool:
        params = [repo, obj_id, referenced]
        return self._rowcount("deleting an object", self._sql.delete_obj_if_referenced, params) == 1

    def update_obj_if_version(self, repo: str, expected_type: str, expected_token: str, row: ObjRow) -> bool:
        params = [row.obj_type, row.version_token, row.data, row.referenced]
        params += [repo, row.obj_id, expected_type, expected_token]
        return self._rowcount("updating an object", self._sql.update_obj_if_version, params) == 1

    def delete_obj_if_version(
        self, repo: str, obj_id: bytes, expected_type: str, expected_token: str
    ) -> bool:
        params = [repo, obj_id, expected_type, expected_token]
        return self._rowcount("deleting an object", self._sql.delete_obj_if_version, params) == 1

    def scan_objs(self, repo: str, types: frozenset[str] | None) -> Generator[ObjRow, None, None]:
        """A server-side cursor inside a transaction that holds a pooled connection until the
        generator is exhausted or closed; rows arrive ``_SCAN_BATCH`` at a time."""
        from psycopg import Error

        if types:
            query, params = self._sql.scan_objs_of_types, [repo, sorted(types)]
        else:
            query, params = self._sql.scan_objs, [repo]
        try:
            with (
                self._connections.borrowed() as conn,
                conn.transaction(),
                conn.cursor(name=f"lochkit_scan_{uuid.uuid4().hex}", binary=True) as cursor,
            ):
                cursor.itersize = _SCAN_BATCH
                cursor.execute(query, params)
                for row in cursor:
                    yield self._sql.obj_from_db(row)
        except Error as e:
            kind = classify(e)
            if kind is Kind.OTHER:
                raise
            raise self._translate(kind, e, "scanning objects", write=False, attempts=1) from e

    def list_repositories(self) -> Iterator[str]:
        # The references table is small (a few rows per repository), so one read is enough.
        repos = self._run(
            "listing repositories",
            lambda conn: [row[0] for row in conn.execute(self._sql.list_repositories)],
            write=False,
        )
        yield from repos

    def erase_repositories(self, repos: Collection[str]) -> None:
        for chunk in _chunks(sorted(repos), _ID_CHUNK):
            names = list(chunk)
            self._rowcount("erasing repositories", self._sql.erase_repositories, [names, names])


def _chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _bytes(rows: Sequence[ObjRow]) -> int:
    return sum(len(r.data) for r in rows)


def _row_chunks(rows: Sequence[ObjRow]) -> Iterator[list[ObjRow]]:
    """Chunks of at most ``_ROW_CHUNK`` rows and (unless one row alone is larger) ``_CHUNK_BYTES``."""
    chunk: list[ObjRow] = []
    size = 0
    for row in rows:
        if chunk and (len(chunk) >= _ROW_CHUNK or size + len(row.data) > _CHUNK_BYTES):
            yield chunk
            chunk, size = [], 0
        chunk.append(row)
        size += len(row.data)
    if chunk:
        yield chunk
