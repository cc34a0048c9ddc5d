"""Runs the shared-database scenario on one backend from nothing: provisions the database server
(PostgreSQL as a local process; RocksDB needs none), makes a fresh database or directory per
variant, builds Nessie's side (the Java program), and prints the results as a table."""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from loadgen import nessie_jvm
from provisioning.base import ProvisioningFailed
from provisioning.registry import start_local
from provisioning.servers.mariadb import MariadbProvisioned
from provisioning.servers.postgres import PostgresProvisioned
from reliability.shared_db.database import (
    SharedDatabase,
    fresh_bigtable,
    fresh_cassandra,
    fresh_dynamodb,
    fresh_mariadb,
    fresh_postgres,
    fresh_rocksdb,
)
from reliability.shared_db.names import BACKENDS, CONCURRENT_COMMITS, DIRECTIONS
from reliability.shared_db.scenario import Outcome, run_all

PRECREATED: Final = "nessie first, tables pre-created"
NESSIE_CREATES: Final = "nessie first, Nessie creates tables"


def _slug(variant: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", variant.lower()).strip("-")


def run_backend(
    backend: str,
    workdir: Path,
    directions: Sequence[str] = DIRECTIONS,
    concurrent_commits: int = CONCURRENT_COMMITS,
    postgres_variants: Sequence[str] = (PRECREATED, NESSIE_CREATES),
) -> list[Outcome]:
    """Every direction asked for on ``backend``, on servers and databases made for this run (and
    stopped or left in ``workdir`` afterwards). On PostgreSQL, the Nessie-first directions run once
    per ``postgres_variants`` (Nessie's DDL run first, Nessie creating its tables itself)."""
    if backend not in BACKENDS:
        raise ProvisioningFailed(f"shared-db: runs on {', '.join(BACKENDS)}; {backend} is not among them yet")
    classpath = functools.cache(nessie_jvm.build)
    with contextlib.ExitStack() as stack:
        db_for: Callable[[str], SharedDatabase]
        if backend == "postgres":
            server = start_local("postgres", workdir / "postgres-server")
            stack.callback(server.stop)
            assert isinstance(server, PostgresProvisioned)
            assert server.url is not None
            url, admin = server.url, server.admin_url

            def db_for(variant: str) -> SharedDatabase:
                return fresh_postgres(url, admin, workdir / _slug(variant), precreate=variant == PRECREATED)

            return run_all(db_for, classpath, directions, postgres_variants, concurrent_commits)

        if backend == "mariadb":
            maria = start_local("mariadb", workdir / "mariadb-server")
            stack.callback(maria.stop)
            assert isinstance(maria, MariadbProvisioned)
            assert maria.url is not None
            maria_url, maria_admin = maria.url, maria.admin_url

            def maria_for(variant: str) -> SharedDatabase:
                return fresh_mariadb(maria_url, maria_admin, workdir / _slug(variant))

            return run_all(maria_for, classpath, directions, concurrent_commits=concurrent_commits)

        if backend == "rocksdb":

            def rocks_for(variant: str) -> SharedDatabase:
                return fresh_rocksdb(workdir / _slug(variant))

            return run_all(rocks_for, classpath, directions, concurrent_commits=concurrent_commits)
        node = start_local(backend, workdir / f"{backend}-server")
        stack.callback(node.stop)
        assert node.url is not None
        node_url = node.url
        fresh = {"cassandra": fresh_cassandra, "bigtable": fresh_bigtable}.get(backend, fresh_dynamodb)

        def db_on_node(variant: str) -> SharedDatabase:
            return fresh(node_url, workdir / _slug(variant))

        return run_all(db_on_node, classpath, directions, concurrent_commits=concurrent_commits)


def table(outcomes: Sequence[Outcome]) -> str:
    """backend x variant x direction x result, with the commits each made and what was seen."""
    header = ("backend", "variant", "direction", "result", "commits", "detail")
    rows = [header] + [
        (o.backend, o.variant, o.direction, o.result, str(o.commits), o.detail) for o in outcomes
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header) - 1)]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1] for r in rows
    ]
    return "\n".join(lines)
