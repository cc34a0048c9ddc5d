"""Every ``lochkit`` command ends on SIGTERM (a CI job cancelled, ``kill``, ``timeout``) as on
Ctrl-C: what it started is stopped. Shown with ``lochkit bench``, which starts a database server of
its own; the reliability campaign has its own test (test_torture_sigterm.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.servers.started import LOCHKIT, soon, started_in


def test_a_benchmark_stopped_by_sigterm_stops_the_server_it_started(tmp_path: Path) -> None:
    # MongoDB's stand-in (FerretDB) runs as this user, so it can live in pytest's private tmp_path.
    log = tmp_path / "bench.log"
    with log.open("w") as output:  # a file: a pipe would stay open while any holder of it lives
        process = subprocess.Popen(
            [LOCHKIT, "bench", "--backend", "mongodb", "--object-cache", "on", "--commits", "100000"],
            stdout=output,
            stderr=subprocess.STDOUT,
            env={**os.environ, "TMPDIR": str(tmp_path)},
        )
    try:
        deadline = time.monotonic() + 180
        while "commit benchmark on" not in log.read_text():  # the server is up and answering
            assert process.poll() is None, f"the benchmark ended before measuring: {log.read_text()}"
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        assert any("ferretdb" in c for c in started_in(tmp_path).values()), log.read_text()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) != 0
        assert soon(lambda: not started_in(tmp_path), 30), started_in(tmp_path)
        # Its work directory (the server's data) went with it.
        assert not list(tmp_path.glob("lochkit-bench-*")), list(tmp_path.iterdir())
    finally:  # whatever happened, this test leaves nothing running
        process.kill()
        process.wait()
        for pid in started_in(tmp_path):
            os.kill(pid, signal.SIGKILL)
