"""The RocksDB adapter's lifecycle: durability across reopen, lock release on close, URL errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from backends.rocksdb import RocksDBBackendFactory
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.errors import BackendConfigError, BackendUnavailable
from persist_spi.objs import content_value
from persist_spi.references import Reference


def test_data_survives_close_and_reopen(tmp_path: Path) -> None:
    factory = RocksDBBackendFactory()
    value = content_value("cid", 1, b"durable")
    adapter = factory.create(f"rocksdb://{tmp_path}")
    persist = AdapterPersist(adapter)
    persist.store_obj(value)
    persist.add_reference(Reference("refs/heads/main", value.id))
    adapter.close()
    reopened = factory.create(str(tmp_path))
    try:
        again = AdapterPersist(reopened)
        assert again.fetch_obj(value.id) == value
        ref = again.fetch_reference("refs/heads/main")
        assert ref is not None
        assert ref.pointer == value.id
    finally:
        reopened.close()


def test_a_second_open_is_refused_until_the_first_is_closed(tmp_path: Path) -> None:
    factory = RocksDBBackendFactory()
    first = factory.create(str(tmp_path))
    with pytest.raises(BackendUnavailable, match="locked by another process or handle"):
        factory.create(str(tmp_path))
    first.close()
    second = factory.create(str(tmp_path))  # the lock was released
    second.close()
    first.close()  # closing twice is harmless


def test_temporary_store_is_removed_on_close() -> None:
    adapter = RocksDBBackendFactory().create()
    path = Path(adapter.address.removeprefix("rocksdb://"))
    assert path.exists()
    adapter.close()
    assert not path.exists()


@pytest.mark.parametrize(
    ("url", "message"),
    [("mysql://x", "unsupported URL scheme"), ("rocksdb:///tmp/x?compression=zstd", "unknown option")],
)
def test_bad_urls_are_explained(url: str, message: str) -> None:
    with pytest.raises(BackendConfigError, match=message) as e:
        RocksDBBackendFactory().create(url)
    assert "rocksdb" in str(e.value)
