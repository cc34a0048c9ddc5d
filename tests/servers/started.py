"""What a command started as a subprocess under a ``TMPDIR`` of its own leaves running: the tests
that stop lochkit's commands with SIGTERM check that nothing outlives them."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
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
