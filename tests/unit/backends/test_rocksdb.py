"""The RocksDB adapter's lifecycle (durability across reopen, lock release on close, URL errors) and
what it writes in Nessie's layout."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from backends.rocksdb import RocksDBBackendFactory
from backends.rocksdb.adapter import RocksDBAdapter
from backends.rocksdb.statements import NESSIE_ROWS, prefix_end
from persist_spi.adapter import RefRow
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.errors import BackendConfigError, BackendSchemaMismatch, BackendUnavailable, InputError
from persist_spi.ids import ObjId
from persist_spi.layouts import NESSIE_LAYOUT
from persist_spi.nessie_codec import encode_obj_proto
from persist_spi.nessie_references import decode_reference_proto
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


# --- Nessie's layout -----------------------------------------------------------------------------


class _FixedClock:
    def __init__(self, micros: int) -> None:
        self._micros = micros

    def micros(self) -> int:
        return self._micros


def _nessie(path: Path) -> RocksDBAdapter:
    return RocksDBBackendFactory().create(f"rocksdb://{path}?layout=nessie")


def _raw_families(path: Path) -> dict[str, dict[bytes, bytes]]:
    """Every key and value of every column family, read with rocksdict alone."""
    from rocksdict import Options, Rdict

    names = Rdict.list_cf(str(path), Options(raw_mode=True))
    db = Rdict(
        str(path),
        options=Options(raw_mode=True),
        column_families={n: Options(raw_mode=True) for n in names if n != "default"},
    )
    try:
        found: dict[str, dict[bytes, bytes]] = {
            n: dict(db.get_column_family(n).items())  # type: ignore[arg-type]
            for n in names
        }
    finally:
        db.close()
    return found


def test_nessie_layout_writes_nessies_families_keys_and_values(tmp_path: Path) -> None:
    adapter = _nessie(tmp_path)
    assert adapter.layout is NESSIE_LAYOUT
    persist = AdapterPersist(
        adapter, StoreConfig(repository_id="repo1"), clock=_FixedClock(1_700_000_000_000_001)
    )
    value = content_value("cid", 1, b"nessie")
    persist.store_obj(value)
    persist.add_reference(Reference("refs/heads/main", value.id, created_at_micros=5))
    persist.update_reference_pointer(
        Reference("refs/heads/main", value.id, created_at_micros=5), ObjId(b"\1" * 32)
    )
    adapter.close()

    families = _raw_families(tmp_path)
    assert set(families) == {"default", "nessie_refs", "nessie_objects"}
    assert families["default"] == {}
    [(ref_key, ref_value)] = families["nessie_refs"].items()
    assert ref_key == b"repo1:refs/heads/main"
    ref = decode_reference_proto(ref_value)
    assert (ref.name, ref.pointer, ref.created_at_micros) == ("refs/heads/main", ObjId(b"\1" * 32), 5)
    assert [p.pointer for p in ref.previous_pointers] == [value.id]
    [(obj_key, obj_value)] = families["nessie_objects"].items()
    assert obj_key == b"repo1:" + bytes(value.id)
    # The value Nessie's RocksDB backend writes: ObjProto with ``referenced`` inside.
    assert obj_value == encode_obj_proto(
        value.with_referenced(1_700_000_000_000_001), include_version_token=True
    )


def test_nessie_layout_opens_its_families_with_universal_compaction(tmp_path: Path) -> None:
    _nessie(tmp_path).close()
    options = max(tmp_path.glob("OPTIONS-*")).read_text()
    styles = re.findall(r"^\s*compaction_style=(\w+)", options, re.MULTILINE)
    assert styles == ["kCompactionStyleUniversal"] * 3


@pytest.mark.parametrize(
    ("written", "opened", "named"), [("", "?layout=nessie", "lochkit"), ("?layout=nessie", "", "nessie")]
)
def test_a_directory_of_one_layout_is_refused_in_the_other(
    tmp_path: Path, written: str, opened: str, named: str
) -> None:
    factory = RocksDBBackendFactory()
    factory.create(f"rocksdb://{tmp_path}{written}").close()
    before = _raw_families(tmp_path).keys()
    with pytest.raises(BackendSchemaMismatch, match=f"open it with layout={named}"):
        factory.create(f"rocksdb://{tmp_path}{opened}")
    with pytest.raises(BackendSchemaMismatch, match=f"open it with layout={named}"):
        factory.open_existing(f"rocksdb://{tmp_path}{opened}")
    assert _raw_families(tmp_path).keys() == before  # no column family was added


def test_nessie_layout_refuses_repository_ids_holding_a_colon(tmp_path: Path) -> None:
    adapter = _nessie(tmp_path)
    try:
        with pytest.raises(InputError, match="without ':'"):
            AdapterPersist(adapter, StoreConfig(repository_id="a:b"))
    finally:
        adapter.close()
    lochkit = RocksDBBackendFactory().create()
    try:
        AdapterPersist(lochkit, StoreConfig(repository_id="a:b"))  # lochkit's keys are length-prefixed
    finally:
        lochkit.close()


def test_nessie_layout_keeps_neighbouring_repositories_apart(tmp_path: Path) -> None:
    """``a`` owns exactly the keys starting ``a:``: ids sorting right next to it (``a;``, ``a0``,
    ``ab``, the empty id) own keys outside that range, so scans, erase and the repository list see
    only their own rows."""
    adapter = _nessie(tmp_path)
    try:
        repos = ["", "a", "a;", "a0", "ab", "a b", "\u00e4"]
        objs = {}
        for repo in repos:
            persist = AdapterPersist(adapter, StoreConfig(repository_id=repo))
            objs[repo] = content_value("cid", 1, repo.encode() or b"empty")
            persist.store_obj(objs[repo])
            persist.add_reference(Reference("refs/heads/main", objs[repo].id))
        assert sorted(adapter.list_repositories()) == sorted(repos)
        for repo in repos:
            scanned = list(AdapterPersist(adapter, StoreConfig(repository_id=repo)).scan_all_objects())
            assert scanned == [objs[repo].with_referenced(scanned[0].referenced)]
        AdapterPersist(adapter, StoreConfig(repository_id="a")).erase()
        assert sorted(adapter.list_repositories()) == sorted(set(repos) - {"a"})
        for repo in set(repos) - {"a"}:
            persist = AdapterPersist(adapter, StoreConfig(repository_id=repo))
            assert persist.fetch_obj(objs[repo].id) == objs[repo].with_referenced(
                persist.fetch_obj(objs[repo].id).referenced
            )
    finally:
        adapter.close()


def test_unknown_layouts_are_explained(tmp_path: Path) -> None:
    with pytest.raises(BackendConfigError, match="layout=nessie"):
        RocksDBBackendFactory().create(f"rocksdb://{tmp_path}?layout=nessie2")
    assert not (tmp_path / "CURRENT").exists()


REFERENCE_VECTORS: list[dict[str, Any]] = json.loads(
    (Path(__file__).resolve().parents[2] / "vectors" / "nessie-objproto.json").read_text(encoding="utf-8")
)["references"]


@pytest.mark.parametrize("vector", REFERENCE_VECTORS, ids=lambda v: v["name"])
def test_a_reference_row_is_nessies_reference_proto_with_its_history(vector: dict[str, Any]) -> None:
    """The row the core hands over (history as delimited records, ``b""`` when empty) is stored as
    the ReferenceProto Nessie wrote for the same reference, and comes back unchanged."""
    history = vector["previous_pointers_hex"]
    row = RefRow(
        vector["ref_name"],
        bytes.fromhex(vector["pointer"]),
        vector["deleted"],
        vector["created_at_micros"],
        None if vector["extended_info_obj"] is None else bytes.fromhex(vector["extended_info_obj"]),
        b"" if history is None else bytes.fromhex(history),
    )
    assert NESSIE_ROWS.pack_ref(row).hex() == vector["reference_hex"]
    assert NESSIE_ROWS.unpack_ref(row.name, bytes.fromhex(vector["reference_hex"])) == row


def test_nessie_keys_are_the_repository_id_and_a_colon() -> None:
    assert NESSIE_ROWS.repo_prefix("repo") == b"repo:"
    assert NESSIE_ROWS.repo_prefix("") == b":"
    assert NESSIE_ROWS.repo_prefix("\u00e4") == b"\xc3\xa4:"
    assert NESSIE_ROWS.repo_of_key(b"repo:refs/heads/a:b") == "repo"
    assert NESSIE_ROWS.repo_of_key(b":main") == ""
    assert prefix_end(NESSIE_ROWS.repo_prefix("a")) == b"a;"
