"""Nessie's side of the side-by-side benchmarks: the addresses it gets, and (with
LOCHKIT_NESSIE_BENCH_TESTS=1) the Java program built against Nessie's published jars, run in both
modes on its in-memory backend, and through the asymmetric experiment (CI sets it; the first build
downloads about 150 MB). Figures are printed by the benchmark, never judged here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from loadgen.nessie_jvm import (
    NessieServe,
    NessieSideError,
    build,
    jdbc_url,
    mariadb_jdbc_url,
    mongo_url,
    nessie_address,
    run_writers,
)


def test_a_postgres_url_becomes_a_jdbc_url_without_lochkits_options() -> None:
    url = "postgresql://lochkit:p%40ss@127.0.0.1:5432/lochkit?table_prefix=x_&sslmode=disable&pool_max=3"
    assert (
        jdbc_url(url)
        == "jdbc:postgresql://127.0.0.1:5432/lochkit?user=lochkit&password=p%40ss&sslmode=disable"
    )


def test_a_mariadb_url_becomes_a_jdbc_url_with_its_credentials_encoded() -> None:
    url = "mariadb://lochkit:p%26ss%25@127.0.0.1:3307/shared_1?layout=nessie&pool_max=3"
    assert mariadb_jdbc_url(url) == "jdbc:mariadb://127.0.0.1:3307/shared_1?user=lochkit&password=p%26ss%25"
    assert mariadb_jdbc_url("mariadb://u@h/db") == "jdbc:mariadb://h:3306/db?user=u"
    with pytest.raises(NessieSideError, match="database in the URL"):
        mariadb_jdbc_url("mariadb://u:p@h:3306/")
    with pytest.raises(NessieSideError, match="mariadb:// URL"):
        mariadb_jdbc_url("postgresql://u:p@h/db")


def test_a_mongodb_url_loses_only_lochkits_options() -> None:
    url = "mongodb://u:p@h:27017/db?replicaSet=rs0&collection_prefix=c_&directConnection=true"
    assert mongo_url(url) == "mongodb://u:p@h:27017/db?replicaSet=rs0&directConnection=true"
    assert mongo_url("mongodb://h:1/db?database=x") == "mongodb://h:1/db"
    assert mongo_url("mongodb://h:1/db?layout=nessie&w=1") == "mongodb://h:1/db?w=1"


def test_each_backend_gets_the_address_nessie_can_use(tmp_path: Path) -> None:
    assert nessie_address("inmemory", None, tmp_path).url is None
    rocks = nessie_address("rocksdb", None, tmp_path)
    assert rocks.url is not None
    assert Path(rocks.url).is_dir()
    assert Path(rocks.url).parent == tmp_path  # its own directory: RocksDB allows one process
    with pytest.raises(NessieSideError, match="publishes no Cassandra storage module"):
        nessie_address("cassandra", "cassandra://h:9042/ks", tmp_path)
    with pytest.raises(NessieSideError, match=r"no JDBC2 storage module.*PostgreSQL only"):
        nessie_address("mariadb", "mariadb://u:p@h:3306/db", tmp_path)
    with pytest.raises(NessieSideError, match=r"no Bigtable storage module.*only inside the Nessie server"):
        nessie_address("bigtable", "bigtable://h:8086?project=p&instance=i", tmp_path)
    with pytest.raises(NessieSideError, match="needs the database's URL"):
        nessie_address("postgres", None, tmp_path)


@pytest.fixture(scope="module")
def classpath() -> str:
    if os.environ.get("LOCHKIT_NESSIE_BENCH_TESTS") != "1":
        pytest.skip(
            "the benchmark's Java side is built and run when LOCHKIT_NESSIE_BENCH_TESTS=1 (Maven, Java 17+; "
            "the first build downloads Nessie's jars)"
        )
    return build()


def test_serve_measures_rounds_on_nessies_own_version_store(classpath: str, tmp_path: Path) -> None:
    nessie = NessieServe(classpath, nessie_address("inmemory", None, tmp_path), repository="test")
    try:
        info = nessie.ask("info")
        assert info["nessie"] == "0.108.1"
        assert "nessie-versioned-storage-inmemory" in info["storage"]
        assert nessie.ask("setup b 20")["ok"] is True
        for cache in ("on", "off"):
            figures = nessie.ask(f"measure b 10 0.3 {cache}")
            assert figures["commits"] > 0
            assert 0 < figures["p50_ms"] <= figures["p99_ms"]
        with pytest.raises(NessieSideError, match="was not set up"):
            nessie.ask("measure other 1 0.1 on")
        assert nessie.ask("info")["nessie"] == "0.108.1"  # a failed command leaves it running
    finally:
        nessie.close()


def test_reset_gives_a_fresh_repository_to_set_up_again(classpath: str, tmp_path: Path) -> None:
    nessie = NessieServe(classpath, nessie_address("inmemory", None, tmp_path), repository="test")
    try:
        assert nessie.ask("setup b 5")["ok"] is True
        assert nessie.ask("measure b 1 0.2 on")["commits"] > 0
        assert nessie.ask("reset")["ok"] is True
        with pytest.raises(NessieSideError, match="was not set up"):
            nessie.ask("measure b 1 0.1 on")
        # The branch can be created again: the old one (and its cached reference) is gone.
        assert nessie.ask("setup b 5")["ok"] is True
        assert nessie.ask("measure b 1 0.2 on")["commits"] > 0
    finally:
        nessie.close()


def test_writers_report_each_writer_of_one_branch(classpath: str, tmp_path: Path) -> None:
    result = run_writers(
        classpath,
        nessie_address("inmemory", None, tmp_path),
        branch="asym",
        puts=[1, 10],
        seconds=1.0,
        repository="lochkit-scratch-test",
    )
    assert result["shape"] == "new-tables"
    writers = result["writers"]
    assert [(w["writer"], w["puts_per_commit"]) for w in writers] == [("w0-1put", 1), ("w1-10put", 10)]
    assert sum(w["share"] for w in writers) == pytest.approx(1.0, abs=0.001)
    for w in writers:
        assert w["commits"] > 0
        assert w["errors"] == 0
        assert w["attempts_mean"] >= 1
        assert w["first_attempt_p50_ms"] > 0


def test_the_experiment_refuses_targets_nessie_has_no_side_for() -> None:
    from loadgen.experiments.nessie_side import NessieSideUnavailable, check_target

    with pytest.raises(NessieSideUnavailable, match="no storage module lochkit can run for cassandra"):
        check_target("lochkit", "cassandra")
    with pytest.raises(NessieSideUnavailable, match="is already Nessie"):
        check_target("nessie", None)
    check_target("lochkit", "rocksdb")


def test_the_experiment_prints_nessies_side_and_keeps_its_rows(classpath: str, tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    out = tmp_path / "asym.json"
    script = "import sys; from lochkit.cli import main; sys.exit(main())"
    command = ["experiment", "asymmetric", "--backend", "inmemory", "--duration", "1s", "--compare-nessie"]
    done = subprocess.run(
        [sys.executable, "-c", script, *command, "--out", str(tmp_path / "run"), "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "Nessie's own version store" in done.stdout
    rows = json.loads(out.read_text())
    by_side = {(r["implementation"], r["puts_per_commit"]) for r in rows}
    assert by_side == {("lochkit", 1), ("lochkit", 10), ("nessie", 1), ("nessie", 10)}
    # Nessie's side ran and committed; in one second a writer may lose every race (the very
    # starvation the experiment measures), so no single writer is required to have landed one.
    assert sum(r["commits"] for r in rows if r["implementation"] == "nessie") > 0


def test_in_memory_comparison_rounds_start_on_fresh_repositories(classpath: str, tmp_path: Path) -> None:
    from backends.inmemory.adapter import InMemoryAdapter
    from loadgen.nessie_compare import Comparison, compare_backend

    adapter = InMemoryAdapter()
    adapter.setup_schema()
    comparison = Comparison()
    compare_backend(
        comparison,
        "inmemory",
        adapter,
        None,
        classpath=classpath,
        scratch=tmp_path,
        rounds=2,
        seconds=0.2,
        warmup=0.4,
        caches=[True],
        log=lambda _: None,
    )
    assert {(r.puts, r.cache) for r in comparison.rows} == {(1, True), (10, True)}
    for row in comparison.rows:
        assert len(row.lochkit) == len(row.nessie) == 2
        assert min(row.lochkit) > 0
        assert min(row.nessie) > 0
    # The database's floor was measured in the same run, and each row knows it.
    assert {r.cas_floor for r in comparison.rows} == {comparison.floors["inmemory"].cas_per_second}
    assert comparison.floors["inmemory"].cas_per_second > 0
    # Each round's repository (and the floor's scratch one) was dropped, the last one at the end.
    assert adapter._objs == {}
    assert adapter._refs == {}
