"""How PostgreSQL plans the adapter's id lookups in a repository its statistics do not know yet.

Every new repository starts that way, until autovacuum analyses the table again. Planned with the
parameter values, PostgreSQL then judged the repository to hold about one object and looked ids up
by reading all of its objects, with ``obj_id = ANY(...)`` as a filter: commits without the object
cache slowed from about 1 ms to 5 ms and kept slowing as the repository grew. The adapter looks
each id up on its own (a lateral subquery per id), so both key columns are in the index condition.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from backends.postgres import PostgresBackendFactory
from backends.postgres.adapter import PostgresAdapter
from persist_spi.adapter import ObjRow
from provisioning.servers.postgres import PROVISIONER, PostgresProvisioned

OBJECTS = 3_000


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresProvisioned]:
    provisioned = PROVISIONER.local_process("postgres", tmp_path_factory.mktemp("postgres-plans"))
    try:
        yield provisioned
    finally:
        provisioned.stop()


@pytest.fixture
def adapter(server: PostgresProvisioned) -> Iterator[PostgresAdapter]:
    assert server.url is not None
    prefix = f"pl{uuid.uuid4().hex[:6]}_"
    adapter = PostgresBackendFactory().create(f"{server.url}?table_prefix={prefix}")
    assert isinstance(adapter, PostgresAdapter)
    adapter.setup_schema()
    _fill(adapter, "old-repository")
    with psycopg.connect(server.url, autocommit=True) as owner:
        owner.execute(f"ANALYZE {prefix}objs")  # statistics that know only the old repository
    _fill(adapter, "new-repository")
    try:
        yield adapter
    finally:
        adapter.close()


def _fill(adapter: PostgresAdapter, repository: str) -> None:
    rows = [ObjRow(os.urandom(32), "c", None, b"x" * 100, 0) for _ in range(OBJECTS)]
    for start in range(0, OBJECTS, 500):
        adapter.insert_objs(repository, rows[start : start + 500])


def _nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


def _plan(conn: psycopg.Connection[Any], statement: str, *values: str) -> dict[str, Any]:
    """The plan PostgreSQL uses for ``statement`` prepared on ``conn`` (as psycopg prepares it)."""
    placeholders = itertools.count(1)
    numbered = re.sub(r"%[sb]", lambda _: f"${next(placeholders)}", statement)
    conn.execute(f"PREPARE lookup AS {numbered}")
    try:
        row = conn.execute(f"EXPLAIN (FORMAT JSON) EXECUTE lookup({', '.join(values)})").fetchone()
    finally:
        conn.execute("DEALLOCATE lookup")
    assert row is not None
    plan: dict[str, Any] = (row[0] if isinstance(row[0], list) else json.loads(row[0]))[0]["Plan"]
    return plan


def test_an_id_lookup_in_a_repository_the_statistics_do_not_know_uses_both_key_columns(
    adapter: PostgresAdapter,
) -> None:
    statement = adapter._sql.fetch_objs
    plan = adapter._run(
        "planning",
        lambda conn: _plan(conn, statement, "ARRAY['\\x00'::bytea]", "'new-repository'"),
        write=False,
    )
    nodes = list(_nodes(plan))
    assert any("obj_id" in node.get("Index Cond", "") for node in nodes), plan
    assert not any("obj_id" in node.get("Filter", "") for node in nodes), plan
