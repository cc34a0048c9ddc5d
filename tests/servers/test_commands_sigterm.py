"""Every ``lochkit`` command ends on SIGTERM (a CI job cancelled, ``kill``, ``timeout``) as on
Ctrl-C: what it started is stopped. Shown with ``lochkit bench``, which starts a database server of
its own; the reliability campaign has its own test (test_torture_sigterm.py)."""

from __future__ import annotations

import signal
from pathlib import Path

from tests.servers.started import LOCHKIT, running_under, soon, started_in, wait_for


def test_a_benchmark_stopped_by_sigterm_stops_the_server_it_started(tmp_path: Path) -> None:
    # MongoDB's stand-in (FerretDB) runs as this user, so it can live in pytest's private tmp_path.
    command = [LOCHKIT, "bench", "--backend", "mongodb", "--object-cache", "on", "--commits", "100000"]
    log = tmp_path / "bench.log"
    with running_under(tmp_path, command, log) as process:
        # The server is up and answering.
        wait_for("the benchmark's start", lambda: "commit benchmark on" in log.read_text(), process, log)
        assert any("ferretdb" in c for c in started_in(tmp_path).values()), log.read_text()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) != 0
        assert soon(lambda: not started_in(tmp_path), 30), started_in(tmp_path)
        # Its work directory (the server's data) went with it.
        assert not list(tmp_path.glob("lochkit-bench-*")), list(tmp_path.iterdir())
