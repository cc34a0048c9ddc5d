"""Apache Cassandra and ScyllaDB backend through cassandra-driver.

Every conditional write is a lightweight transaction (``IF NOT EXISTS`` / ``IF EXISTS`` /
``IF col = ?``): Paxos makes it atomic per partition, and each row is its own partition (see
:mod:`backends.cassandra.schema`). Every statement runs at LOCAL_QUORUM with serial consistency
LOCAL_SERIAL, so an acknowledged write is seen by the next read and by the next LWT's Paxos read.

Timestamps: the session lets the coordinator assign write timestamps (no client timestamps). On a
node, plain writes and Paxos ballots draw from one monotonic clock, so a delete followed by a
re-insert (erase, then a test or a user recreating the repository) is always ordered correctly.
Client timestamps from another process with a skewed clock could make a fresh insert lose against
an older tombstone, which Nessie papers over with a 2 ms sleep.

Bulk operations run at most ``MAX_IN_FLIGHT`` requests at once, with ids in chunks of
``SELECT_CHUNK`` per read, as Nessie's Cassandra backend does.

Layouts: lochkit's (the default) keeps a per-repository directory beside ``refs`` / ``objs`` for
scans and erase. Nessie's (``layout=nessie``) uses Nessie's ``refs2`` / ``objs2`` and, since a Nessie
server writes no directory entries, finds a repository's rows by filtering the whole table as
Nessie does. Statements and conditions are otherwise the same.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Final

from backends.cassandra import statements
from backends.cassandra.capabilities import CAPABILITIES
from backends.cassandra.config import CassandraSettings
from backends.cassandra.errors import translated
from backends.cassandra.schema import BUCKETS, KIND_OBJ, KIND_REF, SchemaManager, bucket_of, table_names
from backends.cassandra.statements import cql, obj_values, ref_condition, ref_values
from persist_spi.adapter import BackendAdapter, Capabilities, ObjRow, RefRow
from persist_spi.errors import UnknownOperationResult
from persist_spi.layouts import NESSIE_LAYOUT, StorageLayout

SELECT_CHUNK: Final = 20
MAX_IN_FLIGHT: Final = 20
#: Directory entries per single-partition (unlogged, atomic) batch; stays below the 5 KiB warning.
INDEX_BATCH: Final = 20
#: Ids fetched per step of a scan (each step reads SELECT_CHUNK ids per request, in parallel).
SCAN_STEP: Final = 400
#: Row deletes collected before they are sent, when erasing.
ERASE_STEP: Final = 2000
ALL_BUCKETS: Final = list(range(BUCKETS))
#: Insert-if-absent rounds when rows keep vanishing between the insert and the referenced bump.
_INSERT_ROUNDS: Final = 5


Params = Sequence[Any]


class CassandraAdapter(BackendAdapter):
    def __init__(self, settings: CassandraSettings) -> None:
        self.name = settings.flavour
        self._settings = settings
        self._ks = settings.keyspace
        self._tables = table_names(settings.layout)
        #: Nessie's layout: no directory, an empty history is null.
        self._nessie = settings.layout is NESSIE_LAYOUT
        self._cluster, self._session = _connect(settings)
        self._prepared: dict[str, Any] = {}
        self._prepare_lock = threading.Lock()

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    @property
    def layout(self) -> StorageLayout:
        return self._settings.layout

    @property
    def address(self) -> str:
        return self._settings.address

    def setup_schema(self) -> str:
        manager = SchemaManager(
            self,
            self._ks,
            self._settings.flavour == "scylladb",
            nessie=self._nessie,
            create_keyspace=self._settings.create_keyspace,
        )
        return f"{self.address}: " + manager.setup(self._settings.replication_cql())

    def server_version(self) -> str | None:
        if self._settings.flavour == "scylladb":
            row = self.execute(statements.SCYLLA_VERSION, (), "read the version")
            return f"ScyllaDB {row.one()[0]}"
        row = self.execute(statements.CASSANDRA_VERSION, (), "read the server version")
        return f"Apache Cassandra {row.one()[0]}"

    def close(self) -> None:
        self._cluster.shutdown()

    # --- statements ------------------------------------------------------------------------------

    def execute(self, cql: str, params: Params, what: str) -> Any:
        """One unprepared statement (DDL, system tables), at the same consistency as all others."""
        from cassandra.query import SimpleStatement

        return self._run(what, _with_consistency(SimpleStatement(cql)), params)

    def _statement(self, template: str, *, idempotent: bool = True) -> Any:
        """A prepared statement for ``template`` (see :func:`statements.cql`), made once per adapter."""
        text = cql(template, self._ks, self._tables)
        prepared = self._prepared.get(text)
        if prepared is None:
            with self._prepare_lock:
                prepared = self._prepared.get(text)
                if prepared is None:
                    with self._errors("prepare a statement"):
                        prepared = _with_consistency(self._session.prepare(text))
                    prepared.is_idempotent = idempotent
                    self._prepared[text] = prepared
        return prepared

    def _errors(self, what: str) -> AbstractContextManager[None]:
        return translated(self.name, self.address, what)

    def _run(self, what: str, statement: Any, params: Params) -> Any:
        with self._errors(what):
            return self._session.execute(statement, params)

    def _run_all(self, what: str, requests: Iterable[tuple[Any, Params]]) -> list[Any]:
        """Results in request order, at most MAX_IN_FLIGHT at once; the first failure is raised
        after all requests finished (so nothing is still running when the caller retries)."""
        from cassandra.concurrent import execute_concurrent

        batch = list(requests)
        if not batch:
            return []
        outcomes = execute_concurrent(
            self._session, batch, concurrency=MAX_IN_FLIGHT, raise_on_first_error=False
        )
        for ok, value in outcomes:
            if not ok:
                with self._errors(what):
                    raise value
        return [value for _, value in outcomes]

    def _applied_all(self, what: str, requests: Iterable[tuple[Any, Params]]) -> list[bool]:
        return [bool(result.was_applied) for result in self._run_all(what, requests)]

    def _index(self, repo: str, kind: str, keys: Iterable[bytes]) -> None:
        """Write directory entries (before the rows they point at: a crash in between leaves an entry
        without a row, which scans skip and erase removes, never a row that erase cannot find).
        Nessie's layout has no directory: nothing to write."""
        if self._tables.directory is None:
            return
        from cassandra.query import BatchStatement, BatchType

        insert = self._statement(statements.INDEX_KEY)
        by_bucket: dict[int, list[bytes]] = {}
        for key in dict.fromkeys(keys):
            by_bucket.setdefault(bucket_of(key), []).append(key)
        batches = []
        for bucket, bucket_keys in by_bucket.items():
            for start in range(0, len(bucket_keys), INDEX_BATCH):
                batch = _with_consistency(BatchStatement(batch_type=BatchType.UNLOGGED))
                for key in bucket_keys[start : start + INDEX_BATCH]:
                    batch.add(insert, (repo, bucket, kind, key))
                batches.append((batch, ()))
        self._run_all("write the repository directory", batches)

    # --- references ------------------------------------------------------------------------------

    def fetch_refs(self, repo: str, names: Sequence[str]) -> list[RefRow | None]:
        select = self._statement(statements.FETCH_REFS)
        chunks = [list(names[i : i + SELECT_CHUNK]) for i in range(0, len(names), SELECT_CHUNK)]
        found: dict[str, RefRow] = {}
        for result in self._run_all("fetch references", [(select, (repo, c)) for c in chunks]):
            for name, pointer, deleted, created, ext, prev in result:
                found[name] = RefRow(name, pointer or b"", bool(deleted), created or 0, ext, prev or b"")
        return [found.get(n) for n in names]

    def insert_ref(self, repo: str, row: RefRow) -> bool:
        self._index(repo, KIND_REF, [row.name.encode("utf-8")])
        insert = self._statement(statements.INSERT_REF, idempotent=False)
        values = ref_values(row, unset_nulls=True, empty_history_null=self._nessie)
        return self._applied("add a reference", insert, (repo, *values))

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        update = self._statement(statements.UPDATE_REF, idempotent=False)
        new_values = ref_values(new, unset_nulls=False, empty_history_null=self._nessie)[1:]
        values = (*new_values, repo, expected.name, *ref_condition(expected))
        return self._applied("update a reference", update, values)

    def delete_ref(self, repo: str, expected: RefRow) -> bool:
        delete = self._statement(statements.DELETE_REF, idempotent=False)
        return self._applied("delete a reference", delete, (repo, expected.name, *ref_condition(expected)))

    def _applied(self, what: str, statement: Any, params: Params) -> bool:
        return bool(self._run(what, statement, params).was_applied)

    # --- objects ---------------------------------------------------------------------------------

    def fetch_objs(self, repo: str, ids: Sequence[bytes]) -> list[ObjRow | None]:
        select = self._statement(statements.FETCH_OBJS)
        chunks = [list(ids[i : i + SELECT_CHUNK]) for i in range(0, len(ids), SELECT_CHUNK)]
        found: dict[bytes, ObjRow] = {}
        for result in self._run_all("fetch objects", [(select, (repo, c)) for c in chunks]):
            for obj_id, obj_type, token, value, referenced in result:
                found[obj_id] = ObjRow(obj_id, obj_type, token, value or b"", referenced or 0)
        return [found.get(i) for i in ids]

    def insert_objs(self, repo: str, rows: Sequence[ObjRow]) -> list[bool]:
        self._index(repo, KIND_OBJ, [r.obj_id for r in rows])
        insert = self._statement(statements.INSERT_OBJ, idempotent=False)
        bump = self._statement(statements.BUMP_REFERENCED, idempotent=False)
        inserted = [False] * len(rows)
        pending = list(range(len(rows)))
        for _ in range(_INSERT_ROUNDS):
            requests = [(insert, (repo, *obj_values(rows[i], unset_nulls=True))) for i in pending]
            applied = self._applied_all("store objects", requests)
            existing = [i for i, ok in zip(pending, applied, strict=True) if not ok]
            for i, ok in zip(pending, applied, strict=True):
                inserted[i] = ok
            bumps = [(bump, (rows[i].referenced, repo, rows[i].obj_id)) for i in existing]
            bumped = self._applied_all("refresh referenced of existing objects", bumps)
            pending = [i for i, ok in zip(existing, bumped, strict=True) if not ok]
            if not pending:
                return inserted
        raise UnknownOperationResult(
            f"{self.name} at {self.address}: store objects: {len(pending)} object(s) kept appearing and "
            f"disappearing during {_INSERT_ROUNDS} attempts (concurrent deletes); retry"
        )

    def upsert_objs(self, repo: str, rows: Sequence[ObjRow]) -> None:
        self._index(repo, KIND_OBJ, [r.obj_id for r in rows])
        upsert = self._statement(statements.UPSERT_OBJ)
        self._run_all("upsert objects", [(upsert, (repo, *obj_values(r, unset_nulls=False))) for r in rows])

    def delete_objs(self, repo: str, ids: Sequence[bytes]) -> None:
        delete = self._statement(statements.DELETE_OBJ)
        self._run_all("delete objects", [(delete, (repo, i)) for i in ids])

    def delete_obj_if_referenced(self, repo: str, obj_id: bytes, referenced: int) -> bool:
        delete = self._statement(statements.DELETE_OBJ_IF_REFERENCED, idempotent=False)
        return self._applied("delete an unreferenced object", delete, (repo, obj_id, referenced))

    def update_obj_if_version(self, repo: str, expected_type: str, expected_token: str, row: ObjRow) -> bool:
        update = self._statement(statements.UPDATE_OBJ_IF_VERSION, idempotent=False)
        new_values = (row.version_token, row.data, row.referenced, repo, row.obj_id)
        values = (*new_values, expected_type, expected_token)
        return self._applied("update an object conditionally", update, values)

    def delete_obj_if_version(
        self, repo: str, obj_id: bytes, expected_type: str, expected_token: str
    ) -> bool:
        delete = self._statement(statements.DELETE_OBJ_IF_VERSION, idempotent=False)
        return self._applied(
            "delete an object conditionally", delete, (repo, obj_id, expected_type, expected_token)
        )

    # --- repositories ----------------------------------------------------------------------------

    def scan_objs(self, repo: str, types: frozenset[str] | None) -> Iterator[ObjRow]:
        """Reads the repository's directory buckets, then the rows they name, SCAN_STEP ids at a
        time; directory entries of deleted objects find no row and are skipped. In Nessie's layout:
        the table filtered on the repository, SCAN_STEP rows per page."""
        if self._tables.directory is None:
            for obj_id, obj_type, token, value, referenced in self._filtered(statements.SCAN_OBJS, repo):
                if types is None or obj_type in types:
                    yield ObjRow(obj_id, obj_type, token, value or b"", referenced or 0)
            return
        ids: list[bytes] = []
        for _, key in self._directory(repo, kinds=(KIND_OBJ,)):
            ids.append(key)
            if len(ids) >= SCAN_STEP:
                yield from _typed(self.fetch_objs(repo, ids), types)
                ids = []
        if ids:
            yield from _typed(self.fetch_objs(repo, ids), types)

    def erase_repositories(self, repos: Collection[str]) -> None:
        delete_obj = self._statement(statements.DELETE_OBJ)
        delete_ref = self._statement(statements.ERASE_REF)
        if self._tables.directory is None:
            self._erase_filtered(repos, delete_obj, delete_ref)
            return
        deletes: list[tuple[Any, Params]] = []
        listed: list[str] = []  # repositories with directory entries (nothing to delete for the rest)
        for repo in repos:
            for kind, key in self._directory(repo, kinds=(KIND_OBJ, KIND_REF)):
                if not listed or listed[-1] != repo:
                    listed.append(repo)
                deletes.append(
                    (delete_obj, (repo, key)) if kind == KIND_OBJ else (delete_ref, (repo, key.decode()))
                )
                if len(deletes) >= ERASE_STEP:  # bounded memory for huge repositories
                    self._run_all("erase repository rows", deletes)
                    deletes = []
        self._run_all("erase repository rows", deletes)
        # The directory goes last: if erasing stops half-way, running it again finds the rest.
        delete_directory = self._statement(statements.ERASE_DIRECTORY)
        self._run_all(
            "erase the repository directory", [(delete_directory, (r, ALL_BUCKETS)) for r in listed]
        )

    def _erase_filtered(self, repos: Collection[str], delete_obj: Any, delete_ref: Any) -> None:
        """Nessie's layout: the rows of each repository, found by filtering the tables (references
        first, as Nessie does), deleted ERASE_STEP at a time while the scan pages on. Running it
        again finds whatever an interrupted erase left."""
        deletes: list[tuple[Any, Params]] = []
        for repo in repos:
            refs = ((delete_ref, (repo, name)) for (name,) in self._filtered(statements.SCAN_REF_NAMES, repo))
            objs = (
                (delete_obj, (repo, obj_id)) for (obj_id,) in self._filtered(statements.SCAN_OBJ_IDS, repo)
            )
            for delete in itertools.chain(refs, objs):
                deletes.append(delete)
                if len(deletes) >= ERASE_STEP:  # bounded memory for huge repositories
                    self._run_all("erase repository rows", deletes)
                    deletes = []
        self._run_all("erase repository rows", deletes)

    def _filtered(self, template: str, repo: str) -> Iterator[Any]:
        """Rows of a ``WHERE repo = ? ALLOW FILTERING`` statement, SCAN_STEP per page; the driver
        fetches further pages as the caller iterates."""
        bound = self._statement(template).bind((repo,))
        bound.fetch_size = SCAN_STEP
        what = "scan the whole table for the repository's rows"
        result = self._run(what, bound, ())
        with self._errors(what):  # later pages are fetched here
            yield from result

    def list_repositories(self) -> Iterator[str]:
        # Each reference is a partition of its own, so the listing reads every partition key of
        # the references table (a few per repository); the large objects table is not read. In
        # Nessie's layout too (refs2 has the same key), so no full scan of objs2 is needed.
        select = self._statement(statements.LIST_REPOSITORIES)
        result = self._run("list repositories", select, ())
        seen: set[str] = set()
        with self._errors("list repositories"):  # later pages are fetched here
            for repo, _ in result:
                if repo not in seen:
                    seen.add(repo)
                    yield repo

    def _directory(self, repo: str, kinds: tuple[str, ...]) -> Iterator[tuple[str, bytes]]:
        """(kind, key) of every directory entry of the repository, in one request over all bucket
        partitions; the driver fetches further pages as the caller iterates."""
        select = self._statement(statements.READ_DIRECTORY)
        result = self._run("read the repository directory", select, (repo, ALL_BUCKETS, list(kinds)))
        with self._errors("read the repository directory"):  # later pages are fetched here
            yield from ((kind, key) for kind, key in result)


