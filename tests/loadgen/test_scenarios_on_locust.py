"""``lochkit scenario`` end to end on locust: distributed (a master and a worker) and with the web UI,
against rocksdb in a temporary directory, so each test can count the commits that landed.

Locust runs in subprocesses: importing it would monkey-patch this test process for gevent. Each test
picks free ports and runs for a few seconds."""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from loadgen.scenarios import SCENARIOS
from loadgen.targets.opening import open_target
from persist_spi.versionstore.refs import branch

ROOT = Path(__file__).resolve().parents[2]
#: How long a locust process may take to start, run and finish before the test gives up on it.
PROCESS_TIMEOUT_S = 60


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _scenario(args: Sequence[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``lochkit scenario ARGS`` with this checkout's code, in the test's directory (where nothing
    else is written than what the arguments say); killed if the test leaves it running."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "lochkit", "scenario", *args],
            cwd=log.parent,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            yield process
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


def _exit_code(process: subprocess.Popen[bytes], log: Path) -> int:
    try:
        return process.wait(PROCESS_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"still running after {PROCESS_TIMEOUT_S} s:\n{_tail(log)}") from None


def _tail(log: Path) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-30:])


def _run_json(run_dir: Path) -> dict[str, Any]:
    return dict(json.loads((run_dir / "run.json").read_text()))


def _commit_events(run_dir: Path) -> list[dict[str, Any]]:
    rows = pq.read_table(run_dir / "events.parquet").to_pylist()
    return [r for r in rows if r["action"] == "Commit"]


def _commits_on(data: Path, name: str) -> int:
    """Commits in the history of branch ``name`` of the RocksDB store in ``data`` (opened here, once
    the locust processes are gone: one process at a time)."""
    args = argparse.Namespace(
        backend="rocksdb",
        url=str(data),
        provision="auto",
        nessie_uri=None,
        nessie_options=[],
        nessie_client="HTTP",
    )
    with open_target(args, purpose="load") as target:
        return sum(1 for _ in target.api.get_commits(branch(name)))


def test_a_master_reports_exactly_what_its_worker_committed_to_a_store_of_its_own(tmp_path: Path) -> None:
    """rocksdb can be opened by one process only: the master opens none, the worker loads the store
    (same --url on one machine), and the master's totals are the worker's."""
    port, data, out = _free_port(), tmp_path / "rocksdb", tmp_path / "run"
    common = ["commit-to-branch", "--backend", "rocksdb", "--url", str(data), "--out", str(out)]
    master_args = [
        *common,
        *("--master", "--expect-workers", "1", "--master-bind-host", "127.0.0.1"),
        *("--master-bind-port", str(port), "--users", "2", "-t", "4s"),
        *("--sim-mode", "SINGLE_BRANCH_RANDOM_TABLE", "--sim-commits", "0", "--sim-branch", "load"),
    ]
    worker_args = [*common, "--worker", "--master-host", "127.0.0.1", "--master-port", str(port)]
    master_log, worker_log = tmp_path / "master.log", tmp_path / "worker.log"
    with _scenario(master_args, master_log) as master, _scenario(worker_args, worker_log) as worker:
        assert _exit_code(worker, worker_log) == 0, _tail(worker_log)
        assert _exit_code(master, master_log) == 0, _tail(master_log)

    master_run = _run_json(out)
    [worker_dir] = out.glob("worker-*")
    worker_run = _run_json(worker_dir)
    assert (master_run["status"], worker_run["status"]) == ("ok", "ok")
    assert master_run["parameters"]["locust_role"] == "master"
    assert worker_run["parameters"]["locust_role"] == "worker"
    assert "the master opened none" in master_run["target"]["notes"][0]
    totals = master_run["totals"]
    assert totals["commits"] > 0
    assert totals["errors"] == 0
    for figure in ("commits", "conflicts", "errors", "calls"):
        assert totals[figure] == worker_run["totals"][figure], figure
    # What the worker recorded, and what landed in its store, are the master's figures too.
    commits = _commit_events(worker_dir)
    assert sum(e["outcome"] == "ok" for e in commits) == totals["commits"]
    assert sum(e["outcome"] == "conflict" for e in commits) == totals["conflicts"]
    assert _commits_on(data, "load") == totals["commits"]


def _get_json(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return dict(json.loads(response.read()))


def _wait_for(what: str, check: Any, log: Path, timeout_s: float = 30) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            found = check()
        except OSError:  # not listening yet
            found = None
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} after {timeout_s} s:\n{_tail(log)}")
        time.sleep(0.25)


