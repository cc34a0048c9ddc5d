"""``lochkit scenario ... --web`` whose web UI cannot listen: a clear usage error before anything
starts, and, should the port be taken after that check, a failed run instead of an idle "ok" one."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lochkit.commands.scenario import locust_argv

LOCHKIT = str(Path(sys.executable).with_name("lochkit"))


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port this test listens on, on loopback (locust's web UI binds every interface)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield int(taken.getsockname()[1])


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=cwd)


def test_a_busy_web_port_is_a_usage_error_before_the_run_starts(busy_port: int, tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = [LOCHKIT, "scenario", "commit-to-branch", "--backend", "inmemory", "--web"]
    done = _run([*argv, "--web-port", str(busy_port), "--out", str(out)], tmp_path)
    assert done.returncode == 2, done.stderr[-3000:]
    ours = [line for line in done.stderr.splitlines() if line.startswith("lochkit scenario:")]
    refused = f"the web UI cannot listen on *:{busy_port} (Address already in use)"
    assert ours == [
        f"lochkit scenario: {refused}; is another locust or server using it? Choose another with --web-port"
    ]
    assert not out.exists()  # no run directory claiming a run


#: lochkit's locustfile with the port check answering "free": the port is then taken by the time
#: locust binds it, as when another process wins the race between the check and the bind.
LOST_RACE = """
import loadgen.scenarios.locustfile
from loadgen.scenarios.locustfile import *  # noqa: F403  (the scenario's user classes)

loadgen.scenarios.locustfile._web_ui_address_problem = lambda host, port: None
"""


def test_a_web_ui_that_fails_after_the_check_fails_the_run(busy_port: int, tmp_path: Path) -> None:
    locustfile = tmp_path / "lost_race_locustfile.py"
    locustfile.write_text(LOST_RACE)
    out = tmp_path / "run"
    options = ["--backend", "inmemory", "--web", "--web-port", str(busy_port), "--out", str(out)]
    argv = locust_argv("commit-to-branch", options)
    argv[argv.index("-f") + 1] = str(locustfile)
    done = _run(argv, tmp_path)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "lochkit scenario: locust failed (its error is logged above); the run failed" in done.stderr
    assert json.loads((out / "run.json").read_text())["status"] == "failed"
