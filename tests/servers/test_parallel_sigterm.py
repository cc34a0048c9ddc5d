"""A conformance run on several pytest-xdist workers (``pytest -n 2``) stopped by SIGTERM (a CI job
cancelled) stops like Ctrl-C: the workers are shut down and the servers they started stop."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from tests.servers.started import running_under, soon, started_in, wait_for


def test_a_run_on_two_workers_stopped_by_sigterm_leaves_no_server_running(tmp_path: Path) -> None:
    pytest.importorskip("xdist")
    # MongoDB's stand-in (FerretDB) runs as this user, so it can live in pytest's private tmp_path.
    command = [sys.executable, "-m", "pytest", "-n", "2", "-p", "no:cacheprovider", "--pyargs",
               "conformance.all", "--backend", "inmemory,mongodb", "-v"]  # fmt: skip
    log = tmp_path / "pytest.log"
    with running_under(tmp_path, command, log) as process:
        wait_for(
            "MongoDB's server",
            lambda: any("ferretdb" in c for c in started_in(tmp_path).values()),
            process,
            log,
        )
        # A MongoDB test has run: the worker is inside its backend's tests.
        wait_for("a MongoDB test", lambda: "[mongodb" in log.read_text(), process, log)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=120) != 0
        assert soon(lambda: not started_in(tmp_path), 60), started_in(tmp_path)
