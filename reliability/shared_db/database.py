"""One database that a real Nessie server and lochkit both open (lochkit with ``layout=nessie``),
one process after the other or at the same time: how to start Nessie on it, how lochkit opens it,
and how Nessie's full scan reaches it."""

from __future__ import annotations

import contextlib
import itertools
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final
from urllib.parse import unquote, urlsplit, urlunsplit

from loadgen.nessie_jvm import Address, jdbc_url, mariadb_jdbc_url
from nessie_client import NessieRestClient
from persist_spi.adapter import BackendAdapter
from persist_spi.config import StoreConfig
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.opening import open_persist
from persist_spi.registry import backend_factory
from persist_spi.versionstore.store import VersionStore
from provisioning.servers.nessie import PROVISIONER as NESSIE

#: Nessie's JDBC2 tables for PostgreSQL, as its 0.99.0 backend creates them when they are missing
#: (see docs/nessie-database.md); pre-created so the test does not depend on that start-up path.
NESSIE_JDBC2_DDL: Final = (
    (
        "CREATE TABLE refs2 (repo VARCHAR COLLATE ucs_basic, ref_name VARCHAR COLLATE ucs_basic, "
        "pointer BYTEA, ext_info BYTEA, prev_ptr BYTEA, created_at BIGINT DEFAULT 0, deleted BOOLEAN, "
        "PRIMARY KEY (repo, ref_name))"
    ),
    (
        "CREATE TABLE objs2 (repo VARCHAR COLLATE ucs_basic, obj_id BYTEA, obj_type VARCHAR COLLATE "
        "ucs_basic, obj_vers VARCHAR COLLATE ucs_basic, obj_value BYTEA, obj_ref BIGINT, "
        "PRIMARY KEY (repo, obj_id))"
    ),
)


def with_layout(url: str) -> str:
    """``url`` with lochkit's ``layout=nessie`` option added."""
    return f"{url}{'&' if '?' in url else '?'}layout=nessie"


@dataclass
class SharedDatabase:
    """A database both sides open: ``url`` is lochkit's address of it (without the layout)."""

    backend: str
    url: str
    workdir: Path
    #: Nessie must be stopped before lochkit opens it (RocksDB: one process at a time).
    sequential: bool = False
    _starts: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def lochkit_url(self) -> str:
        return with_layout(self.url)

    @contextlib.contextmanager
    def nessie(self) -> Iterator[NessieRestClient]:
        """A Nessie server on this database for the duration of the block (stopped after it)."""
        workdir = self.workdir / f"nessie-{next(self._starts)}"
        workdir.mkdir(parents=True)
        server = NESSIE.shared(self.backend, self.url, workdir)
        try:
            assert server.url is not None
            with NessieRestClient(server.url) as client:
                yield client
        finally:
            server.stop()

    @contextlib.contextmanager
    def adapter(self, *, read_only: bool = False) -> Iterator[BackendAdapter]:
        """lochkit's adapter on this database in Nessie's layout (read only: opened as ``lochkit
        check`` opens a database)."""
        factory = backend_factory(self.backend)
        adapter = factory.open_existing(self.lochkit_url) if read_only else factory.create(self.lochkit_url)
        try:
            yield adapter
        finally:
            adapter.close()

    @contextlib.contextmanager
    def lochkit(self, *, initialize: bool = False) -> Iterator[VersionStore]:
        """lochkit's version store on this database (``initialize``: create the schema and the
        repository first, as a new lochkit deployment does)."""
        with self.adapter() as adapter:
            persist = open_persist(adapter, StoreConfig(), object_cache=False)
            if initialize:
                adapter.setup_schema()
                RepositoryLogic(persist).initialize("main")
            yield VersionStore(persist)

    def scan_address(self) -> Address | None:
        """Where Nessie's full scan finds this database: a JDBC URL (PostgreSQL, MariaDB), a RocksDB
        directory, a MongoDB connection string, or lochkit's own URL of a Cassandra keyspace, a
        DynamoDB endpoint or a Bigtable emulator (with its table prefix); None for a backend the
        full-scan program has no reader for."""
        if self.backend == "postgres":
            return Address("postgres", jdbc_url(self.url))
        if self.backend == "mariadb":
            return Address("mariadb", mariadb_jdbc_url(self.url))
        if self.backend == "rocksdb":
            return Address("rocksdb", self.url.removeprefix("rocksdb://"))
        if self.backend == "mongodb":
            return Address("mongodb", self.url)
        if self.backend in ("cassandra", "dynamodb", "bigtable"):
            return Address(self.backend, self.url)
        return None


