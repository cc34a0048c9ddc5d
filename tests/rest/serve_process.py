"""``lochkit serve`` as a separate process, for the tests that need the real command: started, then
waited for until it answers, with its output at hand when it dies first."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

import requests

CLI: Final = str(Path(sys.executable).with_name("lochkit"))
_START_TIMEOUT: Final = 60.0


def answers_http(url: str) -> bool:
    """Whether anything answers a GET of ``url`` (any status: a 401 is an answer too)."""
    try:
        requests.get(url, timeout=2).close()
    except requests.ConnectionError:
        return False
    return True


def start_serve(
    argv: Sequence[str], ready_url: str, answers: Callable[[str], bool] = answers_http
) -> subprocess.Popen[str]:
    """``lochkit serve ARGV``, returned once ``answers(ready_url)``; the test fails with the
    server's output if it exits first, or when it does not answer within a minute."""
    process = subprocess.Popen(
        [CLI, "serve", *argv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    deadline = time.monotonic() + _START_TIMEOUT
    while not answers(ready_url):
        if process.poll() is not None:
            raise AssertionError(f"lochkit serve exited first: {process.communicate()[0]}")
        if time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"lochkit serve did not answer within {_START_TIMEOUT:.0f} s")
        time.sleep(0.1)
    return process
