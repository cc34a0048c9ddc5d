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
    scenarios = [
        "1-put commits",
        "10-put commits",
        "depth 100",
        "depth 150",
        "10 keys visible",
        "700 keys visible",
    ]
    # Each scenario through the object cache (the default path) and without it.
    assert [(r["scenario"], r["object_cache"]) for r in figures["results"]] == [
        (s, cache) for s in scenarios for cache in (True, False)
    ]
    for result in figures["results"]:
        assert result["commits"] == 7
        assert 0 < result["p50_ms"] <= result["p99_ms"]
        assert result["commits_per_s"] > 0
    assert "700 keys visible" in done.stdout
    assert "no cache" in done.stdout
    # Two writers on one branch: every commit lands, first attempts and retries timed apart.
    writers = figures["contended"]
    assert [w["puts_per_commit"] for w in writers] == [1, 10]
    for w in writers:
        assert w["commits"] + w["timeouts"] == 7
        assert w["attempts_mean"] >= 1
        assert w["first_attempt_p50_ms"] > 0
        assert (w["retries"] > 0) == (w["retry_p50_ms"] > 0)


def test_object_cache_switch_measures_one_way(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    done = bench(
        "--backend", "inmemory", "--commits", "3", "--deep", "101", "--key-counts", "5",
        "--object-cache", "off", "--json", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert {r["object_cache"] for r in json.loads(out.read_text())["results"]} == {False}


def test_the_database_floor_is_measured_in_the_same_run_and_beside_every_scenario(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    done = bench(
        "--backend", "inmemory", "--commits", "4", "--deep", "101", "--key-counts", "5",
        "--object-cache", "on", "--json", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    floor = figures["floor"]
    assert list(floor) == ["put", "read", "cas"]
    assert all(f["calls"] == 4 and f["ops_per_s"] > 0 for f in floor.values())
    for result in figures["results"]:
        expected = result["commits_per_s"] / floor["cas"]["ops_per_s"]
        assert abs(result["cas_floor_ratio"] - expected) <= 0.01 * expected
    # Printed before the scenarios, and each scenario's line gives its share.
    lines = done.stdout.splitlines()
    first_scenario = next(i for i, line in enumerate(lines) if line.startswith("1-put commits"))
    assert "floor: compare-and-swap a reference" in "\n".join(lines[:first_scenario])
    assert all("of CAS floor" in line for line in lines if "commits/s   p50" in line)


def test_bad_arguments_are_refused_with_the_reason() -> None:
    done = bench("--key-counts", "100,lots")
    assert done.returncode == 2
    assert "'lots' is not a positive whole number" in done.stderr
    done = bench("--backend", "oracle")
    assert done.returncode == 2
    assert "No backend named 'oracle'" in done.stderr
    done = bench("--backend", "inmemory,rocksdb")
    assert done.returncode == 2
    assert "several backends need --compare-nessie" in done.stderr
    done = bench("--compare-nessie", "--seconds", "0")
    assert done.returncode == 2
    assert "'0' is not a positive number of seconds" in done.stderr


def test_building_large_histories_and_key_sets_reports_progress() -> None:
    from backends.inmemory import InMemoryBackendFactory
    from loadgen.commit_bench import Bench, new_repository_id
    from persist_spi import progress

    lines: list[str] = []
    previous = progress.install(progress.Reporter(lines.append, min_seconds=0))
    try:
        bench = Bench(InMemoryBackendFactory().create(), new_repository_id())
        bench.initialize()
        tables = bench.fresh_branch("wide", 600)
        bench.deepen(tables, 700)
    finally:
        progress.install(previous)
    assert [line.split(": done in")[0] for line in lines] == [
        "bench: adding 600 tables to wide",
        "bench: deepening wide to 700 commits",
    ]
