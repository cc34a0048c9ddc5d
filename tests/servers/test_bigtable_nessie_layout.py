"""Bigtable in Nessie's layout against a real server (Google's emulator unless
``LOCHKIT_BIGTABLE_URL`` names another): the cells land where Nessie's store reads them, a stored
reference another writer encoded otherwise is still swapped (on the bytes read, never blindly),
and the tables of one layout are refused by the other."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator

import pytest

pytest.importorskip("google.cloud.bigtable_v2")

from backends.bigtable import BigtableBackendFactory
from backends.bigtable.adapter import BigtableAdapter
from backends.bigtable.messages import family, merge_rows, read, row_set, set_cells
from backends.bigtable.statements import NESSIE_CELL_TIMESTAMP_MICROS
from persist_spi.adapter import ObjRow, RefRow
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.errors import BackendSchemaMismatch
from persist_spi.ids import ObjId
from persist_spi.protowire import ProtoWriter
from provisioning.base import Provisioned
from tests.servers.provisioned import provisioned_server

FACTORY = BigtableBackendFactory()
POINTER = b"\x11" * 32


@pytest.fixture(scope="module")
def server() -> Iterator[Provisioned]:
    with provisioned_server("bigtable", FACTORY, "bigtable-nessie") as provisioned:
        yield provisioned


@pytest.fixture
def prefix() -> str:
    return f"n{uuid.uuid4().hex[:10]}"


@pytest.fixture
def adapter(server: Provisioned, prefix: str) -> Iterator[BigtableAdapter]:
    """An adapter in Nessie's layout on tables of its own, dropped afterwards."""
    assert server.url is not None
    opened = FACTORY.create(server.url, {"table_prefix": prefix, "layout": "nessie"})
    yield opened
    for table in (opened._refs, opened._objs):
        with contextlib.suppress(Exception):
            opened._admin.delete_table(name=table)
    opened.close()


def _raw(adapter: BigtableAdapter, table: str, key: bytes) -> dict[bytes, bytes]:
    """The cells of one row as stored (qualifier -> value)."""
    column_family = "o" if table == adapter._objs else "r"
    responses = adapter._data.read_rows(request=read(table, row_set([key]), family(column_family), ""))
    rows: dict[bytes, dict[bytes, bytes]] = dict(merge_rows(responses))
    return rows.get(key, {})


def test_rows_are_where_nessies_store_reads_them(adapter: BigtableAdapter, prefix: str) -> None:
    assert adapter._refs.endswith(f"/tables/{prefix}_refs")
    assert "Nessie's Bigtable layout" in adapter.setup_schema()
    assert adapter.insert_ref("repo", RefRow("refs/heads/main", POINTER, False, 3, None, b""))
    obj = ObjRow(b"\x22" * 32, "c", "v1", b"\x12\x00", 42)
    assert adapter.insert_objs("repo", [obj]) == [True]
    ref_cells = _raw(adapter, adapter._refs, b"repo:refs/heads/main")
    assert set(ref_cells) == {b"r"}
    obj_cells = _raw(adapter, adapter._objs, b"repo:" + b"\x22" * 32)
    assert obj_cells == {b"o": b"\x12\x00", b"t": b"COMMIT", b"V": b"v1", b"z": b"42"}
    assert "Nessie's Bigtable layout" in adapter.verify_schema()


def test_a_reference_encoded_otherwise_is_swapped_on_the_bytes_read(adapter: BigtableAdapter) -> None:
    adapter.setup_schema()
    name = "refs/heads/main"
    # Fields in another order than lochkit (and Nessie) write them: the same reference.
    foreign = ProtoWriter().bytes_field(2, POINTER).string_field(1, name).varint_field(4, 3).to_bytes()
    adapter._data.mutate_row(
        table_name=adapter._refs,
        row_key=b"repo:" + name.encode(),
        mutations=set_cells("r", {b"r": foreign}, NESSIE_CELL_TIMESTAMP_MICROS),
    )
    persist = AdapterPersist(adapter, StoreConfig(repository_id="repo"))
    ref = persist.fetch_reference(name)
    assert ref is not None
    assert (bytes(ref.pointer), ref.created_at_micros) == (POINTER, 3)
    updated = persist.update_reference_pointer(ref, ObjId(b"\x33" * 32))
    assert persist.fetch_reference(name) == updated
    (row,) = adapter.fetch_refs("repo", [name])
    assert row is not None
    # Now stored as lochkit (and Nessie) write it.
    assert _raw(adapter, adapter._refs, b"repo:" + name.encode()) == adapter._cells.ref_cells(row)
    # A stale expectation still fails: a repeated swap compares the bytes read, and only when the
    # compared fields agree.
    assert not adapter.update_ref("repo", row._replace(pointer=POINTER), row)
    assert adapter.fetch_refs("repo", [name]) == [row]


def test_each_layout_refuses_the_others_tables(
    server: Provisioned, adapter: BigtableAdapter, prefix: str
) -> None:
    assert server.url is not None
    lochkit_prefix = f"{prefix}_"  # lochkit's tables <p>_refs are Nessie's tables of prefix <p>
    adapter.setup_schema()
    adapter.insert_ref("repo", RefRow("refs/heads/main", POINTER, False, 0, None, b""))
    own = FACTORY.create(server.url, {"table_prefix": lochkit_prefix})
    try:
        with pytest.raises(BackendSchemaMismatch, match="not written by lochkit"):
            own.setup_schema()
    finally:
        own.close()
    other = f"l{uuid.uuid4().hex[:10]}"
    own = FACTORY.create(server.url, {"table_prefix": f"{other}_"})
    nessie = FACTORY.create(server.url, {"table_prefix": other, "layout": "nessie"})
    try:
        own.setup_schema()
        for check in (nessie.setup_schema, nessie.verify_schema):
            with pytest.raises(BackendSchemaMismatch, match="lochkit's own layout"):
                check()
    finally:
        for table in (own._refs, own._objs):
            with contextlib.suppress(Exception):
                own._admin.delete_table(name=table)
        own.close()
        nessie.close()
