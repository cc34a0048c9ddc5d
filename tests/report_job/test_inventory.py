"""``lochkit inventory`` on real repositories: what lands in each table, and its user errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from lochkit.cli import main as lochkit
from persist_spi.adapter import BackendAdapter
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.registry import backend_factory
from persist_spi.versionstore.content import ContentKey, IcebergTable
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Delete, Operation, Put
from persist_spi.versionstore.refs import branch
from persist_spi.versionstore.store import VersionStore
from reports.inventory import write_inventory

SMALL_INDEX = StoreConfig(max_incremental_index_size=2048, max_serialized_index_size=4096)


def make_repository(
    backend: str, url: str | None, commits: int, puts: int, config: StoreConfig
) -> tuple[AdapterPersist, BackendAdapter]:
    adapter = backend_factory(backend).create(url)
    adapter.setup_schema()
    persist = AdapterPersist(adapter, config)
    RepositoryLogic(persist).initialize("main")
    store = VersionStore(persist)
    head = None
    for i in range(commits):
        ops: list[Operation] = [
            Put(ContentKey.of(f"table_{i}_{p}_{'x' * 40}"), IcebergTable(metadata_location=f"s3://w/{i}/{p}"))
            for p in range(puts)
        ]
        if i == commits - 1:
            ops.append(Delete(ContentKey.of(f"table_0_0_{'x' * 40}")))
        head = store.commit(branch("main"), head, CommitMeta(message=f"c{i}"), ops).hash
    return persist, adapter


@pytest.fixture(scope="module")
def inventory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    persist, adapter = make_repository("inmemory", None, commits=60, puts=5, config=SMALL_INDEX)
    out = tmp_path_factory.mktemp("inv") / "inventory"
    try:
        summary = write_inventory(persist, out, source={"backend": "inmemory"})
    finally:
        adapter.close()
    assert summary.rows["commits"] >= 60
    return out


def table(inventory: Path, name: str) -> list[dict[str, Any]]:
    return pq.read_table(inventory / f"{name}.parquet").to_pylist()


def test_every_commit_is_listed_with_its_added_and_removed_operations(inventory: Path) -> None:
    normal = [c for c in table(inventory, "commits") if c["commit_type"] == "normal"]
    assert len(normal) == 60
    assert sorted(c["seq"] for c in normal) == list(range(1, 61))
    by_seq = {c["seq"]: c for c in normal}
    assert all(by_seq[s]["ops_added"] == 5 and by_seq[s]["ops_removed"] == 0 for s in range(1, 60))
    assert (by_seq[60]["ops_added"], by_seq[60]["ops_removed"]) == (5, 1)
    assert all(by_seq[s]["parent"] == by_seq[s - 1]["commit_id"] for s in range(2, 61))


def test_every_object_is_listed_once_with_its_type_and_size(inventory: Path) -> None:
    objects = table(inventory, "objects")
    assert len({o["obj_id"] for o in objects}) == len(objects)
    values = [o for o in objects if o["obj_type"] == "VALUE"]
    assert len(values) == 300
    assert all(o["encoded_size"] > 0 for o in objects)
    assert {o["obj_type"] for o in objects} >= {"COMMIT", "VALUE", "REF"}


def test_small_index_limits_make_the_reference_index_spill_into_stripes(inventory: Path) -> None:
    commits = [c for c in table(inventory, "commits") if c["commit_type"] == "normal"]
    spilled = [c for c in commits if c["reference_index_key"] is not None]
    assert spilled, "with a 2 KiB incremental index, 60 commits of 5 puts must spill"
    assert max(c["incremental_index_bytes"] for c in commits) <= 2048
    links = table(inventory, "links")
    assert {link["role"] for link in links} >= {"value"}
    normal_ids = {c["commit_id"] for c in commits}
    assert sum(1 for link in links if link["role"] == "value" and link["from_id"] in normal_ids) == 300


def test_each_content_value_links_to_the_unique_object_that_claimed_its_content_id(inventory: Path) -> None:
    objects = {o["obj_id"]: o["obj_type"] for o in table(inventory, "objects")}
    claims = [link for link in table(inventory, "links") if link["role"] == "content-id"]
    values = {obj_id for obj_id, obj_type in objects.items() if obj_type == "VALUE"}
    assert {link["from_id"] for link in claims} == values
    assert {objects.get(link["to_id"]) for link in claims} == {"UNIQUE"}
    # 300 new tables: 300 content ids, each claimed once.
    assert len({link["to_id"] for link in claims}) == 300


def test_references_include_the_branch_and_the_internal_ones(inventory: Path) -> None:
    refs = {r["name"]: r for r in table(inventory, "references")}
    assert refs["refs/heads/main"]["kind"] == "branch"
    assert refs["int/refs"]["kind"] == "internal"
    assert refs["int/repo"]["kind"] == "internal"
    commits = {c["commit_id"] for c in table(inventory, "commits")}
    assert refs["refs/heads/main"]["pointer"] in commits


def test_inventory_json_carries_its_schema_version_and_row_counts(inventory: Path) -> None:
    import json

    doc = json.loads((inventory / "inventory.json").read_text())
    assert doc["schema_version"] == 1
    assert doc["rows"]["objects"] == len(table(inventory, "objects"))
    assert doc["source"] == {"backend": "inmemory"}


def test_the_command_inventories_a_rocksdb_repository(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "db"
    _, adapter = make_repository("rocksdb", str(db), commits=3, puts=2, config=StoreConfig())
    adapter.close()
    out = tmp_path / "inv"
    assert lochkit(["inventory", "--backend", "rocksdb", "--url", str(db), "--out", str(out)]) == 0
    assert "inventory written to" in capsys.readouterr().out
    assert len(pq.read_table(out / "commits.parquet").to_pylist()) >= 3


def test_the_command_explains_why_inmemory_has_nothing_to_inventory(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert lochkit(["inventory", "--backend", "inmemory"]) == 2
    assert "inmemory repository lives for one command" in capsys.readouterr().err


def test_the_command_names_a_missing_repository(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    assert (
        lochkit(["inventory", "--backend", "rocksdb", "--url", str(empty), "--out", str(tmp_path / "o")]) == 2
    )
    err = capsys.readouterr().err
    assert "no repository" in err
    assert "--url" in err


def test_the_command_refuses_a_non_empty_output_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    assert (
        lochkit(["inventory", "--backend", "rocksdb", "--url", str(tmp_path / "db"), "--out", str(out)]) == 2
    )
    assert "not empty" in capsys.readouterr().err
    assert (out / "keep.txt").read_text() == "mine"
