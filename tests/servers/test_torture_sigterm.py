"""``lochkit torture`` stopped by SIGTERM (a CI job cancelled, ``kill``) stops what it started: no
database server or Toxiproxy outlives it."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from tests.servers.started import LOCHKIT, running_under, soon, started_in, wait_for


def test_a_campaign_stopped_by_sigterm_leaves_no_server_running(tmp_path: Path) -> None:
    # MongoDB's stand-in (FerretDB) runs as this user, so it can live in pytest's private tmp_path;
    # PostgreSQL and MariaDB run as their own accounts, which cannot reach it.
    command = [LOCHKIT, "torture", "--profile", "ci", "--backend", "mongodb", "--only", "network"]
    log = tmp_path / "torture.log"
    with running_under(tmp_path, [*command, "--out", str(tmp_path / "run")], log) as process:
        # The database and Toxiproxy are up.
        wait_for("its network part", lambda: "network faults" in log.read_text(), process, log)
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
