"""One cell's figures (:class:`Sample`: one operation under one configuration), from what the calls
cost the client and two snapshots of the server."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from loadgen.pg_commit_cost.groups import MONITOR
from loadgen.pg_commit_cost.snapshots import ServerSnapshot, lsn_bytes, server_cpu


@dataclass
class Sample:
    """One operation under one configuration, ``ops`` calls. Field names are those of the saved
    JSON files (``--report`` reads them back)."""

    config: str
    operation: str
    ops: int
    wall_s: float  # the sum of the calls' times
    window_s: float  # first call to last, as the server's counters see it
    client_cpu_s: float  # process_time: every thread
    client_thread_cpu_s: float  # thread_time: the calling thread
    client_runqueue_s: float  # the calling thread runnable, waiting for a CPU
    client_voluntary_switches: int
    server: dict[str, dict[str, float]]  # group -> cpu_s (ticks), run_s, runqueue_s (schedstat)
    wal_bytes: int
    wal: dict[str, float]  # pg_stat_wal differences
    statements: int
    loadavg: tuple[float, float, float]
    settings: dict[str, str] = field(default_factory=dict)

    def per_op_ms(self, seconds: float) -> float:
        return 1000 * seconds / self.ops

    def server_cpu_s(self, include: Callable[[str], bool] = lambda role: role != MONITOR) -> float:
        """Server CPU (clock ticks) of the groups ``include`` accepts; by default all but the
        monitor connection, which is this command's and no part of the operations' cost."""
        return sum(figures["cpu_s"] for role, figures in self.server.items() if include(role))

    def server_figure(self, role: str, figure: str) -> float:
        return self.server.get(role, {}).get(figure, 0.0)


@dataclass(frozen=True)
class ClientCost:
    """What the measured calls cost on the client's side."""

    wall_s: float
    window_s: float
    cpu_s: float
    thread_cpu_s: float
    runqueue_s: float
    voluntary_switches: int


def sample_of(
    config: str,
    operation: str,
    ops: int,
    client: ClientCost,
    before: ServerSnapshot,
    after: ServerSnapshot,
    loadavg: tuple[float, float, float],
    ticks_per_s: int,
) -> Sample:
    """The figures of ``ops`` calls between two server snapshots. Each snapshot is preceded by one
    read of lochkit's (the statistics flush), so the later one counts one statement too many."""
    return Sample(
        config,
        operation,
        ops,
        client.wall_s,
        client.window_s,
        client.cpu_s,
        client.thread_cpu_s,
        client.runqueue_s,
        client.voluntary_switches,
        {
            role: {"cpu_s": c.ticks / ticks_per_s, "run_s": c.run_ns / 1e9, "runqueue_s": c.wait_ns / 1e9}
            for role, c in sorted(server_cpu(before, after).items())
        },
        lsn_bytes(after.lsn) - lsn_bytes(before.lsn),
        {name: after.wal[name] - before.wal[name] for name in before.wal},
        after.statements - before.statements - 1,
        loadavg,
    )
