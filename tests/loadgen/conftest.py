"""Targets for the content generator's end-to-end tests: in-process inmemory and rocksdb, and a
real Nessie server (``nessie_server`` in tests/conftest.py: once per session, with
LOCHKIT_NESSIE_TESTS=1, as CI sets)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.inmemory import InMemoryBackendFactory
from loadgen.targets import Target
from loadgen.targets.in_process import in_process_target
from loadgen.targets.nessie_rest import nessie_target

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
