"""The done-when command against a Nessie server lochkit starts itself (``--backend nessie``), through
the command line: what the run directory records, and what landed in Nessie, read back through a
REST client just before lochkit stops the server. Needs Java 21+ and the runner jar, so it runs
with LOCHKIT_NESSIE_TESTS=1, as CI sets (each test starts and stops its own server)."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
import pytest

from nessie_client import NessieRestClient
from persist_spi.versionstore.content import ContentKey
from persist_spi.versionstore.nessie_json import content_type_name
from persist_spi.versionstore.refs import branch
from provisioning import registry
from provisioning.base import Provisioned
from provisioning.servers.nessie import STORE_ENV
from provisioning.servers.versions import NESSIE_VERSION

if TYPE_CHECKING:  # fixtures of conftest.py
    from .conftest import CliResult

pytestmark = pytest.mark.skipif(
    os.environ.get("LOCHKIT_NESSIE_TESTS") != "1",
    reason="starts a real Nessie server when LOCHKIT_NESSIE_TESTS=1 (needs Java 21+, a 245 MB jar)",
)

Cli = Callable[..., "CliResult"]
DONE_WHEN = [
    "generate", "--backend", "nessie", "-n", "20", "-t", "10", "--puts-per-commit", "5",
    "--key-pattern", "db_${every,10,uuid}.tbl_${seq,0}",
]  # fmt: skip


@dataclasses.dataclass
class ReadBack:
    """main's commit hashes (oldest first) and entries (key -> type) on the provisioned server."""

    commits: list[str] = dataclasses.field(default_factory=list)
    entries: dict[ContentKey, str] = dataclasses.field(default_factory=dict)


@pytest.fixture
def read_back(monkeypatch: pytest.MonkeyPatch) -> ReadBack:
    """What the next command's provisioned Nessie holds, read when lochkit stops it (its in-memory
    store, or its RocksDB in a working directory lochkit removes, is gone afterwards)."""
    monkeypatch.delenv(STORE_ENV, raising=False)  # Nessie's default store, whatever the caller set
    seen = ReadBack()
    real_provision = registry.provision

    def provision(*args: Any, **kwargs: Any) -> Provisioned:
        provisioned = real_provision(*args, **kwargs)

        def read_then_stop() -> None:
            try:
                with NessieRestClient(provisioned.url or "") as client:
                    seen.commits = [str(e.hash) for e in reversed(list(client.get_commits(branch("main"))))]
                    seen.entries = {
                        e.key: content_type_name(e.payload) for e in client.get_entries(branch("main"))
                    }
            finally:
                provisioned.stop()

        return dataclasses.replace(provisioned, stop=read_then_stop)

    monkeypatch.setattr(registry, "provision", provision)
    return seen


def run_json(path: Path) -> dict[str, Any]:
    doc = json.loads((path / "run.json").read_text())
    assert isinstance(doc, dict)
    return doc


def commit_hashes(path: Path) -> list[str]:
    rows = pq.read_table(path / "events.parquet").to_pylist()
    return [
        r["commit_hash"] for r in rows if r["action"] == "commitMultipleOperations" and r["outcome"] == "ok"
    ]


def test_the_done_when_command_on_a_nessie_server_lochkit_starts(cli: Cli, read_back: ReadBack) -> None:
    done = cli(*DONE_WHEN, "--out", "run")
    assert done.code == 0, done.err

    doc = run_json(Path("run"))
    assert doc["status"] == "ok"
    assert doc["target"]["kind"] == doc["target"]["backend"] == "nessie"
    assert doc["target"]["provisioning"] == "local-process"
    assert doc["target"]["server_version"].startswith(f"Nessie {NESSIE_VERSION} (IN_MEMORY, Java ")
    assert doc["totals"]["commits"] == 20
    assert doc["totals"]["http"]["requests"] >= 40  # at least a read and a commit per commit
    # Every commit the run recorded is on the server's main, in order, and nothing else is.
    assert read_back.commits == commit_hashes(Path("run"))
    namespaces = [k for k, t in read_back.entries.items() if t == "NAMESPACE"]
    tables = [k for k, t in read_back.entries.items() if t != "NAMESPACE"]
    assert len(namespaces) == 1  # ${every,10,uuid} over 10 tables: one database
    assert namespaces[0].name.startswith("db_")
    assert 1 <= len(tables) <= 10
    assert all(t.parent == namespaces[0] and t.name.startswith("tbl_") for t in tables)
    assert {read_back.entries[t] for t in tables} == {"ICEBERG_TABLE"}
    assert "Target:      nessie target: nessie (local-process" in done.err


def test_the_nessie_store_option_starts_nessie_on_rocksdb(cli: Cli, read_back: ReadBack) -> None:
    done = cli("generate", "--backend", "nessie", "--nessie-store", "rocksdb", "-n", "3", "--out", "run")
    assert done.code == 0, done.err
    doc = run_json(Path("run"))
    assert doc["target"]["server_version"].startswith(f"Nessie {NESSIE_VERSION} (ROCKSDB, Java ")
    assert read_back.commits == commit_hashes(Path("run"))
    assert len(read_back.commits) == 3
    assert STORE_ENV not in os.environ  # --nessie-store set it for that one start only
