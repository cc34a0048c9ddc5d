"""A server's memory and open connections over time, read from ``/proc`` (Linux).

The server is found by its listening port, so the same sampler watches ``lochkit serve`` (a Python
process) and Nessie's runner jar (a JVM) without knowing how either was started. Every
``interval_s`` a background thread records the resident set size of that process and the number of
ESTABLISHED TCP connections whose local end is the port (the server's side of each client
connection)."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

#: ``/proc/net/tcp`` state codes.
_ESTABLISHED: Final = "01"
_LISTEN: Final = "0A"
_TCP_TABLES: Final = ("/proc/net/tcp", "/proc/net/tcp6")


@dataclass(frozen=True)
class Sample:
    """One reading: seconds since the sampler started, RSS in bytes, open connections."""

    t_s: float
    rss_bytes: int
    connections: int


def _sockets(port: int, state: str) -> list[str]:
    """Inodes of the TCP sockets in ``state`` whose local port is ``port``."""
    inodes = []
    for table in _TCP_TABLES:
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:  # no IPv6 on this machine
            continue
        for line in lines:
            fields = line.split()
            local, st, inode = fields[1], fields[3], fields[9]
            if st == state and int(local.rpartition(":")[2], 16) == port:
                inodes.append(inode)
    return inodes


def established_connections(port: int) -> int:
    """Open (ESTABLISHED) TCP connections whose local end is ``port``."""
    return len(_sockets(port, _ESTABLISHED))


def listening_pid(port: int) -> int | None:
    """The process of this user listening on TCP ``port``, or None."""
    wanted = {f"socket:[{inode}]" for inode in _sockets(port, _LISTEN)}
    if not wanted:
        return None
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            for fd in (entry / "fd").iterdir():
                if os.readlink(fd) in wanted:
                    return int(entry.name)
        except OSError:  # another user's process, or one that just ended
            continue
    return None


def rss_bytes(pid: int) -> int:
    """The resident set size of ``pid`` in bytes; 0 once it has ended."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


@dataclass
class ServerSampler:
    """Samples the server listening on ``port`` every ``interval_s`` between :meth:`start` and
    :meth:`stop`; the context manager does both."""

    port: int
    interval_s: float = 0.5
    samples: list[Sample] = field(default_factory=list)
    pid: int | None = None
    _stopping: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> ServerSampler:
        self.pid = listening_pid(self.port)
        if self.pid is None:
            raise RuntimeError(f"no process of this user listens on port {self.port}")
        self._thread = threading.Thread(target=self._run, name=f"sampler-{self.port}", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        assert self.pid is not None
        pid, started = self.pid, time.monotonic()

        def sample() -> None:
            elapsed = round(time.monotonic() - started, 3)
            self.samples.append(Sample(elapsed, rss_bytes(pid), established_connections(self.port)))

        sample()
        while not self._stopping.wait(self.interval_s):
            sample()
        sample()  # the state at the end of the run

    def stop(self) -> list[Sample]:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
        return self.samples

    def __enter__(self) -> ServerSampler:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()
