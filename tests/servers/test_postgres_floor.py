"""The benchmark's database floor on a real PostgreSQL server: through the adapter and through
psycopg alone, each call made as often as asked, and nothing left in the database afterwards.
Speed is printed by ``lochkit bench``, never judged here."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from backends.postgres import PostgresBackendFactory
from loadgen.db_floor import measure_floor
from loadgen.pg_floor import TABLE, measure_raw_cas
from persist_spi.adapter import ObjRow, RefRow
from provisioning.servers.postgres import PROVISIONER, PostgresProvisioned

OTHER = "someone-elses-repository"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresProvisioned]:
    provisioned = PROVISIONER.local_process("postgres", tmp_path_factory.mktemp("postgres-floor"))
    try:
        yield provisioned
    finally:
        provisioned.stop()


def _every_row(conn: psycopg.Connection[Any], prefix: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every lochkit table with ``prefix``, sorted (what a run must leave as it was)."""
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE tablename LIKE %s ORDER BY 1", [prefix + "%"]
        )
    ]
    assert tables
    return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall()) for t in tables}


def test_the_adapter_floor_leaves_every_table_as_it_found_it(server: PostgresProvisioned) -> None:
    assert server.url is not None
    prefix = f"fl{uuid.uuid4().hex[:6]}_"
    adapter = PostgresBackendFactory().create(f"{server.url}?table_prefix={prefix}")
    try:
        adapter.setup_schema()
        adapter.insert_ref(OTHER, RefRow("refs/heads/main", b"\1" * 32, False, 1, None, b""))
        adapter.insert_objs(OTHER, [ObjRow(b"\2" * 32, "c", None, b"data", 1)])
        with psycopg.connect(server.url, autocommit=True) as conn:
            before = _every_row(conn, prefix)
            floor = measure_floor(adapter, operations=6, warmup=2)
            assert {name: f.count for name, f in floor.figures.items()} == {"put": 6, "read": 6, "cas": 6}
            assert _every_row(conn, prefix) == before
    finally:
        adapter.close()


def test_the_bare_compare_and_swap_runs_in_a_temporary_table_that_goes_with_its_connection(
    server: PostgresProvisioned,
) -> None:
    assert server.url is not None
    figures = measure_raw_cas(server.url, operations=6, warmup=2)
    assert figures.count == 6
    assert figures.per_second > 0
    with psycopg.connect(server.url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM pg_class WHERE relname = %s", [TABLE]).fetchone() == (0,)
