"""The servers a load comparison runs against, each a process of its own on this machine, each on
a database it creates: ``lochkit serve`` and Nessie's runner jar, on RocksDB (a fresh directory) or
PostgreSQL (a fresh local server, started the way the other commands start one). Everything
started is stopped on leaving the block, also on an error or Ctrl-C."""

from __future__ import annotations

import contextlib
import json
import re
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from provisioning.base import Provisioned, ProvisioningFailed

#: Server kinds and the databases each runs on here.
SERVERS: Final = ("lochkit", "nessie")
DATABASES: Final = ("rocksdb", "postgres")
#: Every target, in the order a comparison runs them: ``<server>-<database>``.
TARGETS: Final = tuple(f"{server}-{database}" for database in DATABASES for server in SERVERS)
_READY_TIMEOUT_S: Final = 180.0


@dataclass(frozen=True)
class Served:
    """A running server: its REST API v2 base, the port it listens on, and what it runs on."""

    target: str
    uri: str
    port: int
    description: str


def split_target(target: str) -> tuple[str, str]:
    """(server, database) of a target name; ValueError naming the targets for anything else."""
    if target not in TARGETS:
        raise ValueError(f"unknown target '{target}'; targets: {', '.join(TARGETS)}")
    server, _, database = target.partition("-")
    return server, database


def config_answers(uri: str) -> bool:
    """Whether a Nessie REST API v2 answers ``GET config`` at ``uri``."""
    with urllib.request.urlopen(f"{uri}/config", timeout=5) as response:
        return bool(json.loads(response.read()).get("defaultBranch"))


@contextlib.contextmanager
def serving(target: str, workdir: Path, *, provision_method: str = "auto") -> Iterator[Served]:
    """Start ``target`` (see :data:`TARGETS`) on a database of its own under ``workdir``."""
    server, database = split_target(target)
    with _database(database, workdir, provision_method) as (url, printable_url, what):
        if server == "lochkit":
            with _lochkit_serve(target, database, printable_url, workdir) as served:
                yield Served(target, served.uri, served.port, f"lochkit serve on {what}")
        else:
            with _nessie(target, database, url, workdir) as served:
                yield Served(target, served.uri, served.port, f"{served.description} on {what}")


@contextlib.contextmanager
def _database(database: str, workdir: Path, method: str) -> Iterator[tuple[str, str, str]]:
    """(url, the same url without secrets, a description) of a database made for this target."""
    if database == "rocksdb":
        directory = workdir / "rocksdb"
        directory.mkdir(parents=True)
        yield str(directory.resolve()), str(directory.resolve()), "RocksDB (a new directory)"
        return
    from persist_spi.registry import backend_factory
    from provisioning.registry import provision

    provisioned = provision(database, backend_factory(database), urls={}, method=method, workdir=workdir)
    try:
        if not provisioned.started_here or not provisioned.url:
            raise ProvisioningFailed(
                f"{database}: the load comparison runs only on a server it starts itself, but "
                f"{provisioned.describe()} was given; unset LOCHKIT_{database.upper()}_URL or use "
                "--provision local"
            )
        yield provisioned.url, provisioned.printable_url or provisioned.url, _described(provisioned)
    finally:
        provisioned.stop()


def _described(provisioned: Provisioned) -> str:
    """The server and its settings, without where its binaries are (the table is published)."""
    server = re.sub(r", local process from [^,]+", "", provisioned.server) or provisioned.backend
    return f"{server} (a new local server)"


@contextlib.contextmanager
def _lochkit_serve(target: str, backend: str, url: str, workdir: Path) -> Iterator[Served]:
    from provisioning.servers.process import LocalServer, free_port

    port = free_port()
    # The address has no password (a PostgreSQL URL names a password file): the process listing
    # shows nothing secret.
    argv = [sys.executable, "-m", "lochkit", "serve", "--backend", backend, "--url", url, "--port", str(port)]
    process = LocalServer("lochkit serve", argv, log_path=workdir / "lochkit-serve.log", cwd=workdir)
    try:
        uri = f"http://127.0.0.1:{port}/api/v2"
        process.wait_until(lambda: config_answers(uri), _READY_TIMEOUT_S, "GET /api/v2/config answering")
        yield Served(target, uri, port, "lochkit serve")
    finally:
        process.stop()


@contextlib.contextmanager
def _nessie(target: str, database: str, url: str, workdir: Path) -> Iterator[Served]:
    from provisioning.servers.nessie import start_server
    from provisioning.servers.nessie_stores import NO_CACHES, shared_store

    store = shared_store(database, url)
    # The database is Nessie's alone here, so its caches stay at their defaults, as a Nessie
    # server runs in production (lochkit serve keeps its object cache on too).
    properties = {k: v for k, v in store.properties.items() if k not in NO_CACHES}
    provisioned = start_server(workdir / "nessie", properties, store.environment())
    try:
        assert provisioned.url is not None
        port = urlsplit(provisioned.url).port
        assert port is not None
        yield Served(target, provisioned.url, port, provisioned.server)
    finally:
        provisioned.stop()
