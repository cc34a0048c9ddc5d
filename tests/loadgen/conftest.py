"""Targets for the content generator's end-to-end tests: in-process inmemory and rocksdb, and a
real Nessie server (``nessie_server`` in tests/conftest.py: once per session, with
LOCHKIT_NESSIE_TESTS=1, as CI sets). For the command-line tests: a RocksDB repository the commands
reach with ``--url`` and the tests read and prepare in-process, and a runner of ``lochkit``."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from backends.inmemory import InMemoryBackendFactory
from loadgen.targets import Target
from loadgen.targets.in_process import in_process_target
from loadgen.targets.nessie_rest import nessie_target
from lochkit.cli import main
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.cache import CachingPersist
from persist_spi.logic.ownership import load_properties
from persist_spi.versionstore.content import ContentKey, IcebergTable, Namespace
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.nessie_json import content_type_name
from persist_spi.versionstore.operations import Operation, Put
from persist_spi.versionstore.refs import RefKind, branch
from persist_spi.versionstore.results import LogEntry
from persist_spi.versionstore.store import VersionStore

TARGETS = ["inmemory", "rocksdb", "nessie"]


@pytest.fixture(params=TARGETS)
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Target]:
    if request.param == "inmemory":
        opened = in_process_target(
            InMemoryBackendFactory().create(), backend="inmemory", provisioning="embedded", url=None
        )
    elif request.param == "rocksdb":
        from backends.rocksdb import RocksDBBackendFactory

        adapter = RocksDBBackendFactory().create(str(tmp_path / "rocks"))
        opened = in_process_target(adapter, backend="rocksdb", provisioning="embedded", url=None)
    else:
        opened = nessie_target(request.getfixturevalue("nessie_server"), provisioning="local-process")
    with opened:
        yield opened


@dataclass(frozen=True)
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., CliResult]:
    """Runs ``lochkit ARGS...`` in-process from a temporary working directory (so default run
    directories never land in the source tree) and answers its exit code and output."""
    monkeypatch.chdir(tmp_path)

    def run(*argv: str) -> CliResult:
        capsys.readouterr()
        code = main(list(argv))
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@dataclass(frozen=True)
class RocksRepository:
    """A RocksDB repository in a temporary directory. Commands reach it with :attr:`args`; the test
    opens it in-process between commands (RocksDB allows one process at a time, and the commands
    run in this process, so never while a command runs)."""

    url: str

    @property
    def args(self) -> list[str]:
        return ["--backend", "rocksdb", "--url", self.url]

    @contextlib.contextmanager
    def open(self) -> Iterator[Target]:
        from backends.rocksdb import RocksDBBackendFactory

        adapter = RocksDBBackendFactory().create(self.url)
        # Made as a load command makes it, so the load commands under test may write to it.
        with in_process_target(
            adapter,
            backend="rocksdb",
            provisioning="embedded",
            url=None,
            new_repository_properties=load_properties(),
        ) as target:
            yield target

    def add_tables(self, ref: str, keys: Iterable[ContentKey], message: str = "tables") -> str:
        """Commit a table at each key, with the namespaces above it, on ``ref`` (created from main
        when missing); answers the new head."""
        keys = list(keys)
        with self.open() as target:
            api = target.api
            if not any(r.named_ref.name == ref for r in api.list_references((RefKind.BRANCH,))):
                api.create_reference(branch(ref), api.reference(branch("main")).hash)
            present = set(api.get_values(branch(ref), _ancestors(keys)))
            operations: list[Operation] = [
                Put(ns, Namespace(elements=ns.elements)) for ns in _ancestors(keys) if ns not in present
            ]
            operations += [Put(k, IcebergTable(metadata_location=f"location of {k}")) for k in keys]
            return str(api.commit(branch(ref), None, CommitMeta(message), operations).hash)

    def add_tables_without_namespaces(self, ref: str, keys: Iterable[ContentKey]) -> None:
        """Commit tables at ``keys`` on a new branch ``ref`` with none of their namespaces: through
        a second store over the same database with namespace validation off."""
        with self.open() as target:
            api = target.api
            assert isinstance(api, VersionStore)
            persist = api.persist
            if isinstance(persist, CachingPersist):  # in-process targets read through the object cache
                persist = persist.delegate
            assert isinstance(persist, AdapterPersist)
            relaxed = VersionStore(
                AdapterPersist(persist.adapter, persist.config.with_changes(namespace_validation=False))
            )
            head = relaxed.create_reference(branch(ref), relaxed.reference(branch("main")).hash).hash
            tables: list[Operation] = [
                Put(k, IcebergTable(metadata_location=f"location of {k}")) for k in keys
            ]
            relaxed.commit(branch(ref), head, CommitMeta("tables without namespaces"), tables)

    def log(self, ref: str) -> list[LogEntry]:
        """The commits of ``ref``, newest first, with their operations."""
        with self.open() as target:
            return list(target.api.get_commits(branch(ref), with_operations=True))

    def keys(self, ref: str) -> dict[ContentKey, str]:
        """Every key on ``ref`` and its content type (ICEBERG_TABLE, NAMESPACE...)."""
        with self.open() as target:
            return {e.key: content_type_name(e.payload) for e in target.api.get_entries(branch(ref))}


def _ancestors(keys: Iterable[ContentKey]) -> list[ContentKey]:
    return sorted({ContentKey(k.elements[:i]) for k in keys for i in range(1, len(k.elements))})


@pytest.fixture
def rocks(tmp_path: Path) -> RocksRepository:
    return RocksRepository(str(tmp_path / "rocks-data"))


@pytest.fixture
def new_rocks(tmp_path: Path) -> Callable[[str], RocksRepository]:
    """More RocksDB repositories, each in a directory of its own name."""
    return lambda name: RocksRepository(str(tmp_path / name))
