"""A conformance run on several pytest-xdist workers (``pytest -n 2``) stopped by SIGTERM (a CI job
cancelled) stops like Ctrl-C: the workers are shut down and the servers they started stop."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.servers.started import soon, started_in


def test_a_run_on_two_workers_stopped_by_sigterm_leaves_no_server_running(tmp_path: Path) -> None:
    pytest.importorskip("xdist")
    # MongoDB's stand-in (FerretDB) runs as this user, so it can live in pytest's private tmp_path.
    log = tmp_path / "pytest.log"
    command = [sys.executable, "-m", "pytest", "-n", "2", "-p", "no:cacheprovider", "--pyargs",
               "conformance.all", "--backend", "inmemory,mongodb", "-v"]  # fmt: skip
    with log.open("w") as output:  # a file: a pipe would stay open while any holder of it lives
        process = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, env={**os.environ, "TMPDIR": str(tmp_path)}
        )
    try:
        deadline = time.monotonic() + 180
        while not any("ferretdb" in c for c in started_in(tmp_path).values()):
            assert process.poll() is None, f"the run ended before MongoDB's server started: {log.read_text()}"
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        while "[mongodb" not in log.read_text():  # a MongoDB test has run: the worker is in it
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=120) != 0
        assert soon(lambda: not started_in(tmp_path), 60), started_in(tmp_path)
    finally:  # whatever happened, this test leaves nothing running
        process.kill()
        process.wait()
        for pid in started_in(tmp_path):
            os.kill(pid, signal.SIGKILL)
