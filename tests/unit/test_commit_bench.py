"""The commit benchmark runs every scenario it promises and reports them; it is a script that
prints figures, so nothing here judges speed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    # A child process: the benchmark freezes the garbage collector's view of the heap.
    return subprocess.run(
        [sys.executable, "-m", "lochkit", "bench", *args], capture_output=True, text=True, timeout=300
    )


def test_every_scenario_is_measured_and_written(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    done = bench(
        "--backend",
        "rocksdb",
        "--commits",
        "7",
        "--deep",
        "150",
        "--key-counts",
        "10,700",
        "--json",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    assert figures["backend"] == "rocksdb"
    assert [r["scenario"] for r in figures["results"]] == [
        "1-put commits",
        "10-put commits",
        "depth 100",
        "depth 150",
        "10 keys visible",
        "700 keys visible",
    ]
    for result in figures["results"]:
        assert result["commits"] == 7
        assert 0 < result["p50_ms"] <= result["p99_ms"]
        assert result["commits_per_s"] > 0
    assert "700 keys visible" in done.stdout


def test_bad_arguments_are_refused_with_the_reason() -> None:
    done = bench("--key-counts", "100,lots")
    assert done.returncode == 2
    assert "'lots' is not a positive whole number" in done.stderr
    done = bench("--backend", "oracle")
    assert done.returncode == 2
    assert "No backend named 'oracle'" in done.stderr


def test_building_large_histories_and_key_sets_reports_progress() -> None:
    from backends.inmemory import InMemoryBackendFactory
    from loadgen.commit_bench import Bench
    from persist_spi import progress
    from persist_spi.adapter_persist import AdapterPersist
    from persist_spi.config import StoreConfig
    from persist_spi.logic.repository_logic import RepositoryLogic

    lines: list[str] = []
    previous = progress.install(progress.Reporter(lines.append, min_seconds=0))
    try:
        persist = AdapterPersist(InMemoryBackendFactory().create(), StoreConfig())
        RepositoryLogic(persist).initialize("main")
        bench = Bench(persist)
        keys, ids = bench.fresh_branch("wide", 600)
        bench.deepen("wide", keys, ids, 700)
    finally:
        progress.install(previous)
    assert [line.split(": done in")[0] for line in lines] == [
        "bench: adding 600 tables to wide",
        "bench: deepening wide to 700 commits",
    ]
