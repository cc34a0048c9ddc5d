"""``lochkit serve`` as a user runs it: usage errors say what to do (exit code 2), the server
answers Nessie's config, and SIGTERM stops it cleanly."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from lochkit.cli import main

CLI = str(Path(sys.executable).with_name("lochkit"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "name the backend to serve: --backend NAME"),
        (["--backend", "nessie"], "--backend nessie and --uri name a Nessie server"),
        (["--uri", "http://127.0.0.1:19120/api/v2"], "--backend nessie and --uri name a Nessie server"),
        (["--backend", "inmemory", "--port", "0"], "--port 0 is not a TCP port"),
    ],
)
def test_usage_errors_are_exit_code_2_with_the_fix(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", *argv]) == 2
    assert message in capsys.readouterr().err


def test_a_port_in_use_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--backend", "inmemory", "--port", str(port)]) == 2
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err


def test_an_unknown_backend_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--backend", "inmemroy", "--port", str(_free_port())]) == 2
    assert "inmemroy" in capsys.readouterr().err


def test_serves_until_sigterm_and_stops_cleanly(tmp_path: Path) -> None:
    port = _free_port()
    process = subprocess.Popen(
        [CLI, "serve", "--backend", "rocksdb", "--url", str(tmp_path / "db"), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                config = requests.get(f"http://127.0.0.1:{port}/api/v2/config", timeout=2).json()
                break
            except requests.ConnectionError:
                assert process.poll() is None, process.communicate()[0]
                assert time.monotonic() < deadline, "lochkit serve did not answer within 60 s"
                time.sleep(0.2)
        assert config["defaultBranch"] == "main"
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=30)[0]
    assert process.returncode == 0, output
    assert f"Nessie REST API v2 at http://127.0.0.1:{port}/api/v2" in output
    assert "rocksdb" in output
