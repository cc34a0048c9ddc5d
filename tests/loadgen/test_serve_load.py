"""``lochkit serve-load``: the figures of a cell come from the scenario's events and the server's
samples, errors are split by what the server answered, and a short run against ``lochkit serve``
on RocksDB prints a table with no server error (the CI smoke run; about 20 s)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
import urllib3

from conformance import snippets
from loadgen.contentgen.recording import classify
from loadgen.runs.events import CONFLICT, ERROR, OK, Event, EventWriter
from loadgen.serve_load.cells import summarise
from loadgen.serve_load.sampling import Sample, ServerSampler, established_connections, listening_pid
from lochkit.cli import main
from nessie_client.client import NessieUnreachable
from persist_spi.versionstore.errors import ReferenceNotFoundError
from persist_spi.versionstore.nessie_json import NessieServerError

CLI = str(Path(sys.executable).with_name("lochkit"))


def test_a_server_answer_without_an_error_of_its_own_is_named_by_its_status() -> None:
    assert classify(NessieServerError(503, "UNKNOWN", "down")) == (ERROR, "HTTP 503")
    assert classify(NessieServerError(401, "UNAUTHORIZED", "who")) == (ERROR, "HTTP 401")


def _unreachable_after_a_reset() -> None:
    """Raises as lochkit's REST client does when the server resets a connection."""
    try:
        try:
            raise ConnectionResetError(104, "Connection reset by peer")
        except OSError as e:
            raise requests.ConnectionError(urllib3.exceptions.ProtocolError("Connection aborted.", e)) from e
    except requests.ConnectionError:
        raise NessieUnreachable("No Nessie server answers") from None


def test_a_request_without_answer_is_named_by_its_innermost_cause() -> None:
    with pytest.raises(NessieUnreachable) as raised:
        _unreachable_after_a_reset()
    assert classify(raised.value) == (ERROR, "NessieUnreachable (ConnectionResetError)")
    assert classify(NessieUnreachable("no chain")) == (ERROR, "NessieUnreachable")


def test_a_cell_splits_errors_by_what_the_server_answered(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "worker-1").mkdir(parents=True)
    ms = 1_000_000
    events = [
        Event(0, 2 * ms, "u1", "Commit"),
        Event(1 * ms, 4 * ms, "u1", "Commit"),
        Event(2 * ms, 1 * ms, "u2", "Commit", CONFLICT, error_kind="VALUE_DIFFERS"),
        Event(
            3 * ms, 1 * ms, "u2", "Commit", ERROR, error_kind=classify(NessieServerError(500, "X", "x"))[1]
        ),
        Event(
            4 * ms, 1 * ms, "u2", "FetchContent", ERROR, error_kind=classify(ReferenceNotFoundError("x"))[1]
        ),
        Event(
            5 * ms,
            1 * ms,
            "u2",
            "FetchContent",
            ERROR,
            error_kind=classify(NessieServerError(403, "F", "x"))[1],
        ),
    ]
    # Two run directories, as a locust master's workers leave them: both are read.
    with EventWriter(run / "events.parquet") as writer:
        for event in events[:3]:
            writer.add(event)
    with EventWriter(run / "worker-1" / "events.parquet") as writer:
        for event in [
            *events[3:],
            Event(9 * ms, 1 * ms, "u3", "Commit", ERROR, error_kind="NessieUnreachable (RemoteDisconnected)"),
        ]:
            writer.add(event)
    samples = [Sample(0.0, 100, 1), Sample(0.5, 300, 7), Sample(1.0, 200, 2)]
    cell = summarise("lochkit-rocksdb", 2, run, samples)
    assert cell.requests == 7
    assert cell.seconds == pytest.approx(0.010)
    assert cell.requests_per_s == pytest.approx(700.0)
    assert (cell.server_errors, cell.conflicts, cell.client_errors, cell.no_answer) == (1, 1, 2, 1)
    assert cell.error_kinds == {
        "HTTP 403": 1,
        "HTTP 500": 1,
        "NessieUnreachable (RemoteDisconnected)": 1,
        "ReferenceNotFound": 1,
        "VALUE_DIFFERS": 1,
    }
    assert cell.p50_ms == pytest.approx(1.0, rel=0.01)
    assert cell.p99_ms == pytest.approx(4.0, rel=0.01)
    assert (cell.rss_peak_bytes, cell.rss_end_bytes, cell.connections_peak) == (300, 200, 7)
    assert sum(1 for e in events if e.outcome == OK) == 2


def test_the_sampler_watches_the_process_listening_on_the_port() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        assert listening_pid(port) == os.getpid()
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
        accepted = [listener.accept()[0] for _ in clients]
        try:
            assert established_connections(port) == 3  # the server's side of each, not the clients'
            with ServerSampler(port, interval_s=0.05) as sampler:
                time.sleep(0.2)
        finally:
            for s in clients + accepted:
                s.close()
    assert sampler.pid == os.getpid()
    assert len(sampler.samples) >= 3
    assert all(s.rss_bytes > 0 and s.connections == 3 for s in sampler.samples)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--target", "lochkit-mysql"], "unknown target(s) lochkit-mysql"),
        (["--users", "0,10"], "--users needs numbers of at least 1"),
        (["--users", "a"], "--users a: give numbers"),
        (["--duration", "soon"], "--duration"),
    ],
)
def test_usage_errors_name_the_option(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve-load", *argv]) == 2
    assert message in capsys.readouterr().err


def test_a_short_run_against_lochkit_serve_on_rocksdb(tmp_path: Path) -> None:
    """The smoke run CI does: 1 and 10 users for 3 s each; every server it started is stopped."""
    results, markdown = tmp_path / "results.json", tmp_path / "serve-load.md"
    done = subprocess.run(
        [
            CLI,
            "serve-load",
            "--target",
            "lochkit-rocksdb",
            "--users",
            "1,10",
            "--duration",
            "3s",
            "--warmup",
            "0",
            "--interval",
            "0.2",
            "--out",
            str(tmp_path / "run"),
            "--json",
            str(results),
            "--markdown-out",
            str(markdown),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^\| lochkit-rocksdb \| 1 \| ", done.stdout, re.MULTILINE), done.stdout
    assert re.search(r"^\| lochkit-rocksdb \| 10 \| ", done.stdout, re.MULTILINE), done.stdout
    doc = json.loads(results.read_text())
    assert [c["users"] for c in doc["cells"]] == [1, 10]
    for cell in doc["cells"]:
        assert (cell["server_errors"], cell["no_answer"]) == (0, 0), cell["error_kinds"]
        assert cell["requests"] > 0, cell
        assert cell["requests_per_s"] > 0, cell
        assert 0 < cell["p50_ms"] <= cell["p99_ms"], cell
        assert cell["rss_peak_bytes"] >= cell["rss_end_bytes"] > 0, cell
        assert cell["connections_peak"] > 0, cell
        assert len(cell["samples"]) >= 3
    assert snippets.body(markdown.read_text()).startswith("| target | users | requests/s |")
    # The server it started is stopped.
    port = int(re.search(r"at http://127\.0\.0\.1:(\d+)/api/v2", done.stdout).group(1))  # type: ignore[union-attr]
    assert listening_pid(port) is None


def test_a_database_server_is_described_without_where_its_binaries_are() -> None:
    from loadgen.serve_load.servers import _described
    from provisioning.base import Provisioned

    provisioned = Provisioned(
        "postgres",
        None,
        "local-process",
        server="PostgreSQL 15.18, local process from /opt/pg/bin, fsync=off",
    )
    assert _described(provisioned) == "PostgreSQL 15.18, fsync=off (a new local server)"
