"""The asymmetric experiment end to end on the in-process target (threads), its parsing and
output, commit policies on load targets, and the Prometheus metrics it serves."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from backends.inmemory.adapter import InMemoryAdapter
from loadgen.durations import parse_duration
from loadgen.experiments.asymmetric import AsymmetricOptions, ExperimentError, prepare, render, run
from loadgen.experiments.writer_stats import WriterStats
from loadgen.runs.events import EventWriter
from loadgen.targets.in_process import in_process_target
from loadgen.targets.opening import open_target
from loadgen.targets.policy import ClientCoordinated, apply_policy, default_policy
from lochkit.cli import main
from lochkit.commands.experiment import parse_writers
from persist_spi.config import StoreConfig
from persist_spi.versionstore.policies import CoordinatedPolicy, GroupPolicy, NessiePolicy
from persist_spi.versionstore.refs import branch


def _inmemory() -> argparse.Namespace:
    return argparse.Namespace(
        backend="inmemory",
        url=None,
        provision="auto",
        nessie_uri=None,
        nessie_options=[],
        nessie_client="HTTP",
    )


def test_durations_and_writer_lists_parse_and_bad_ones_say_why() -> None:
    assert parse_duration("20s") == 20
    assert parse_duration("500ms") == 0.5
    assert parse_duration("2m") == 120
    assert parse_duration("PT5S") == 5
    assert parse_writers("1,10") == (1, 10)
    assert parse_writers("8x1") == (1,) * 8
    assert parse_writers("2x1,10") == (1, 1, 10)
    with pytest.raises(ValueError, match="'a' is not a number of puts"):
        parse_writers("1,a")
    with pytest.raises(ValueError, match="at least 1 key"):
        AsymmetricOptions(puts=(1, 0)).validate()


@pytest.mark.parametrize("policy", ["nessie", "coordinated", "group"])
def test_threads_commit_for_the_duration_and_every_event_is_recorded(tmp_path: Path, policy: str) -> None:
    options = AsymmetricOptions(duration_s=0.5, puts=(1, 10), policy=policy)
    with open_target(_inmemory(), purpose="load") as target:
        prepare(target, options, None)
        with EventWriter(tmp_path / "events.parquet") as events:
            result = run(target, options, events, tmp_path)
        log = list(
            target.api.get_commits(
                __import__("persist_spi.versionstore.refs", fromlist=["branch"]).branch(result.branch)
            )
        )
    assert [w.puts_per_commit for w in result.writers] == [1, 10]
    assert result.commits == len(log) > 0
    assert events.rows == sum(w.attempts.get_total_count() + w.errors + w.conflicts for w in result.writers)
    rows = result.rows()
    assert sum(r["share"] for r in rows) == pytest.approx(1.0, abs=0.001)
    if policy in ("coordinated", "group"):
        assert all(r["attempts_max"] == 1 for r in rows)  # nobody in the process races anybody
    lines: list[str] = []
    render(result, "heading", lines.append)
    assert lines[0] == "heading"
    assert lines[-1].startswith("all ")


def test_processes_are_refused_where_the_backend_cannot_share_its_data(tmp_path: Path) -> None:
    options = AsymmetricOptions(duration_s=0.2, processes=True)
    with open_target(_inmemory(), purpose="load") as target:
        prepare(target, options, None)
        with pytest.raises(ExperimentError, match="cannot be shared by several processes"):
            run(target, options, None, tmp_path)


def test_writer_stats_travel_between_processes_intact() -> None:
    stats = WriterStats("w0-1put", 1, commits=2, timeouts=1)
    stats.latency.record_value(1500)
    stats.attempts.record_value(3)
    back = WriterStats.from_wire(json.loads(json.dumps(stats.to_wire())))
    assert (back.commits, back.timeouts, back.latency.get_max_value(), back.attempts.get_max_value()) == (
        2,
        1,
        stats.latency.get_max_value(),
        3,
    )


def test_policies_apply_in_process_and_over_rest_only_where_they_mean_something() -> None:
    with open_target(_inmemory(), purpose="load") as target:
        apply_policy(target, "group")
        assert isinstance(target.api.policy, GroupPolicy)  # type: ignore[attr-defined]
        apply_policy(target, "coordinated")
        assert isinstance(target.api.policy, CoordinatedPolicy)  # type: ignore[attr-defined]
        with pytest.raises(ValueError, match="unknown"):
            apply_policy(target, "eager")
        rest_like = target
        rest_like.api = ClientCoordinated(target.api)  # what a REST target gets for 'coordinated'
        assert rest_like.api.default_branch() == "main"


def test_without_policy_a_target_commits_with_the_stores_default_and_a_server_with_its_own() -> None:
    with open_target(_inmemory(), purpose="load") as target:
        assert default_policy(target) == "nessie"
        assert isinstance(target.api.policy, NessiePolicy)  # type: ignore[attr-defined]
        target.api = ClientCoordinated(target.api)  # no longer a version store: a REST-like client
        assert default_policy(target) == "nessie"
    config = StoreConfig(repository_id="fair-repo", commit_policy="fair")
    with in_process_target(
        InMemoryAdapter(), backend="inmemory", provisioning="embedded", url=None, config=config
    ) as target:
        assert default_policy(target) == "fair"


def _experiment(tmp_path: Path, *options: str) -> int:
    """``lochkit experiment asymmetric`` in memory, its JSON in t.json and its run directory in run."""
    common = ["--backend", "inmemory", "--json", str(tmp_path / "t.json"), "--out", str(tmp_path / "run")]
    return main(["experiment", "asymmetric", *common, *options])


def test_the_experiment_names_the_policy_it_ran_with(tmp_path: Path) -> None:
    code = _experiment(tmp_path, "--duration", "200ms")
    assert code == 0
    rows = json.loads((tmp_path / "t.json").read_text())
    assert {r["policy"] for r in rows} == {"nessie"}


def test_experiment_command_prints_the_table_writes_json_and_a_run_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    code = _experiment(tmp_path, "--duration", "300ms", "--policy", "group", "--metrics-port", "0")
    assert code == 0
    printed = capsys.readouterr().out
    assert "w1-10put" in printed
    rows = json.loads((tmp_path / "t.json").read_text())
    assert [r["puts_per_commit"] for r in rows] == [1, 10]
    for field in (
        "commits",
        "commits_per_s",
        "share",
        "attempts_mean",
        "attempts_max",
        "timeouts",
        "p50_ms",
        "p99_ms",
    ):
        assert field in rows[0]
    doc = json.loads((out / "run.json").read_text())
    assert doc["status"] == "ok"
    assert doc["totals"]["commits"] == sum(r["commits"] for r in rows)


def test_experiment_usage_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["experiment", "asymmetric", "--backend", "inmemory", "--writers", "1,x"]) == 2
    assert "is not a number of puts" in capsys.readouterr().err
    out = ["--out", str(tmp_path / "run")]
    assert (
        main(["experiment", "asymmetric", "--backend", "inmemory", "--processes", "--duration", "1s", *out])
        == 1
    )
    assert "cannot be shared by several processes" in capsys.readouterr().err


def test_metrics_name_version_store_and_persist_calls_like_nessie() -> None:
    from prometheus_client import CollectorRegistry, generate_latest

    from loadgen.metrics import CacheCollector, Metrics
    from persist_spi.versionstore import CommitMeta, IcebergTable, Put
    from persist_spi.versionstore.content import ContentKey

    registry = CollectorRegistry()
    registry.register(CacheCollector())
    with open_target(_inmemory(), purpose="load") as target:
        Metrics(registry).instrument(target)
        target.api.commit(branch("main"), None, CommitMeta("m"), [Put(ContentKey.of("t"), IcebergTable())])
        list(target.api.get_commits(branch("main")))
    text = generate_latest(registry).decode()
    vs = "lochkit_nessie_versionstore_request_seconds_count"
    assert f'{vs}{{class="VersionStore",exception="none",method="commit"}} 1.0' in text
    assert f'{vs}{{class="VersionStore",exception="none",method="getCommits"}} 1.0' in text
    # In-process targets read through the object cache, as Nessie's server does; like Nessie's, the
    # observed Persist is the caching one.
    persist = "lochkit_nessie_storage_persist"
    assert (
        f'{persist}_seconds_count{{class="CachingPersist",exception="none",method="storeObjsAndUpdateReference"}}'
        in text
    )
    assert (
        f'{persist}_total{{class="CachingPersist",exception="none",method="storeObjs",result="success"}}'
        in text
    )
    assert 'lochkit_cache_gets_total{cache="nessie-objects",result="hit"}' in text


def test_scenario_command_builds_the_locust_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    from lochkit.commands.scenario import locust_argv

    argv = locust_argv("mixed-workloads", ["--backend", "rocksdb", "--sim-writers-users", "3"])
    assert argv[1:3] == ["-m", "locust"]
    assert "--headless" in argv
    assert argv[argv.index("--users") + 1] == "5"  # 3 writers + 1 reader + 1 UI user
    assert argv[-3:] == ["MixedWriter", "MixedReader", "MixedUiUser"]
    assert "--headless" not in locust_argv("commit-to-branch", ["--web"])
    assert main(["scenario", "nope"]) == 2
    assert "unknown scenario 'nope'" in capsys.readouterr().err
