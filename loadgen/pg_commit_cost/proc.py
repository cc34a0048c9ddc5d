"""Linux's /proc: one process's CPU so far (clock ticks from ``stat``, nanoseconds on a CPU and
waiting for one from ``schedstat``), and every process of one PostgreSQL server."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

PROC: Final = Path("/proc")


@dataclass(frozen=True)
class ProcCpu:
    """One process's CPU so far: clock ticks (utime+stime), and from schedstat the nanoseconds on a
    CPU and runnable but waiting for one."""

    ticks: int = 0
    run_ns: int = 0
    wait_ns: int = 0
    #: cutime+cstime: ticks of children that exited and were reaped (the postmaster's).
    child_ticks: int = 0

    def __add__(self, other: ProcCpu) -> ProcCpu:
        return ProcCpu(
            self.ticks + other.ticks,
            self.run_ns + other.run_ns,
            self.wait_ns + other.wait_ns,
            self.child_ticks + other.child_ticks,
        )

    def __sub__(self, other: ProcCpu) -> ProcCpu:
        return ProcCpu(
            self.ticks - other.ticks,
            self.run_ns - other.run_ns,
            self.wait_ns - other.wait_ns,
            self.child_ticks - other.child_ticks,
        )


def parse_stat(text: str) -> tuple[int, int, int]:
    """(parent pid, utime+stime, cutime+cstime) from the text of ``/proc/PID/stat``."""
    # The command name, field 2, is in parentheses and may itself hold spaces and parentheses: count
    # the fields from after its last ")". Field N of proc(5) is then at index N - 3.
    fields = text[text.rindex(")") + 2 :].split()
    ppid = int(fields[4 - 3])
    utime, stime, cutime, cstime = (int(fields[n - 3]) for n in (14, 15, 16, 17))
    return ppid, utime + stime, cutime + cstime


def parse_schedstat(text: str) -> tuple[int, int]:
    """(nanoseconds on a CPU, nanoseconds runnable waiting for one) from ``/proc/PID/schedstat``."""
    run_ns, wait_ns, _timeslices = (int(x) for x in text.split())
    return run_ns, wait_ns


def read_proc(path: Path) -> tuple[int, ProcCpu] | None:
    """(parent pid, CPU) of ``/proc/PID`` or ``/proc/thread-self``; None if the process is gone."""
    try:
        stat = (path / "stat").read_text()
        schedstat = (path / "schedstat").read_text()
    except (FileNotFoundError, ProcessLookupError):  # it exited between listing and reading
        return None
    ppid, ticks, child_ticks = parse_stat(stat)
    run_ns, wait_ns = parse_schedstat(schedstat)
    return ppid, ProcCpu(ticks, run_ns, wait_ns, child_ticks)


def server_processes(postmaster: int, proc: Path = PROC) -> dict[int, ProcCpu]:
    """The postmaster and its children: every process of one PostgreSQL instance."""
    found: dict[int, ProcCpu] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        read = read_proc(entry)
        if read is not None and postmaster in (read[0], int(entry.name)):
            found[int(entry.name)] = read[1]
    return found


def ticks_per_second() -> int:
    """The unit of /proc/PID/stat's CPU times (looked up when measuring: Linux only)."""
    return os.sysconf("SC_CLK_TCK")
