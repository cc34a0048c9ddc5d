"""What a command started as a subprocess under a ``TMPDIR`` of its own leaves running: the tests
that stop lochkit's commands with SIGTERM check that nothing outlives them."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

LOCHKIT = str(Path(sys.executable).with_name("lochkit"))


def started_in(tmp: Path) -> dict[int, str]:
    """The running processes started with ``TMPDIR=tmp`` (Toxiproxy's command line names no path),
    by pid, with their command lines."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or entry.name == str(os.getpid()):
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone meanwhile
            continue
        if f"TMPDIR={tmp}".encode() in environ:
            found[int(entry.name)] = cmdline.strip()
    return found


def soon(condition: Callable[[], bool], seconds: float) -> bool:
    """Whether ``condition`` holds within ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


@contextlib.contextmanager
def running_under(tmp: Path, command: Sequence[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``command`` started with ``TMPDIR=tmp``, its output in ``log``: a file, since a pipe would stay
    open as long as any process holding it lives, and those are what the tests look for. On leaving,
    whatever happened, it and everything started under ``tmp`` are killed."""
    with log.open("w") as output:
        process = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, env={**os.environ, "TMPDIR": str(tmp)}
        )
    try:
        yield process
    finally:
        process.kill()
        process.wait()
        for pid in started_in(tmp):
            os.kill(pid, signal.SIGKILL)


def wait_for(what: str, condition: Callable[[], bool], process: subprocess.Popen[bytes], log: Path) -> None:
    """Waits up to 180 s for ``condition``; fails with the log if ``process`` ends first."""
    deadline = time.monotonic() + 180
    while not condition():
        assert process.poll() is None, f"the command ended before {what}: {log.read_text()}"
        assert time.monotonic() < deadline, f"no {what} after 180 s: {log.read_text()}"
        time.sleep(0.5)