def fresh_postgres(server_url: str, admin_url: str, workdir: Path, *, precreate: bool) -> SharedDatabase:
    """A new database on a provisioned PostgreSQL server, owned by the server's lochkit role;
    ``precreate``: with Nessie's tables already in it (Nessie then only checks them)."""
    import psycopg
    from psycopg import sql

    parts = urlsplit(server_url)
    name = f"shared_{secrets.token_hex(4)}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(
                sql.Identifier(name), sql.Identifier(parts.username or "postgres")
            )
        )
    url = urlunsplit(parts._replace(path=f"/{name}"))
    if precreate:
        with psycopg.connect(url) as conn:
            for ddl in NESSIE_JDBC2_DDL:
                conn.execute(ddl)
    return SharedDatabase("postgres", url, workdir)


def fresh_mariadb(server_url: str, admin_url: str, workdir: Path) -> SharedDatabase:
    """A new database on a provisioned MariaDB server, for the server's lochkit user; Nessie
    creates its tables there (or lochkit does, whichever starts first)."""
    import pymysql

    parts, admin = urlsplit(server_url), urlsplit(admin_url)
    name = f"shared_{secrets.token_hex(4)}"
    conn = pymysql.connect(
        host=admin.hostname,
        port=admin.port or 3306,
        user=unquote(admin.username or ""),
        password=unquote(admin.password or ""),
        autocommit=True,
    )
    try:
        with conn.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
            cursor.execute(f"GRANT ALL PRIVILEGES ON {name}.* TO %s@%s", [parts.username, parts.hostname])
    finally:
        conn.close()
    return SharedDatabase("mariadb", urlunsplit(parts._replace(path=f"/{name}")), workdir)


def fresh_rocksdb(workdir: Path) -> SharedDatabase:
    """A new RocksDB directory (created by whichever side opens it first)."""
    path = workdir / f"rocksdb-{secrets.token_hex(4)}"
    return SharedDatabase("rocksdb", f"rocksdb://{path}", workdir, sequential=True)


def fresh_cassandra(server_url: str, workdir: Path) -> SharedDatabase:
    """A new keyspace on a provisioned Cassandra node (Nessie creates its tables, not keyspaces)."""
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster

    parts = urlsplit(server_url)
    keyspace = f"nessie_{secrets.token_hex(4)}"
    auth = PlainTextAuthProvider(parts.username, parts.password) if parts.username else None
    cluster = Cluster([parts.hostname or "127.0.0.1"], port=parts.port or 9042, auth_provider=auth)
    try:
        session = cluster.connect()
        session.execute(
            f"CREATE KEYSPACE {keyspace} WITH replication = "
            "{'class': 'SimpleStrategy', 'replication_factor': 1}",
            timeout=60,
        )
    finally:
        cluster.shutdown()
    return SharedDatabase("cassandra", urlunsplit(parts._replace(path=f"/{keyspace}")), workdir)


def fresh_dynamodb(server_url: str, workdir: Path) -> SharedDatabase:
    """New tables on a provisioned DynamoDB Local, apart from others by their prefix."""
    prefix = f"shared{secrets.token_hex(4)}"
    return SharedDatabase("dynamodb", f"{server_url}&table_prefix={prefix}", workdir)


def fresh_bigtable(server_url: str, workdir: Path) -> SharedDatabase:
    """New tables on a provisioned Bigtable emulator, apart from others by their prefix (Nessie's
    ``table-prefix``: tables ``<prefix>_refs`` and ``<prefix>_objs``, created by whichever side
    starts first)."""
    prefix = f"shared{secrets.token_hex(4)}"
    return SharedDatabase("bigtable", f"{server_url}&table_prefix={prefix}", workdir)
