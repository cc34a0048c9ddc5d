"""``lochkit torture`` stopped by SIGTERM (a CI job cancelled, ``kill``) stops what it started: no
database server or Toxiproxy outlives it."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.servers.started import LOCHKIT, soon, started_in


def test_a_campaign_stopped_by_sigterm_leaves_no_server_running(tmp_path: Path) -> None:
    # MongoDB's stand-in (FerretDB) runs as this user, so it can live in pytest's private tmp_path;
    # PostgreSQL and MariaDB run as their own accounts, which cannot reach it.
    command = [LOCHKIT, "torture", "--profile", "ci", "--backend", "mongodb", "--only", "network"]
    log = tmp_path / "torture.log"
    # Output goes to a file: a pipe would stay open as long as any process holding it lives, and
    # those are what this test looks for.
    with log.open("w") as output:
        process = subprocess.Popen(
            [*command, "--out", str(tmp_path / "run")],
            stdout=output,
            stderr=subprocess.STDOUT,
            env={**os.environ, "TMPDIR": str(tmp_path)},
        )
    try:
        deadline = time.monotonic() + 180
        while "network faults" not in log.read_text():  # the database and Toxiproxy are up
            assert process.poll() is None, f"the campaign ended before its network part: {log.read_text()}"
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        time.sleep(2)
        started = " ".join(started_in(tmp_path).values())
        assert "toxiproxy" in started, log.read_text()
        assert "ferretdb" in started
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=120) != 0
        servers = ("ferretdb", "toxiproxy")
        assert soon(lambda: not any(s in c for c in started_in(tmp_path).values() for s in servers), 30)
        # A writer process SIGTERM caught while it was being started never got its pid back to the
        # campaign; it ends on its own once its bounded calls to the stopped database have failed.
        assert soon(lambda: not started_in(tmp_path), 120), started_in(tmp_path)
    finally:  # whatever happened, this test leaves nothing running
        process.kill()
        process.wait()
        for pid in started_in(tmp_path):
            os.kill(pid, signal.SIGKILL)
