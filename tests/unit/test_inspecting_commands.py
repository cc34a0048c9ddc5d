"""``lochkit check`` and ``lochkit inventory`` inspect a store without changing it: they open it
read-only, create nothing where there is no store, read one another process holds open, and show
their progress on a terminal. A store another process holds locked exits with the same code from
every command that needs to write to it."""

from __future__ import annotations

import hashlib
import os
import pty
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.rocksdb import RocksDBBackendFactory
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.check.findings import ExitCode
from persist_spi.config import StoreConfig
from persist_spi.versionstore.content import ContentKey, IcebergTable
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch
from persist_spi.versionstore.store import VersionStore

LOCHKIT = str(Path(sys.executable).with_name("lochkit"))


def lochkit(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([LOCHKIT, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def make_store(path: Path, commits: int = 3) -> str:
    """A RocksDB store with repository '' holding ``commits`` commits on main."""
    adapter = RocksDBBackendFactory().create(str(path))
    try:
        store = VersionStore(AdapterPersist(adapter, StoreConfig()))
        store.repository.initialize("main")
        for n in range(commits):
            table = IcebergTable(metadata_location=f"s3://m/{n}.json", snapshot_id=n)
            store.commit(branch("main"), None, CommitMeta(f"c{n}"), [Put(ContentKey.of(f"t{n}"), table)])
    finally:
        adapter.close()
    return str(path)


def files(path: Path) -> dict[str, str]:
    """Every file under ``path`` with the hash of its content."""
    return {
        str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(path.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[Path]:
    """A store another process holds open for writing, as ``lochkit serve`` or ``generate`` do."""
    store = tmp_path / "held"
    make_store(store)
    code = (
        "import sys\n"
        "from backends.rocksdb import RocksDBBackendFactory\n"
        f"adapter = RocksDBBackendFactory().create({str(store)!r})\n"
        "print('open', flush=True)\n"
        "sys.stdin.read()\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "open"
        yield store
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=60)


@pytest.mark.parametrize("command", ["check", "inventory"])
def test_a_folder_that_is_not_a_store_is_refused_and_left_as_it_was(command: str, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("mine\n")
    out = ["--out", str(tmp_path / "o")] if command == "inventory" else []
    done = lochkit(command, "--backend", "rocksdb", "--url", str(notes), *out)
    assert done.returncode == (ExitCode.NO_REPOSITORY if command == "check" else 2), done.stderr
    assert f"{notes} is not a lochkit RocksDB store: it holds no RocksDB database" in done.stderr
    assert sorted(p.name for p in notes.iterdir()) == ["todo.txt"]
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["check", "inventory"])
def test_a_missing_directory_is_refused_and_not_created(command: str, tmp_path: Path) -> None:
    done = lochkit(command, "--backend", "rocksdb", "--url", str(tmp_path / "typo"))
    assert done.returncode == (ExitCode.NO_REPOSITORY if command == "check" else 2), done.stderr
    assert "typo is not a lochkit RocksDB store: the directory does not exist" in done.stderr
    assert not (tmp_path / "typo").exists()
    assert not (tmp_path / ".lochkit").exists()


def test_check_and_inventory_leave_every_file_of_the_store_as_it_was(tmp_path: Path) -> None:
    store = tmp_path / "db"
    make_store(store)
    before = files(store)
    assert lochkit("check", "--backend", "rocksdb", "--url", str(store)).returncode == 0
    inventory = lochkit(
        "inventory", "--backend", "rocksdb", "--url", str(store), "--out", str(tmp_path / "inv")
    )
    assert inventory.returncode == 0, inventory.stderr
    assert files(store) == before


def test_check_and_inventory_read_a_store_another_process_holds_open(holder: Path, tmp_path: Path) -> None:
    checked = lochkit("check", "--backend", "rocksdb", "--url", str(holder))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "consistent" in checked.stdout
    inventory = lochkit(
        "inventory", "--backend", "rocksdb", "--url", str(holder), "--out", str(tmp_path / "inv")
    )
    assert inventory.returncode == 0, inventory.stderr
    assert (tmp_path / "inv" / "inventory.json").is_file()


def test_a_locked_store_exits_with_the_same_code_from_every_command_that_writes(
    holder: Path, tmp_path: Path
) -> None:
    repair = lochkit("check", "--backend", "rocksdb", "--url", str(holder), "--repair")
    generate = lochkit(
        "generate", "--backend", "rocksdb", "--url", str(holder), "-n", "1", "--out", str(tmp_path / "run")
    )
    for done in (repair, generate):
        assert done.returncode == 5, done.stderr  # persist_spi.exit_codes.UNAVAILABLE
        assert "locked by another process" in done.stderr


def _on_a_terminal(*args: str) -> str:
    """What ``lochkit ARGS`` writes to stderr when stderr is a terminal (a pseudo-terminal here)."""
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen([LOCHKIT, *args], stdout=subprocess.DEVNULL, stderr=follower)
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            shown += chunk
        assert process.wait(timeout=300) == 0, shown
    finally:
        os.close(leader)
    return shown.decode()


@pytest.mark.parametrize("command", ["check", "inventory"])
def test_on_a_terminal_the_objects_read_rate_and_time_are_shown_in_place(
    command: str, tmp_path: Path
) -> None:
    store = make_store(tmp_path / "db")
    args = ["--out", str(tmp_path / "inv")] if command == "inventory" else []
    shown = _on_a_terminal(command, "--backend", "rocksdb", "--url", store, *args)
    line = next(part for part in shown.split("\r") if part.startswith(f"lochkit {command}:"))
    words = line.split()
    assert words[2:5] == ["objects", "read"] or words[3:5] == ["objects", "read"], line
    assert int(words[2].replace(",", "")) > 0
    assert words[5].endswith("/s")
    assert words[6].count(":") == 1  # m:ss taken
    # Elsewhere (a pipe, a file, CI) nothing is drawn.
    piped = lochkit(
        command, "--backend", "rocksdb", "--url", store, *(["--out", str(tmp_path / "inv2")] if args else [])
    )
    assert piped.returncode == 0
    assert "objects read" not in piped.stderr
    assert "\r" not in piped.stderr


def test_open_existing_reads_refuses_writes_and_creates_nothing(tmp_path: Path) -> None:
    from persist_spi.errors import BackendStoreMissing

    factory = RocksDBBackendFactory()
    with pytest.raises(BackendStoreMissing, match="is not a lochkit RocksDB store"):
        factory.open_existing(str(tmp_path / "none"))
    assert not (tmp_path / "none").exists()
    store = make_store(tmp_path / "db")
    before = files(tmp_path / "db")
    adapter = factory.open_existing(store)
    try:
        version_store = VersionStore(AdapterPersist(adapter, StoreConfig()))
        assert version_store.reference(branch("main")).hash is not None
        with pytest.raises(Exception, match="read only"):
            version_store.create_reference(branch("other"))
    finally:
        adapter.close()
    assert files(tmp_path / "db") == before


def test_a_rocksdb_database_lochkit_did_not_write_is_not_a_store(tmp_path: Path) -> None:
    from rocksdict import Rdict

    from persist_spi.errors import BackendStoreMissing

    other = Rdict(str(tmp_path / "other"))  # another program's RocksDB (pickled keys, no families)
    other["k"] = 1
    other.close()
    before = files(tmp_path / "other")
    with pytest.raises(BackendStoreMissing, match="a RocksDB database lochkit did not write"):
        RocksDBBackendFactory().open_existing(str(tmp_path / "other"))
    assert files(tmp_path / "other") == before
