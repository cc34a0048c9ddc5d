"""The server's counters at one moment (:class:`ServerSnapshot`), and what was used between two:
CPU per group of processes, and the WAL written."""

from __future__ import annotations

from dataclasses import dataclass

from loadgen.pg_commit_cost.groups import BACKEND, EXITED, OTHER, POSTMASTER, WALWRITER
from loadgen.pg_commit_cost.proc import ProcCpu


@dataclass
class ServerSnapshot:
    """The server's counters at one moment."""

    processes: dict[int, ProcCpu]
    roles: dict[int, str]
    lsn: str
    #: pg_stat_wal: records, fpi, bytes_stat, writes, syncs, write_ms, sync_ms.
    wal: dict[str, float]
    #: Transactions of lochkit's database so far.
    statements: int


def server_cpu(before: ServerSnapshot, after: ServerSnapshot) -> dict[str, ProcCpu]:
    """CPU the server's processes used between the snapshots, per group.

    A child that exited in between (an autovacuum worker) reappears in the postmaster's
    reaped-children ticks with its whole life, so its ticks before the first snapshot are taken
    off again; schedstat keeps no such total, so the nanoseconds of exited children are unknown."""
    names = {**before.roles, **after.roles}
    used: dict[str, ProcCpu] = {}

    def add(role: str, cpu: ProcCpu) -> None:
        used[role] = used.get(role, ProcCpu()) + cpu

    for pid in before.processes.keys() | after.processes.keys():
        start, end = before.processes.get(pid, ProcCpu()), after.processes.get(pid)
        if end is None:
            add(EXITED, ProcCpu(ticks=-start.ticks))
            continue
        delta = end - start
        if names.get(pid) == POSTMASTER:
            add(EXITED, ProcCpu(ticks=delta.child_ticks))
            delta = ProcCpu(delta.ticks, delta.run_ns, delta.wait_ns)
        add(names.get(pid, OTHER), delta)
    # The rows the table always shows stay, even when idle; other idle groups are left out.
    return {role: cpu for role, cpu in used.items() if cpu != ProcCpu() or role in (BACKEND, WALWRITER)}


def lsn_bytes(lsn: str) -> int:
    """A WAL position as PostgreSQL prints it (``16/B374D848``: high and low 32 bits) in bytes."""
    high, low = lsn.split("/")
    return (int(high, 16) << 32) + int(low, 16)
