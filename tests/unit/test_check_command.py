"""``lochkit check`` from the command line, on an embedded RocksDB repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from backends.rocksdb import RocksDBBackendFactory
from lochkit.cli import main
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.ids import EMPTY_OBJ_ID
from persist_spi.logic.commit_lease import lease_ref_name
from persist_spi.logic.reference_logic import ReferenceLogic
from persist_spi.versionstore.content import ContentKey, IcebergTable
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch
from persist_spi.versionstore.store import VersionStore


def _repository(path: Path, *, half_done: bool) -> str:
    adapter = RocksDBBackendFactory().create(f"rocksdb://{path}")
    try:
        persist = AdapterPersist(adapter, StoreConfig(repository_id="cli"))
        VersionStore(persist).repository.initialize("main")
        if half_done:
            ReferenceLogic(persist).commit_create_reference("refs/heads/half", EMPTY_OBJ_ID, None, 1)
    finally:
        adapter.close()
    return f"rocksdb://{path}"


def test_consistent_repository_exits_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = _repository(tmp_path / "db", half_done=False)
    assert main(["check", "--backend", "rocksdb", "--url", url, "--repository", "cli"]) == 0
    assert "consistent" in capsys.readouterr().out


def test_half_done_change_exits_three_then_repair_exits_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = _repository(tmp_path / "db", half_done=True)
    args = ["check", "--backend", "rocksdb", "--url", url, "--repository", "cli"]
    assert main(args) == 3
    assert "run again with --repair" in capsys.readouterr().out
    assert main([*args, "--repair"]) == 0
    assert main(args) == 0


def test_unknown_repository_exits_four(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = _repository(tmp_path / "db", half_done=False)
    assert main(["check", "--backend", "rocksdb", "--url", url, "--repository", "other"]) == 4
    assert "--repository" in capsys.readouterr().out


def test_usage_errors_exit_two(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--backend", "no-such-backend"]) == 2
    assert "No backend named 'no-such-backend'" in capsys.readouterr().err
    assert main(["check", "--backend", "rocksdb", "--max-commits", "0"]) == 2


def test_parquet_directory_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pyarrow")
    url = _repository(tmp_path / "db", half_done=True)
    out = tmp_path / "parquet"
    assert (
        main(["check", "--backend", "rocksdb", "--url", url, "--repository", "cli", "--parquet", str(out)])
        == 3
    )
    assert sorted(p.name for p in out.iterdir()) == [
        "check_findings.parquet",
        "check_references.parquet",
        "check_runs.parquet",
    ]


def test_commit_lease_of_the_coordinated_policy_is_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"rocksdb://{tmp_path / 'db'}"
    adapter = RocksDBBackendFactory().create(url)
    try:
        persist = AdapterPersist(adapter, StoreConfig(repository_id="cli", commit_policy="coordinated"))
        store = VersionStore(persist)
        store.repository.initialize("main")
        table = IcebergTable(metadata_location="s3://bucket/t/metadata.json")
        store.commit(branch("main"), None, CommitMeta("leased"), [Put(ContentKey.of("t"), table)])
        assert persist.fetch_reference(lease_ref_name("refs/heads/main")) is not None
    finally:
        adapter.close()
    assert main(["check", "--backend", "rocksdb", "--url", url, "--repository", "cli"]) == 0
    out = capsys.readouterr().out
    assert "0 errors" in out
    assert "consistent" in out


def test_without_url_rocksdb_is_read_where_the_load_commands_keep_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--backend", "rocksdb"]) == 4  # nothing generated yet
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / ".lochkit").exists()  # and the check did not create an empty database
    _repository(tmp_path / ".lochkit" / "data" / "rocksdb", half_done=False)
    assert main(["check", "--backend", "rocksdb", "--repository", "cli"]) == 0


def test_a_rocksdb_directory_that_does_not_exist_is_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "--backend", "rocksdb", "--url", f"rocksdb://{tmp_path / 'typo'}"]) == 4
    assert "typo is not a lochkit RocksDB store: the directory does not exist" in capsys.readouterr().err
    assert not (tmp_path / "typo").exists()
