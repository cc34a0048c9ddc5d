"""The console of the JVM that local Spark runs in: its start-up noise left out, everything else
shown.

Spark's launcher starts the JVM with an incubator module, and the JVM then prints ``WARNING: Using
incubator modules`` on every start; no option turns that off. So the JVM is started with a pipe as
its stderr, and a thread copies what comes through to this process's stderr, line by line, leaving
out only the lines in :data:`NOISE`: errors (Spark's log at level ERROR, see ``log4j2.properties``,
and Java's own) still reach the console.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Final

#: Start-of-line markers of what the JVM prints on every start.
NOISE: Final = (b"WARNING: Using incubator modules: ",)
_STDERR: Final = 2


def _forward(source: int, target: int) -> None:
    pending = b""
    while chunk := os.read(source, 65536):
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        kept = [line + b"\n" for line in lines if not line.startswith(NOISE)]
        if kept:
            os.write(target, b"".join(kept))
    if pending and not pending.startswith(NOISE):
        os.write(target, pending)
    os.close(source)
    os.close(target)


@contextlib.contextmanager
def filtered_stderr_for_children() -> Iterator[None]:
    """Processes started inside inherit a filtered stderr (see the module docstring); this
    process's own stderr is itself again afterwards."""
    read_end, write_end = os.pipe()
    console = os.dup(_STDERR)
    # The thread owns its own copy of the console: it outlives this block, as long as the JVM runs.
    threading.Thread(
        target=_forward, args=(read_end, os.dup(console)), daemon=True, name="jvm-stderr"
    ).start()
    os.dup2(write_end, _STDERR)
    os.close(write_end)
    try:
        yield
    finally:
        os.dup2(console, _STDERR)
        os.close(console)
