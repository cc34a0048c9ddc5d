"""The errors a Bigtable user meets, against a real server (Google's emulator unless
``LOCHKIT_BIGTABLE_URL`` names another): each names the backend and address and says what to do.
Also the read-stream merging on values above the emulator's chunk size, and tables that are not
lochkit's."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator

import pytest

pytest.importorskip("google.cloud.bigtable_v2")

from google.cloud.bigtable_admin_v2.types import ColumnFamily, Table

from backends.bigtable import BigtableBackendFactory
from backends.bigtable.adapter import BigtableAdapter
from backends.bigtable.messages import set_cells
from backends.bigtable.statements import SCHEMA_QUALIFIER, SCHEMA_ROW_KEY
from persist_spi.adapter import ObjRow
from persist_spi.errors import BackendSchemaMismatch, BackendStoreMissing, BackendUnavailable
from provisioning.base import Provisioned
from provisioning.servers.process import free_port
from tests.servers.provisioned import provisioned_server

FACTORY = BigtableBackendFactory()


@pytest.fixture(scope="module")
def server() -> Iterator[Provisioned]:
    with provisioned_server("bigtable", FACTORY, "bigtable-errors") as provisioned:
        yield provisioned


@pytest.fixture
def adapter(server: Provisioned) -> Iterator[BigtableAdapter]:
    """An adapter on tables of its own, dropped afterwards."""
    assert server.url is not None
    prefix = f"t{uuid.uuid4().hex[:10]}_"
    opened = FACTORY.create(server.url, {"table_prefix": prefix})
    yield opened
    for table in (opened._refs, opened._objs):
        with contextlib.suppress(Exception):
            opened._admin.delete_table(name=table)
    opened.close()


def test_a_server_that_is_down_is_unavailable_and_named() -> None:
    if os.environ.get("LOCHKIT_BIGTABLE_URL"):
        pytest.skip("a given server is not stopped here")
    url = f"bigtable://127.0.0.1:{free_port()}?project=p&instance=i"
    down = FACTORY.create(url)
    try:
        with pytest.raises(BackendUnavailable, match=r"bigtable at bigtable://127\.0\.0\.1:\d+\?project=p"):
            down.setup_schema()
        with pytest.raises(BackendUnavailable, match="lochkit servers start bigtable"):
            down.fetch_refs("", ["main"])
    finally:
        down.close()


def test_opening_tables_that_are_not_there_creates_nothing(adapter: BigtableAdapter) -> None:
    with pytest.raises(BackendStoreMissing, match="there is no table"):
        adapter.verify_schema()
    with pytest.raises(BackendStoreMissing):  # still nothing: verify created no table
        adapter.verify_schema()


def test_tables_of_another_schema_version_are_refused(adapter: BigtableAdapter) -> None:
    adapter.setup_schema()
    assert "schema version 1" in adapter.verify_schema()
    adapter._data.mutate_row(
        table_name=adapter._refs,
        row_key=SCHEMA_ROW_KEY,
        mutations=set_cells("r", {SCHEMA_QUALIFIER: b"99"}),
    )
    for check in (adapter.setup_schema, adapter.verify_schema):
        with pytest.raises(BackendSchemaMismatch, match="schema version 99"):
            check()


def test_a_table_without_lochkit_s_family_is_refused(adapter: BigtableAdapter) -> None:
    settings = adapter._settings
    adapter._admin.create_table(
        parent=settings.instance_path,
        table_id=settings.refs_table,
        table=Table(column_families={"other": ColumnFamily()}),
    )
    with pytest.raises(BackendSchemaMismatch, match="no column family 'r'"):
        adapter.setup_schema()


def test_large_values_come_back_whole_in_bulk_reads_and_scans(adapter: BigtableAdapter) -> None:
    adapter.setup_schema()
    rows = [ObjRow(bytes([i]) * 32, "c", None, os.urandom(3 * 1024 * 1024 + i), i) for i in range(3)]
    assert adapter.insert_objs("big", rows) == [True, True, True]
    assert adapter.fetch_objs("big", [r.obj_id for r in rows]) == rows
    assert sorted(adapter.scan_objs("big", None)) == sorted(rows)
    adapter.erase_repositories(["big"])
    assert adapter.fetch_objs("big", [r.obj_id for r in rows]) == [None, None, None]