def _typed(rows: Iterable[ObjRow | None], types: frozenset[str] | None) -> Iterator[ObjRow]:
    return (r for r in rows if r is not None and (types is None or r.obj_type in types))


def _with_consistency(statement: Any) -> Any:
    """LOCAL_QUORUM for reads and writes, LOCAL_SERIAL for the Paxos phase of LWTs, on every
    statement (Nessie's Cassandra backend leaves some on the driver's LOCAL_ONE/SERIAL defaults)."""
    from cassandra import ConsistencyLevel

    statement.consistency_level = ConsistencyLevel.LOCAL_QUORUM
    statement.serial_consistency_level = ConsistencyLevel.LOCAL_SERIAL
    return statement


def _connect(settings: CassandraSettings) -> tuple[Any, Any]:
    from cassandra import ConsistencyLevel
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from cassandra.policies import DCAwareRoundRobinPolicy, TokenAwarePolicy

    profile = ExecutionProfile(
        load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy(local_dc=settings.local_dc)),
        consistency_level=ConsistencyLevel.LOCAL_QUORUM,
        serial_consistency_level=ConsistencyLevel.LOCAL_SERIAL,
        request_timeout=settings.request_timeout,
    )
    auth = (
        PlainTextAuthProvider(settings.username, settings.password or "")
        if settings.username is not None
        else None
    )
    cluster = Cluster(
        contact_points=list(settings.hosts),
        port=settings.port,
        auth_provider=auth,
        execution_profiles={EXEC_PROFILE_DEFAULT: profile},
        connect_timeout=settings.connect_timeout,
        control_connection_timeout=settings.connect_timeout,
    )
    try:
        with translated(settings.flavour, settings.address, "connect"):
            session = cluster.connect()
    except BaseException:
        cluster.shutdown()
        raise
    # Server-assigned write timestamps: see the module docstring.
    session.use_client_timestamp = False
    session.default_fetch_size = 1000
    return cluster, session
