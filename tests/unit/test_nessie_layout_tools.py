"""lochkit's tools on a store in Nessie's layout (``?layout=nessie``), as a Nessie user points them
at a Nessie database: ``check`` and ``inventory`` read it without changing a byte, the inventory
sizes objects as that layout stores them, and ``serve`` serves it. (That a real Nessie server reads
what lochkit wrote there is the shared-database test's job, tests/shared_db.)"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pyarrow.parquet as pq

from backends.rocksdb import RocksDBBackendFactory
from nessie_client import NessieRestClient
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.ids import ObjId
from persist_spi.layouts import NESSIE_LAYOUT
from persist_spi.versionstore.content import ContentKey, IcebergTable
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch
from persist_spi.versionstore.store import VersionStore
from tests.rest.serve_process import start_serve
from tests.rest.test_serve_command import _free_port
from tests.unit.test_inspecting_commands import files, lochkit


def _nessie_store(path: Path) -> str:
    """A RocksDB store in Nessie's layout with 3 commits on main; its URL."""
    url = f"{path}?layout=nessie"
    adapter = RocksDBBackendFactory().create(url)
    try:
        assert adapter.layout is NESSIE_LAYOUT
        store = VersionStore(AdapterPersist(adapter, StoreConfig()))
        store.repository.initialize("main")
        for n in range(3):
            table = IcebergTable(metadata_location=f"s3://m/{n}.json", snapshot_id=n)
            store.commit(branch("main"), None, CommitMeta(f"c{n}"), [Put(ContentKey.of(f"t{n}"), table)])
    finally:
        adapter.close()
    return url


def test_check_and_inventory_read_a_nessie_layout_store_and_change_nothing(tmp_path: Path) -> None:
    url = _nessie_store(tmp_path / "db")
    before = files(tmp_path / "db")
    checked = lochkit("check", "--backend", "rocksdb", "--url", url)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "consistent" in checked.stdout
    out = tmp_path / "inv"
    inventory = lochkit("inventory", "--backend", "rocksdb", "--url", url, "--out", str(out))
    assert inventory.returncode == 0, inventory.stderr
    assert files(tmp_path / "db") == before
    assert json.loads((out / "inventory.json").read_text())["source"]["layout"] == "nessie"
    # Sizes are what the layout stores: the store's own objects, encoded by Nessie's codec.
    adapter = RocksDBBackendFactory().open_existing(url)
    try:
        persist = AdapterPersist(adapter, StoreConfig())
        objects = pq.read_table(out / "objects.parquet").to_pylist()
        assert objects, "the inventory lists no objects"
        for row in objects:
            obj = persist.fetch_obj(ObjId.from_hex(row["obj_id"]))
            assert row["encoded_size"] == len(NESSIE_LAYOUT.codec.encode(obj).data), row
    finally:
        adapter.close()


def test_serve_serves_a_nessie_layout_store(tmp_path: Path) -> None:
    url = _nessie_store(tmp_path / "db")
    port = _free_port()
    served = ["--backend", "rocksdb", "--url", url, "--port", str(port)]
    process = start_serve(served, f"http://127.0.0.1:{port}/api/v2/config")
    try:
        with NessieRestClient(f"http://127.0.0.1:{port}/api/v2") as client:
            main = branch("main")
            table = client.get_value(main, ContentKey.of("t2"))
            assert isinstance(table, IcebergTable)
            assert table.metadata_location == "s3://m/2.json"
            head = client.reference(main).hash
            fresh = IcebergTable(metadata_location="s3://m/9.json", snapshot_id=9)
            client.commit(main, head, CommitMeta("through serve"), [Put(ContentKey.of("t9"), fresh)])
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=30)[0]
    assert process.returncode == 0, output
    adapter = RocksDBBackendFactory().open_existing(url)
    try:
        store = VersionStore(AdapterPersist(adapter, StoreConfig()))
        assert [e.meta.message for e in store.get_commits(branch("main"))][:2] == ["through serve", "c2"]
    finally:
        adapter.close()
