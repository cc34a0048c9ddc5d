"""A real client: Spark SQL with Iceberg's Nessie catalog, through ``lochkit serve``.

``lochkit serve`` runs as its own process over RocksDB; Spark (PySpark 4.1, local mode) loads the
Iceberg Spark runtime 1.11.0 from Maven Central (cached under ``~/.cache/lochkit/ivy``) and uses
Iceberg's ``NessieCatalog`` with the server's REST API v2 URI and a warehouse on the local file
system. It creates a namespace and a table, writes and reads rows, and works on a second branch
(created and merged through lochkit's REST client, as Nessie's Spark SQL extensions are not
published for Spark 4.1).

Runs when ``LOCHKIT_SPARK_TESTS=1`` (CI sets it): it needs Java 17+, PySpark 4.1 (the ``reports``
extra) and, the first time, Maven Central.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from nessie_client import NessieRestClient
from persist_spi.versionstore.refs import branch

ICEBERG_RUNTIME = "org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.11.0"
MAIN = branch("main")
DEV = branch("dev")

pytestmark = pytest.mark.skipif(
    os.environ.get("LOCHKIT_SPARK_TESTS") != "1",
    reason="Spark with Iceberg runs when LOCHKIT_SPARK_TESTS=1 (needs Java 17+, PySpark 4.1, Maven Central)",
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``lochkit serve --backend rocksdb`` as a process; yields its REST API v2 URI."""
    data = tmp_path_factory.mktemp("serve-rocksdb")
    port = _free_port()
    log = (data / "serve.log").open("w")
    cli = Path(sys.executable).with_name("lochkit")
    process = subprocess.Popen(
        [str(cli), "serve", "--backend", "rocksdb", "--url", str(data / "db"), "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    uri = f"http://127.0.0.1:{port}/api/v2"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(f"{uri}/config", timeout=2).ok:
                    break
            except requests.ConnectionError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"lochkit serve did not come up: {(data / 'serve.log').read_text()}")
            time.sleep(0.2)
        yield uri
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
        log.close()
    assert code == 0, (data / "serve.log").read_text()


@pytest.fixture(scope="module")
def spark(serve: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    pyspark_sql = pytest.importorskip("pyspark.sql", reason="PySpark 4.1 comes with the reports extra")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.fail("Spark needs Java 17 or newer (java on PATH or JAVA_HOME)")
    warehouse = tmp_path_factory.mktemp("warehouse")
    ivy = Path(os.environ.get("LOCHKIT_CACHE", Path.home() / ".cache" / "lochkit")) / "ivy"
    builder = pyspark_sql.SparkSession.builder.master("local[1]").appName("lochkit-iceberg-nessie")
    settings = {
        "spark.jars.packages": ICEBERG_RUNTIME,
        "spark.jars.ivy": str(ivy),
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "1",
        "spark.driver.memory": "1g",
    }
    for catalog, ref in (("nessie", "main"), ("nessie_dev", "dev")):
        prefix = f"spark.sql.catalog.{catalog}"
        settings |= {
            prefix: "org.apache.iceberg.spark.SparkCatalog",
            f"{prefix}.catalog-impl": "org.apache.iceberg.nessie.NessieCatalog",
            f"{prefix}.uri": serve,
            f"{prefix}.ref": ref,
            f"{prefix}.warehouse": warehouse.as_uri(),
        }
    for name, value in settings.items():
        builder = builder.config(name, value)
    session = builder.getOrCreate()
    try:
        yield session
    finally:
        session.stop()


def _rows(spark: Any, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in spark.sql(sql).collect()]


def test_spark_creates_writes_and_reads_an_iceberg_table_on_main(spark: Any, serve: str) -> None:
    spark.sql("CREATE NAMESPACE nessie.sales")
    spark.sql("CREATE TABLE nessie.sales.orders (id BIGINT, item STRING) USING iceberg")
    spark.sql("INSERT INTO nessie.sales.orders VALUES (1, 'apple'), (2, 'pear')")
    assert _rows(spark, "SELECT id, item FROM nessie.sales.orders ORDER BY id") == [(1, "apple"), (2, "pear")]
    assert _rows(spark, "SHOW NAMESPACES IN nessie") == [("sales",)]
    assert [r[1] for r in _rows(spark, "SHOW TABLES IN nessie.sales")] == ["orders"]
    # What the catalog committed is in lochkit's store: a namespace and an Iceberg table whose
    # metadata file Spark wrote to the warehouse.
    with NessieRestClient(serve) as client:
        entries = {str(e.key): e for e in client.get_entries(MAIN, with_content=True)}
        assert set(entries) == {"sales", "sales.orders"}
        table = entries["sales.orders"].content
        assert table is not None
        assert table.TYPE_NAME == "ICEBERG_TABLE"
        assert Path(table.metadata_location.removeprefix("file:")).exists()  # type: ignore[attr-defined]
        assert len(list(client.get_commits(MAIN))) >= 3


def test_spark_works_on_a_second_branch_and_the_merge_brings_it_to_main(spark: Any, serve: str) -> None:
    with NessieRestClient(serve) as client:
        client.create_reference(DEV, client.reference(MAIN).hash)
    spark.sql("INSERT INTO nessie_dev.sales.orders VALUES (3, 'plum')")
    spark.sql("CREATE TABLE nessie_dev.sales.returns (id BIGINT) USING iceberg")
    spark.sql("INSERT INTO nessie_dev.sales.returns VALUES (2)")
    assert _rows(spark, "SELECT id FROM nessie_dev.sales.orders ORDER BY id") == [(1,), (2,), (3,)]
    # main is untouched by the work on dev
    spark.sql("REFRESH TABLE nessie.sales.orders")
    assert _rows(spark, "SELECT id FROM nessie.sales.orders ORDER BY id") == [(1,), (2,)]
    assert [r[1] for r in _rows(spark, "SHOW TABLES IN nessie.sales")] == ["orders"]
    with NessieRestClient(serve) as client:
        result = client.merge(DEV, MAIN)
        assert result.applied
        assert result.successful
        # Everything on dev is now on main; main is one commit (the merge) ahead of dev.
        metadata = client.reference_metadata(DEV)
        assert (metadata.commits_ahead, metadata.commits_behind) == (0, 1)
    spark.sql("REFRESH TABLE nessie.sales.orders")
    assert _rows(spark, "SELECT id FROM nessie.sales.orders ORDER BY id") == [(1,), (2,), (3,)]
    assert sorted(r[1] for r in _rows(spark, "SHOW TABLES IN nessie.sales")) == ["orders", "returns"]
    assert _rows(spark, "SELECT id FROM nessie.sales.returns") == [(2,)]
