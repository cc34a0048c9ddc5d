"""RocksDB files in Nessie's layout cross between lochkit and Nessie's RocksDB binding.

lochkit's RocksDB (the one rocksdict bundles) and the RocksDB Java binding inside Nessie's runner jar
must read each other's files: write-ahead log, table files and column-family options alike.
``RocksFiles.java`` (beside this file) opens a directory as a Nessie server's ROCKSDB store does.
Runs where Nessie's runner jar is in lochkit's cache (``lochkit servers install nessie``) and Java
17 or newer is found; it takes a few JVM starts.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from backends.rocksdb import RocksDBBackendFactory
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.ids import ObjId
from persist_spi.nessie_codec import encode_obj_proto
from persist_spi.nessie_references import encode_reference_proto
from persist_spi.objs import content_value
from persist_spi.references import PreviousPointer, Reference
from provisioning.servers.nessie import JAR_NAME, VERSION, java_candidates, java_version
from provisioning.servers.process import cache_path

PROGRAM = Path(__file__).with_name("RocksFiles.java")
REPO = "interop"
WRITTEN_AT = 1_700_000_000_000_001
#: The reference after two pointer moves, and the object, as both sides must hold them.
MAIN = Reference(
    "refs/heads/main",
    ObjId(b"\x02" * 32),
    created_at_micros=7,
    previous_pointers=(PreviousPointer(ObjId(b"\x01" * 32), WRITTEN_AT),),
)
VALUE = content_value("cid-1", 1, b"shared bytes")


class _Clock:
    def micros(self) -> int:
        return WRITTEN_AT


@pytest.fixture(scope="module")
def nessies_rocksdb() -> list[str]:
    """The command that runs RocksFiles.java with Nessie's jar."""
    jar = cache_path("nessie", VERSION) / JAR_NAME
    if not jar.is_file():
        pytest.skip(f"Nessie's runner jar is not in lochkit's cache ({jar}): lochkit servers install nessie")
    java = next((j for j in java_candidates() if java_version(j) >= 17), None)
    if java is None:
        pytest.skip("no Java 17 or newer found")
    return [java, "-cp", str(jar), str(PROGRAM)]


def _run(command: list[str], *args: str) -> list[str]:
    done = subprocess.run([*command, *args], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("version "), lines[:3]
    return lines[1:]


def _expected_rows() -> dict[str, dict[str, str]]:
    value = encode_obj_proto(VALUE.with_referenced(WRITTEN_AT), include_version_token=True)
    return {
        "nessie_refs": {(REPO + ":" + MAIN.name).encode().hex(): encode_reference_proto(MAIN).hex()},
        "nessie_objects": {((REPO + ":").encode() + bytes(VALUE.id)).hex(): value.hex()},
    }


def _dumped(lines: list[str]) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for line in lines:
        family, key, value = line.split("\t")
        found.setdefault(family, {})[key] = value
    return found


def _check_lochkit_reads(directory: Path) -> None:
    adapter = RocksDBBackendFactory().open_existing(f"rocksdb://{directory}?layout=nessie")
    try:
        persist = AdapterPersist(adapter, StoreConfig(repository_id=REPO))
        assert persist.fetch_obj(VALUE.id) == VALUE.with_referenced(WRITTEN_AT)
        ref = persist.fetch_reference(MAIN.name)
        assert ref == MAIN
        assert ref is not None
        assert ref.previous_pointers == MAIN.previous_pointers
    finally:
        adapter.close()


def test_nessies_rocksdb_reads_what_lochkit_wrote(nessies_rocksdb: list[str], tmp_path: Path) -> None:
    factory = RocksDBBackendFactory()
    adapter = factory.create(f"rocksdb://{tmp_path}?layout=nessie")
    persist = AdapterPersist(adapter, StoreConfig(repository_id=REPO), clock=_Clock())
    persist.store_obj(VALUE)
    first = persist.add_reference(Reference(MAIN.name, ObjId(b"\x01" * 32), created_at_micros=7))
    persist.update_reference_pointer(first, MAIN.pointer)
    adapter.close()
    factory.create(f"rocksdb://{tmp_path}?layout=nessie").close()  # reopening moves the log into tables
    assert list(tmp_path.glob("*.sst")), "lochkit's RocksDB wrote no table file"

    assert _dumped(_run(nessies_rocksdb, "dump", str(tmp_path))) == _expected_rows()
    _check_lochkit_reads(tmp_path)  # and back, after Nessie's RocksDB opened the directory


def test_lochkit_reads_what_nessies_rocksdb_wrote(nessies_rocksdb: list[str], tmp_path: Path) -> None:
    rows = [(family, key, value) for family, kv in _expected_rows().items() for key, value in kv.items()]
    _run(nessies_rocksdb, "write", str(tmp_path), *(part for row in rows for part in row))
    assert list(tmp_path.glob("*.sst")), "Nessie's RocksDB wrote no table file"
    assert not (tmp_path / "rocksdict-config.json").exists()
    _check_lochkit_reads(tmp_path)
