"""PostgreSQL's one-statement store-and-swap when another writer inserts one of its rows meanwhile.

The statement swaps only when it inserted every row; a row another transaction inserted (and
committed while the statement waited on it, or just before) is not inserted, so the statement
moves nothing and the adapter finishes as the two steps do: refresh the row's ``referenced``, then
compare-and-swap. The conformance suite covers rows that existed before the call; this covers the
row that appears during it.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from backends.postgres import PostgresBackendFactory
from backends.postgres.adapter import PostgresAdapter
from persist_spi.adapter import InsertAndSwap, ObjRow, RefRow
from provisioning.servers.postgres import PROVISIONER, PostgresProvisioned

REPO = "store-and-swap"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresProvisioned]:
    provisioned = PROVISIONER.local_process("postgres", tmp_path_factory.mktemp("postgres-store-and-swap"))
    try:
        yield provisioned
    finally:
        provisioned.stop()


def test_a_row_another_writer_inserts_meanwhile_is_answered_existing_and_the_swap_still_made(
    server: PostgresProvisioned,
) -> None:
    assert server.url is not None
    prefix = f"ss{uuid.uuid4().hex[:6]}_"
    adapter = PostgresBackendFactory().create(f"{server.url}?table_prefix={prefix}")
    assert isinstance(adapter, PostgresAdapter)
    try:
        adapter.setup_schema()
        current = RefRow("refs/heads/main", os.urandom(32), False, 7, None, b"")
        assert adapter.insert_ref(REPO, current)
        value = ObjRow(os.urandom(32), "c", None, b"mine", 500)
        commit = ObjRow(os.urandom(32), "c", None, b"commit", 500)
        new = current._replace(pointer=commit.obj_id)
        outcome: list[InsertAndSwap] = []
        with psycopg.connect(server.url) as other:  # a transaction, open until committed below
            other.execute(
                f"INSERT INTO {prefix}objs (repo, obj_id, obj_type, obj_vers, obj_value, obj_ref) "
                "VALUES (%s, %s, 'c', NULL, %s, 1)",
                [REPO, value.obj_id, b"theirs"],
            )
            call = threading.Thread(
                target=lambda: outcome.append(
                    adapter.insert_objs_and_update_ref(REPO, [value, commit], current, new)
                )
            )
            call.start()
            time.sleep(0.5)  # the statement now waits on the uncommitted row (or has not started)
            other.commit()
        call.join(timeout=30)
        assert outcome == [InsertAndSwap([False, True], True)]
        assert adapter.fetch_refs(REPO, [current.name]) == [new]
        assert adapter.fetch_objs(REPO, [value.obj_id, commit.obj_id]) == [
            value._replace(data=b"theirs"),  # their bytes, our referenced time
            commit,
        ]
    finally:
        adapter.close()


def _nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


def test_the_statement_reads_no_object_rows_in_its_generic_plan(server: PostgresProvisioned) -> None:
    """Prepared statements switch to a generic plan after five runs. A version of the statement
    that also refreshed existing rows (an UPDATE joined to the objects table) got one that scanned
    the table, and slowed as it grew; the statement now only inserts into it."""
    assert server.url is not None
    prefix = f"sg{uuid.uuid4().hex[:6]}_"
    adapter = PostgresBackendFactory().create(f"{server.url}?table_prefix={prefix}")
    assert isinstance(adapter, PostgresAdapter)
    try:
        adapter.setup_schema()
        row = ObjRow(os.urandom(32), "c", None, b"x", 1)
        current = RefRow("refs/heads/main", os.urandom(32), False, 7, None, b"")
        text, params = adapter.statements.insert_objs_and_update_ref(
            REPO, [row], current, current._replace(pointer=row.obj_id)
        )
        placeholders = itertools.count(1)
        numbered = re.sub(r"%[sb]", lambda _: f"${next(placeholders)}", text)
        with psycopg.connect(server.url, autocommit=True) as conn:
            conn.execute("SET plan_cache_mode = force_generic_plan")
            conn.execute(f"PREPARE store_and_swap AS {numbered}")
            values = ", ".join(["NULL"] * len(params))
            explained = conn.execute(f"EXPLAIN (FORMAT JSON) EXECUTE store_and_swap({values})").fetchone()
        assert explained is not None
        plan = (explained[0] if isinstance(explained[0], list) else json.loads(explained[0]))[0]["Plan"]
        readers = [
            n["Node Type"]
            for n in _nodes(plan)
            if n.get("Relation Name") == f"{prefix}objs" and n["Node Type"] != "ModifyTable"
        ]
        assert readers == [], f"the generic plan reads the objects table: {readers}"
        assert any(n.get("Relation Name") == f"{prefix}refs" for n in _nodes(plan))
    finally:
        adapter.close()