def test_the_web_ui_swarms_with_the_sim_options_it_was_given_and_sigterm_finishes_the_run(
    tmp_path: Path,
) -> None:
    port, data, out, log = _free_port(), tmp_path / "rocksdb", tmp_path / "run", tmp_path / "web.log"
    ui = f"http://127.0.0.1:{port}"
    args = [
        *("commit-to-branch", "--backend", "rocksdb", "--url", str(data), "--out", str(out)),
        *("--web", "--web-host", "127.0.0.1", "--web-port", str(port)),
        *("--sim-mode", "SINGLE_BRANCH_TABLE_PER_USER", "--sim-branch", "ui"),
    ]
    with _scenario(args, log) as locust:
        _wait_for("web UI", lambda: _get_json(f"{ui}/stats/requests"), log)
        # --sim-commits is 100 on the command line; the UI's custom parameter makes it 5 per user.
        form = urllib.parse.urlencode({"user_count": 2, "spawn_rate": 2, "sim_commits": 5}).encode()
        with urllib.request.urlopen(f"{ui}/swarm", data=form, timeout=5) as response:
            assert json.loads(response.read())["success"] is True

        def stopped_after_their_commits() -> dict[str, Any] | None:
            stats = _get_json(f"{ui}/stats/requests")
            return stats if stats["state"] == "stopped" else None  # users that ran their count stop

        stats = _wait_for("stopped test", stopped_after_their_commits, log)
        [commit] = [s for s in stats["stats"] if s["name"] == "Commit"]
        assert (commit["num_requests"], commit["num_failures"]) == (10, 0)
        locust.send_signal(signal.SIGTERM)
        assert _exit_code(locust, log) == 0, _tail(log)

    run = _run_json(out)
    assert run["status"] == "ok"
    assert run["parameters"]["locust_role"] == "local"
    assert (run["totals"]["commits"], run["totals"]["conflicts"], run["totals"]["errors"]) == (10, 0, 0)
    assert [e["outcome"] for e in _commit_events(out)] == ["ok"] * 10
    assert _commits_on(data, "ui") == 10


def test_nessies_duration_defaults_are_added_unless_the_user_gave_the_option() -> None:
    from lochkit.commands.scenario import locust_argv

    def added(name: str, *rest: str) -> list[str]:
        """What lochkit put between its --users and the user's own arguments (less --web, its own)."""
        argv = locust_argv(name, rest)
        after_users = argv[argv.index("--users") + 2 :]
        passed_on = [a for a in rest if a != "--web"]
        assert after_users[len(after_users) - len(passed_on) - len(SCENARIOS[name].users) :] == [
            *passed_on,
            *SCENARIOS[name].users,
        ]
        return after_users[: len(after_users) - len(passed_on) - len(SCENARIOS[name].users)]

    # Nessie's KeyListSpillingSimulation runs 60 s and MixedWorkloadsSimulation 20 s by default.
    assert added("key-list-spilling") == ["-t", "60s"]
    assert added("mixed-workloads", "--web") == ["-t", "20s"]
    assert added("key-list-spilling", "-t", "5s") == []
    assert added("mixed-workloads", "--run-time=5s") == []
    assert added("key-list-spilling", "--worker") == []  # a worker ignores -t: the master's counts
    assert added("create-many-branches") == []
    # CommitToBranchSimulation: sim.commits is 0 (until the duration ends) when a duration is set.
    assert added("commit-to-branch", "-t", "30s") == ["--sim-commits", "0"]
    assert added("commit-to-branch", "--run-time", "1m") == ["--sim-commits", "0"]
    assert added("commit-to-branch", "-t", "30s", "--sim-commits", "5") == []
    assert added("commit-to-branch", "-t", "0") == []  # no limit: the count must end the run
    assert added("commit-to-branch") == []


def test_commit_to_branch_given_a_run_time_commits_until_it_ends(tmp_path: Path) -> None:
    out, log = tmp_path / "run", tmp_path / "locust.log"
    with _scenario(
        ["commit-to-branch", "--backend", "inmemory", "-t", "3s", "--out", str(out)], log
    ) as locust:
        assert _exit_code(locust, log) == 0, _tail(log)
    run = _run_json(out)
    assert run["status"] == "ok"
    assert run["parameters"]["sim_commits"] == 0
    # One user: with Nessie's other default (100 commits) it would stop at 100, well before 3 s.
    assert run["totals"]["commits"] > 100
    assert run["totals"]["elapsed_s"] >= 2.9
    assert sum(e["outcome"] == "ok" for e in _commit_events(out)) == run["totals"]["commits"]
