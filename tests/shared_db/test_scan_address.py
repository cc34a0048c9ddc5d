"""Where Nessie's full scan looks for each shared database: the address the Java program gets in
``NESSIE_BENCH_URL`` for every backend of the shared-database test (no server needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reliability.shared_db.database import SharedDatabase
from reliability.shared_db.names import BACKENDS


@pytest.mark.parametrize(
    ("backend", "url", "expected"),
    [
        (
            "postgres",
            "postgresql://lochkit:pw@127.0.0.1:5432/shared_1",
            "jdbc:postgresql://127.0.0.1:5432/shared_1?user=lochkit&password=pw",
        ),
        (
            "mariadb",
            "mariadb://lochkit:p%26w@127.0.0.1:3306/shared_1",
            "jdbc:mariadb://127.0.0.1:3306/shared_1?user=lochkit&password=p%26w",
        ),
        ("rocksdb", "rocksdb:///data/rocksdb-1", "/data/rocksdb-1"),
        ("cassandra", "cassandra://u:p@127.0.0.1:9042/nessie_1", "cassandra://u:p@127.0.0.1:9042/nessie_1"),
        (
            "dynamodb",
            "dynamodb://127.0.0.1:8000?region=us-west-2&table_prefix=shared1",
            "dynamodb://127.0.0.1:8000?region=us-west-2&table_prefix=shared1",
        ),
        (
            "bigtable",
            "bigtable://127.0.0.1:8086?project=lochkit&instance=lochkit&table_prefix=shared1",
            "bigtable://127.0.0.1:8086?project=lochkit&instance=lochkit&table_prefix=shared1",
        ),
    ],
)
def test_each_backend_gets_an_address_the_full_scan_reads(
    backend: str, url: str, expected: str, tmp_path: Path
) -> None:
    address = SharedDatabase(backend, url, tmp_path).scan_address()
    assert address is not None
    assert (address.backend, address.url) == (backend, expected)


def test_every_backend_of_the_shared_database_test_has_a_full_scan(tmp_path: Path) -> None:
    missing = [
        b for b in BACKENDS if SharedDatabase(b, f"{b}://127.0.0.1:1/x", tmp_path).scan_address() is None
    ]
    assert missing == []
