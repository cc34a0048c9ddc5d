"""RocksDB stores a commit's objects and swaps its branch in one write batch.

A commit through the version store is one RocksDB write: the new objects and the reference's new
row in one batch, applied whole. A swap that fails writes the objects alone; when the commit's
own row exists already, nothing is swapped and only ``referenced`` is renewed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backends.rocksdb.adapter import RocksDBAdapter
from persist_spi.adapter import ObjRow, RefRow
from persist_spi.cache_store import ObjectCache
from persist_spi.config import StoreConfig
from persist_spi.errors import InputError
from persist_spi.layouts import LOCHKIT_LAYOUT, NESSIE_LAYOUT, StorageLayout
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.objs import Obj, tag_obj
from persist_spi.opening import open_persist
from persist_spi.versionstore.content import ContentKey, IcebergTable
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch
from persist_spi.versionstore.store import VersionStore

REPO = "swap"


class CountingDb:
    """Stands in for the adapter's ``Rdict``: counts the writes, passes everything on."""

    def __init__(self, db: Any) -> None:
        self.db = db
        self.writes = 0

    def write(self, batch: Any) -> None:
        self.writes += 1
        self.db.write(batch)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.db, name)


class CountingFamily:
    """Stands in for a column family: counts single puts (each its own RocksDB write)."""

    def __init__(self, family: Any) -> None:
        self.family = family
        self.puts = 0

    def __setitem__(self, key: bytes, value: bytes) -> None:
        self.puts += 1
        self.family[key] = value

    def __getattr__(self, name: str) -> Any:
        return getattr(self.family, name)


@pytest.fixture(params=[LOCHKIT_LAYOUT, NESSIE_LAYOUT], ids=lambda layout: layout.name)
def adapter(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[RocksDBAdapter]:
    layout: StorageLayout = request.param
    opened = RocksDBAdapter(tmp_path / "db", layout=layout)
    try:
        yield opened
    finally:
        opened.close()


def _row(obj: Obj, referenced: int = 1, layout: StorageLayout = LOCHKIT_LAYOUT) -> ObjRow:
    encoded = layout.codec.encode(obj)
    return ObjRow(bytes(obj.id), encoded.type_short_name, encoded.version_token, encoded.data, referenced)


def _ref(pointer: bytes, created: int = 1) -> RefRow:
    return RefRow("refs/heads/main", pointer, False, created, None, b"")


def test_a_commit_is_one_write(adapter: RocksDBAdapter) -> None:
    counting, refs, objs = (
        CountingDb(adapter._db),
        CountingFamily(adapter._refs),
        CountingFamily(adapter._objs),
    )
    adapter._db, adapter._refs, adapter._objs = counting, refs, objs  # type: ignore[assignment]
    persist = open_persist(adapter, StoreConfig(repository_id=REPO), cache=ObjectCache())
    RepositoryLogic(persist).initialize("main")
    store = VersionStore(persist)
    target = branch("main")
    keys = [ContentKey.of(f"t{i}") for i in range(3)]
    made = store.commit(
        target, None, CommitMeta("create"), [Put(k, IcebergTable(metadata_location="s3://t/0")) for k in keys]
    )
    ids = made.added_content_ids
    before = counting.writes + refs.puts + objs.puts
    for n in range(1, 6):
        store.commit(
            target,
            None,
            CommitMeta(f"update {n}"),
            [Put(k, IcebergTable(id=ids[k], metadata_location=f"s3://t/{n}")) for k in keys],
        )
    assert counting.writes + refs.puts + objs.puts - before == 5
    adapter._db, adapter._refs, adapter._objs = counting.db, refs.family, objs.family


def test_a_failed_swap_writes_the_objects_alone(adapter: RocksDBAdapter) -> None:
    head, value, commit = tag_obj("head"), tag_obj("value"), tag_obj("commit")
    adapter.insert_objs(REPO, [_row(head, layout=adapter.layout)])
    assert adapter.insert_ref(REPO, _ref(bytes(head.id)))
    stale = _ref(bytes(head.id), created=2)
    done = adapter.insert_objs_and_update_ref(
        REPO,
        [_row(value, layout=adapter.layout), _row(commit, layout=adapter.layout)],
        stale,
        _ref(bytes(commit.id)),
    )
    assert done.inserted == [True, True]
    assert done.swapped is False
    assert [r is not None for r in adapter.fetch_objs(REPO, [bytes(value.id), bytes(commit.id)])] == [
        True,
        True,
    ]
    assert adapter.fetch_refs(REPO, ["refs/heads/main"]) == [_ref(bytes(head.id))]


def test_an_existing_target_row_is_renewed_and_nothing_is_swapped(adapter: RocksDBAdapter) -> None:
    head, commit = tag_obj("head"), tag_obj("commit")
    adapter.insert_objs(
        REPO, [_row(head, layout=adapter.layout), _row(commit, referenced=1, layout=adapter.layout)]
    )
    assert adapter.insert_ref(REPO, _ref(bytes(head.id)))
    done = adapter.insert_objs_and_update_ref(
        REPO,
        [_row(commit, referenced=9, layout=adapter.layout)],
        _ref(bytes(head.id)),
        _ref(bytes(commit.id)),
    )
    assert done.inserted == [False]
    assert done.swapped is None
    assert adapter.fetch_refs(REPO, ["refs/heads/main"]) == [_ref(bytes(head.id))]
    stored = adapter.fetch_objs(REPO, [bytes(commit.id)])[0]
    assert stored is not None
    assert stored.referenced == 9


def test_a_swap_moves_the_branch_with_its_objects(adapter: RocksDBAdapter) -> None:
    head, value, commit = tag_obj("head"), tag_obj("value"), tag_obj("commit")
    adapter.insert_objs(REPO, [_row(head, layout=adapter.layout)])
    assert adapter.insert_ref(REPO, _ref(bytes(head.id)))
    done = adapter.insert_objs_and_update_ref(
        REPO,
        [_row(value, layout=adapter.layout), _row(commit, layout=adapter.layout)],
        _ref(bytes(head.id)),
        _ref(bytes(commit.id)),
    )
    assert done.inserted == [True, True]
    assert done.swapped is True
    assert adapter.fetch_refs(REPO, ["refs/heads/main"]) == [_ref(bytes(commit.id))]


def test_a_call_without_its_target_row_writes_nothing(adapter: RocksDBAdapter) -> None:
    value = tag_obj("value")
    with pytest.raises(InputError, match="new pointer must be the id of one of the rows"):
        adapter.insert_objs_and_update_ref(
            REPO, [_row(value, layout=adapter.layout)], _ref(b"\1" * 32), _ref(b"\2" * 32)
        )
    assert adapter.fetch_objs(REPO, [bytes(value.id)]) == [None]
