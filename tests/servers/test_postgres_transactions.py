"""Transactions per version-store commit on PostgreSQL, counted by the server itself.

A commit must cost a bounded number of round trips whatever its number of puts: at most 6
transactions (what Nessie's own implementation spends), and by design 1 through the object cache
(store the content values and the commit and compare-and-swap the branch, all in one statement:
the sole writer of a branch builds on the row it last wrote, without reading it) plus 1 without it
(read the head commit) plus 1 when it creates content (claim the new content ids, all in one bulk
write). A writer whose remembered row another writer made stale reads the branch as before.

The count is PostgreSQL's ``xact_commit + xact_rollback`` of the benchmark's database. A backend
reports its counts to the statistics only from time to time, but always when it exits, so each
measured run uses its own adapter, closes it, and waits until its server processes are gone
before reading. The reading connection is to another database, so it never counts itself. Two
runs of different lengths are subtracted, which cancels what opening an adapter costs.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import psycopg
import pytest

from backends.postgres import PostgresBackendFactory
from persist_spi.cache_store import ObjectCache
from persist_spi.config import StoreConfig
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.opening import open_persist
from persist_spi.versionstore.content import ContentKey, IcebergTable, Namespace
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch
from persist_spi.versionstore.store import VersionStore
from provisioning.servers.postgres import PROVISIONER, PostgresProvisioned

FACTORY = PostgresBackendFactory()
PREFIX = f"tx{uuid.uuid4().hex[:6]}_"
REPOSITORY = "transactions"
BRANCH = branch("bench")
TABLES = 20
#: What the issue allows: Nessie's own count.
MOST_PER_COMMIT = 6
#: Now and then the server counts one transaction nobody here ran (a run of 10 commits then shows
#: 0.1 more per commit); one more round trip per commit is a whole 1.0 and fails.
TOLERANCE = 0.35


@dataclass
class Database:
    server: PostgresProvisioned
    url: str
    name: str
    content_ids: dict[ContentKey, str]


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Database]:
    server = PROVISIONER.local_process("postgres", tmp_path_factory.mktemp("postgres-transactions"))
    try:
        url = f"{server.url}?table_prefix={PREFIX}"
        adapter = FACTORY.create(url)
        try:
            adapter.setup_schema()
            store = VersionStore(open_persist(adapter, StoreConfig(repository_id=REPOSITORY)))
            RepositoryLogic(store.persist).initialize("main")
            store.create_reference(BRANCH, store.reference(branch("main")).hash)
            store.commit(
                BRANCH, None, CommitMeta("ns"), [Put(ContentKey.of("ns"), Namespace(elements=("ns",)))]
            )
            tables = [Put(_key(i), IcebergTable(metadata_location="s3://t/0")) for i in range(TABLES)]
            content_ids = store.commit(BRANCH, None, CommitMeta("tables"), tables).added_content_ids
        finally:
            adapter.close()
        name = str(psycopg.conninfo.conninfo_to_dict(str(server.url))["dbname"])
        # Autovacuum workers run transactions of their own in the database (on any table,
        # catalogs included); this server is the module's own, so switch them off.
        with psycopg.connect(server.admin_url, autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET autovacuum = off")
            conn.execute("SELECT pg_reload_conf()")
        yield Database(server, url, name, content_ids)
    finally:
        server.stop()


def _key(i: int) -> ContentKey:
    return ContentKey.of("ns", f"t{i}")


def transactions(db: Database, run: Callable[[VersionStore], None], *, cache: bool) -> int:
    """Transactions the server counted for ``run`` on a fresh adapter (and a cold object cache)."""
    with psycopg.connect(db.server.admin_url, autocommit=True) as stats:  # another database
        before = _settled_count(stats, db.name)
        adapter = FACTORY.create(db.url)
        try:
            persist = open_persist(
                adapter, StoreConfig(repository_id=REPOSITORY), object_cache=cache, cache=ObjectCache()
            )
            run(VersionStore(persist))
        finally:
            adapter.close()
        return _settled_count(stats, db.name) - before


def _settled_count(stats: psycopg.Connection[tuple[int]], name: str) -> int:
    """The database's transaction count once every server process of it has exited and reported.
    A process leaves the activity list a moment before its last report, so the count must also
    stay the same for a while."""
    deadline = time.monotonic() + 15
    last, steady_since = -1, time.monotonic()
    while time.monotonic() < deadline:
        row = stats.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s", [name]).fetchone()
        stats.execute("SELECT pg_stat_clear_snapshot()")
        count = stats.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = %s", [name]
        ).fetchone()
        assert row is not None
        assert count is not None
        now = time.monotonic()
        if row[0] != 0 or count[0] != last:
            last, steady_since = int(count[0]), now
        elif now - steady_since >= 0.3:
            return last
        time.sleep(0.02)
    raise AssertionError(f"the transaction count of database {name} did not settle within 15 s")


def per_commit(db: Database, commit: Callable[[VersionStore, int], None], *, cache: bool) -> float:
    """Transactions one more commit costs: runs of 2 and 12 commits, subtracted."""

    def commits(n: int) -> Callable[[VersionStore], None]:
        def run(store: VersionStore) -> None:
            for i in range(n):
                commit(store, i)

        return run

    short = transactions(db, commits(2), cache=cache)
    long = transactions(db, commits(12), cache=cache)
    return (long - short) / 10


def updates(db: Database, puts: int) -> Callable[[VersionStore, int], None]:
    def commit(store: VersionStore, n: int) -> None:
        # New values every time: a value stored before would cost a "referenced" refresh.
        ops = [
            Put(_key(k), IcebergTable(id=db.content_ids[_key(k)], metadata_location=f"s3://{uuid.uuid4()}"))
            for k in range(puts)
        ]
        store.commit(BRANCH, None, CommitMeta(f"update {n}"), ops)

    return commit


def new_tables(puts: int) -> Callable[[VersionStore, int], None]:
    def commit(store: VersionStore, n: int) -> None:
        ops = [Put(ContentKey.of("ns", f"new-{uuid.uuid4().hex}"), IcebergTable()) for _ in range(puts)]
        store.commit(BRANCH, None, CommitMeta(f"create {n}"), ops)

    return commit


@pytest.mark.parametrize("puts", [1, 10])
def test_an_update_costs_one_transaction_through_the_object_cache(database: Database, puts: int) -> None:
    counted = per_commit(database, updates(database, puts), cache=True)
    assert counted <= MOST_PER_COMMIT
    assert counted == pytest.approx(1, abs=TOLERANCE)  # store and compare-and-swap, one statement


@pytest.mark.parametrize("puts", [1, 10])
def test_an_update_costs_two_transactions_without_the_object_cache(database: Database, puts: int) -> None:
    counted = per_commit(database, updates(database, puts), cache=False)
    assert counted <= MOST_PER_COMMIT
    assert counted == pytest.approx(2, abs=TOLERANCE)  # and read the head commit


def test_an_update_reads_the_branch_when_another_writer_moved_it(database: Database) -> None:
    """Two writers over two adapters take turns on one branch, so the row each remembers is
    always stale: after each has lost one race, every attempt reads the branch for a second,
    without trying the remembered row first. Each commit then costs 3: read the branch, read the
    head commit (the other writer wrote it, so this object cache does not hold it), store and
    compare-and-swap in one statement."""
    update = updates(database, 1)

    def pairs(n: int) -> Callable[[VersionStore], None]:
        def run(store: VersionStore) -> None:
            other_adapter = FACTORY.create(database.url)
            try:
                other = VersionStore(open_persist(other_adapter, StoreConfig(repository_id=REPOSITORY)))
                for i in range(n):
                    update(other, i)
                    update(store, i)
            finally:
                other_adapter.close()

        return run

    short = transactions(database, pairs(2), cache=True)
    long = transactions(database, pairs(12), cache=True)
    assert (long - short) / 10 == pytest.approx(3 + 3, abs=2 * TOLERANCE)


@pytest.mark.parametrize(("cache", "expected"), [(True, 2), (False, 3)])
def test_creating_content_claims_every_new_content_id_in_one_transaction(
    database: Database, cache: bool, expected: int
) -> None:
    counted = per_commit(database, new_tables(10), cache=cache)
    assert counted <= MOST_PER_COMMIT
    assert counted == pytest.approx(expected, abs=TOLERANCE)  # one more: claim 10 content ids


def test_the_count_sees_every_statement(database: Database) -> None:
    """The counting itself: ten more single-statement transactions count ten more. (The first
    use of a statement on a connection prepares it, which the server counts as one more.)"""

    def run(extra: int) -> Callable[[VersionStore], None]:
        def body(store: VersionStore) -> None:
            for _ in range(1 + extra):
                store.persist.fetch_reference(BRANCH.full_name)

        return body

    more = transactions(database, run(10), cache=False) - transactions(database, run(0), cache=False)
    assert more == pytest.approx(10, abs=1)  # see TOLERANCE
