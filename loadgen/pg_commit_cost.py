"""Where the time of a PostgreSQL commit goes: wall time, client CPU, server CPU and WAL, per operation.

``lochkit bench --backend postgres`` gives commits/s and, beside them, the database's floor (one
compare-and-swap and one put of one object, through the adapter). This command takes the same
operations apart, one at a time on one thread as the bench runs them, under four server
configurations, and prints one table per operation: a row per figure, a column per configuration.

    python -m loadgen.pg_commit_cost [--commits 2000] [--warmup 200] [--floor-ops 2000] [--repeats 3]
        [--configs bench,bench+sync,durable,durable-async] [--json FILE] [--markdown-out FILE]
    python -m loadgen.pg_commit_cost --report FILE.json [FILE.json ...] [--markdown-out FILE]

The operations: a version-store commit of 1 put and of 10 puts (updates of existing Iceberg tables,
through the object cache, as the bench's headline rows), and the floor's compare-and-swap of a
reference and put of one new object (the calls of ``loadgen/db_floor.py``). Per operation it
measures:

- wall time: the sum of the calls' own times, as the bench counts them (ops/s is 1 / its mean);
- client CPU: this process (every thread) and the calling thread; "wait" is wall minus client CPU,
  the time the client spent waiting for the server (or for a CPU: the runqueue rows say how much);
- server CPU: every process of the PostgreSQL server, from ``/proc/PID/stat`` (clock ticks) and
  ``/proc/PID/schedstat`` (exact nanoseconds), grouped by kind: the backend serving lochkit's
  connection, the WAL writer, the others (checkpointer, autovacuum workers that came and went...);
- WAL: bytes written (the LSN's advance), full-page images, and the WAL write() and fsync calls
  and their time (``pg_stat_wal`` with ``track_wal_io_timing``);
- statements run (``pg_stat_database``: the adapter runs in autocommit, so one per transaction) and
  the client's voluntary context switches (each wait for an answer is one).

Configurations (set with ``ALTER SYSTEM`` and a reload, on one server):

- ``bench``: fsync, full_page_writes and synchronous_commit off, the settings ``lochkit bench`` and
  the conformance suite run their local server with: a commit never waits for WAL;
- ``bench+sync``: the same with synchronous_commit on: a commit waits for its WAL to reach the OS
  (no fsync), as the reliability campaign's restartable server runs;
- ``durable``: PostgreSQL's defaults: a commit waits for the WAL fsync;
- ``durable-async``: ``durable`` with synchronous_commit off.

Every configuration is measured in turn, and the whole round is repeated ``--repeats`` times so
that configurations interleave in time; cells are medians, with min-max when the repeats differ.
The defaults take about 3 minutes on two cores, ``--repeats 1`` about one. Clock ticks are
coarse (10 ms on most kernels): the tick-based server rows need the default thousands of calls,
where the schedstat rows are exact at any length.

What it touches: a private PostgreSQL server it starts itself (lochkit's local-process
provisioner, in a work directory under ``$TMPDIR``), and in it a scratch repository of its own.
The server is stopped and its data directory deleted at the end, also after an error, Ctrl-C or
SIGTERM. It needs Linux (``/proc``) and PostgreSQL's server binaries (``lochkit servers install
postgres``, or ``LOCHKIT_POSTGRES_BINDIR``); it says so and starts nothing when either is missing.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from backends.postgres.config import DEFAULT_APPLICATION_NAME
from conformance import snippets
from persist_spi.errors import InputError, LochkitError
from persist_spi.exit_codes import FAILED, INTERRUPTED, USAGE

if TYPE_CHECKING:
    import psycopg

    from loadgen.commit_bench import Bench
    from provisioning.servers.postgres import PostgresProvisioned

NAME: Final = "python -m loadgen.pg_commit_cost"
PROGRAM: Final = ("python", "-m", "loadgen.pg_commit_cost")
PROC: Final = Path("/proc")

#: Server settings of each configuration.
CONFIGS: Final[dict[str, dict[str, str]]] = {
    "bench": {"fsync": "off", "full_page_writes": "off", "synchronous_commit": "off"},
    "bench+sync": {"fsync": "off", "full_page_writes": "off", "synchronous_commit": "on"},
    "durable": {"fsync": "on", "full_page_writes": "on", "synchronous_commit": "on"},
    "durable-async": {"fsync": "on", "full_page_writes": "on", "synchronous_commit": "off"},
}
#: Set in every configuration: gives pg_stat_wal its write and sync times.
COMMON_SETTINGS: Final = {"track_wal_io_timing": "on"}
OPERATIONS: Final = ("commit 1 put", "commit 10 puts", "floor cas", "floor put")
#: Puts per commit of the commit operations; the others are floor calls.
COMMIT_PUTS: Final = {"commit 1 put": 1, "commit 10 puts": 10}

DEFAULT_COMMITS: Final = 2000
DEFAULT_FLOOR_OPS: Final = 2000
DEFAULT_WARMUP: Final = 200
DEFAULT_REPEATS: Final = 3

#: A backend reports its statistics (pg_stat_wal, pg_stat_database) when it goes idle, at most once
#: a second: wait this long, then make it run one statement, before reading them.
STATS_INTERVAL_S: Final = 1.1
#: After a reload the monitor's session sees the new settings; the other processes handle their
#: SIGHUP on their own schedule, within this.
RELOAD_SETTLE_S: Final = 0.2
RELOAD_TIMEOUT_S: Final = 10.0

#: How server processes are grouped (the JSON keeps every kind apart).
POSTMASTER: Final = "postmaster"
BACKEND: Final = "lochkit backend"
WALWRITER: Final = "walwriter"
MONITOR: Final = "monitor backend"
EXITED: Final = "exited children"
OTHER: Final = "other"
MONITOR_APPLICATION: Final = "lochkit-pg-commit-cost-monitor"


class CannotMeasure(InputError):
    """This command line or this machine cannot run the measurement; nothing was started."""


class MeasurementFailed(LochkitError):
    """The server did not do what the measurement set it up to do."""


# --- /proc ------------------------------------------------------------------------------------------


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


# --- grouping the server's processes ----------------------------------------------------------------


def role_of(backend_type: str, application_name: str) -> str:
    """A process's group: lochkit's own connections apart from other client backends, every other
    process by its kind (``walwriter``, ``checkpointer``, ``autovacuum worker``...)."""
    if backend_type == "client backend" and application_name == DEFAULT_APPLICATION_NAME:
        return BACKEND
    return backend_type


def roles(activity: Iterable[tuple[int, str, str]], postmaster: int, monitor: int) -> dict[int, str]:
    """pid -> group, from ``pg_stat_activity``'s (pid, backend_type, application_name) rows."""
    found = {postmaster: POSTMASTER, monitor: MONITOR}
    for pid, backend_type, application_name in activity:
        found.setdefault(pid, role_of(backend_type, application_name))
    return found


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


# --- the server -------------------------------------------------------------------------------------


class WatchedServer:
    """The private server and a superuser connection of this command's own that watches it. That
    connection is in the ``postgres`` database, so its reads never count among lochkit's statements."""

    def __init__(self, provisioned: PostgresProvisioned) -> None:
        import psycopg

        assert provisioned.url is not None  # a local process always has one
        self.url = provisioned.url
        self.monitor: psycopg.Connection[tuple[Any, ...]] = psycopg.connect(
            provisioned.admin_url, autocommit=True, application_name=MONITOR_APPLICATION
        )
        try:
            self.monitor_pid = int(self.value("SELECT pg_backend_pid()"))
            self.version = str(self.value("SHOW server_version"))
            self.data_directory = Path(str(self.value("SHOW data_directory")))
            # Every backend is a child of the postmaster, this connection's included.
            own = read_proc(PROC / str(self.monitor_pid))
            if own is None:
                raise MeasurementFailed(f"the server's process {self.monitor_pid} is not in {PROC}")
            self.postmaster = own[0]
        except BaseException:
            self.monitor.close()
            raise

    def value(self, query: str, params: Sequence[object] = ()) -> Any:
        row = self.monitor.execute(query, params).fetchone()
        assert row is not None
        return row[0]

    def configure(self, settings: dict[str, str]) -> None:
        """ALTER SYSTEM, reload, and wait until the settings are in force."""
        from psycopg import sql

        for name, value in settings.items():
            self.monitor.execute(
                sql.SQL("ALTER SYSTEM SET {} = {}").format(sql.Identifier(name), sql.Literal(value))
            )
        self.monitor.execute("SELECT pg_reload_conf()")
        deadline = time.monotonic() + RELOAD_TIMEOUT_S
        while (current := self.settings(list(settings))) != settings:
            if time.monotonic() > deadline:
                raise MeasurementFailed(
                    f"the private server's settings were not in force {RELOAD_TIMEOUT_S:.0f} s after "
                    f"a reload: asked for {settings}, found {current}"
                )
            time.sleep(0.05)
        time.sleep(RELOAD_SETTLE_S)

    def settings(self, names: list[str]) -> dict[str, str]:
        rows = self.monitor.execute("SELECT name, setting FROM pg_settings WHERE name = ANY(%s)", [names])
        return {str(name): str(setting) for name, setting in rows}

    def snapshot(self) -> ServerSnapshot:
        activity = self.monitor.execute("SELECT pid, backend_type, application_name FROM pg_stat_activity")
        found_roles = roles(activity.fetchall(), self.postmaster, self.monitor_pid)
        processes = server_processes(self.postmaster)
        row = self.monitor.execute(
            "SELECT pg_current_wal_lsn()::text, wal_records, wal_fpi, wal_bytes, wal_write, wal_sync, "
            "wal_write_time, wal_sync_time FROM pg_stat_wal"
        ).fetchone()
        assert row is not None
        names = ("records", "fpi", "bytes_stat", "writes", "syncs", "write_ms", "sync_ms")
        wal = dict(zip(names, map(float, row[1:]), strict=True))
        statements = int(
            self.value(
                "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = %s",
                [self.database()],
            )
        )
        return ServerSnapshot(processes, found_roles, str(row[0]), wal, statements)

    def database(self) -> str:
        """lochkit's database on this server."""
        from psycopg.conninfo import conninfo_to_dict

        return str(conninfo_to_dict(self.url)["dbname"])

    def close(self) -> None:
        self.monitor.close()


@contextlib.contextmanager
def private_server() -> Iterator[WatchedServer]:
    """A PostgreSQL server of this command's own, with PostgreSQL's default settings; stopped, its
    data directory and work directory deleted, when the block ends however it ends."""
    from provisioning.servers.postgres import PROVISIONER
    from provisioning.workdir import workdir

    with workdir("pg-commit-cost") as where:
        provisioned = PROVISIONER.configurable_process("postgres", where)
        try:
            server = WatchedServer(provisioned)
            try:
                yield server
            finally:
                server.close()
        finally:
            provisioned.stop()  # fast shutdown, then the data directory is deleted


# --- the operations ---------------------------------------------------------------------------------


class Workload:
    """The bench's repository on the adapter (object cache on, as the bench's headline rows) and the
    floor's scratch repository; :meth:`prepare` returns one ready-to-run call, so that building its
    arguments stays out of the measured time."""

    def __init__(self, url: str) -> None:
        from loadgen.commit_bench import Bench
        from loadgen.db_floor import FloorCalls
        from persist_spi.logic.ownership import new_scratch_id
        from persist_spi.registry import backend_factory

        self.adapter = backend_factory("postgres").create(url)
        try:
            self.adapter.setup_schema()
            self.repository = new_scratch_id("pg-commit-cost")
            self.bench: Bench = Bench(self.adapter, self.repository)
            self.bench.initialize()
            self.tables = self.bench.fresh_branch("throughput", 100)
            # The floor's own calls, so that these rows are the ones the bench's floor writes.
            self._floor = FloorCalls(self.adapter, new_scratch_id("pg-commit-cost-floor"), None, None, 0)
            self._cas = self._floor.cas_calls()
        except BaseException:
            self.adapter.close()
            raise
        self._n = 0  # every call writes new values

    def prepare(self, operation: str) -> Callable[[], object]:
        from persist_spi.versionstore.meta import CommitMeta
        from persist_spi.versionstore.refs import branch

        self._n += 1
        n = self._n
        if operation in COMMIT_PUTS:
            ops = self.bench.operations(self.tables, n, COMMIT_PUTS[operation])
            target, meta = branch(self.tables.name), CommitMeta(f"pg-commit-cost #{n}")
            return lambda: self.bench.store.commit(target, None, meta, ops)
        if operation == "floor cas":
            return self._cas(n)
        if operation == "floor put":
            return self._floor.put_call(n)
        raise ValueError(f"unknown operation {operation!r}")

    def flush_stats(self) -> None:
        """Let the adapter's backend report its pending statistics: a read, after the interval."""
        time.sleep(STATS_INTERVAL_S)
        self.adapter.fetch_refs(self.repository, ["refs/heads/main"])

    def close(self) -> None:
        # The scratch repositories are not erased: the whole server and its data go next.
        self.adapter.close()


# --- one measurement --------------------------------------------------------------------------------


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


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """As the bench measures: what exists leaves the collector's view for the measured calls."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def timed_calls(prepare: Callable[[], Callable[[], object]], ops: int) -> ClientCost:
    """Make ``ops`` calls of what ``prepare`` returns; only the calls themselves are timed."""
    import resource  # Unix only: imported here, after the command has checked the platform

    wall = cpu = thread_cpu = 0.0
    with frozen_heap():
        usage0 = resource.getrusage(resource.RUSAGE_SELF)
        thread0 = _own_thread()
        start = time.perf_counter()
        for _ in range(ops):
            call = prepare()
            t0, c0, th0 = time.perf_counter(), time.process_time(), time.thread_time()
            call()
            th1, c1, t1 = time.thread_time(), time.process_time(), time.perf_counter()
            wall += t1 - t0
            cpu += c1 - c0
            thread_cpu += th1 - th0
        window = time.perf_counter() - start
        thread1 = _own_thread()
        usage1 = resource.getrusage(resource.RUSAGE_SELF)
    return ClientCost(
        wall,
        window,
        cpu,
        thread_cpu,
        (thread1.wait_ns - thread0.wait_ns) / 1e9,
        usage1.ru_nvcsw - usage0.ru_nvcsw,
    )


def _own_thread() -> ProcCpu:
    read = read_proc(PROC / "thread-self")
    assert read is not None  # our own thread exists
    return read[1]


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


def measure(
    server: WatchedServer, work: Workload, config: str, operation: str, ops: int, warmup: int
) -> Sample:
    """Warm up, then ``ops`` measured calls of ``operation`` between two snapshots of the server."""
    for _ in range(warmup):
        work.prepare(operation)()
    work.flush_stats()
    before = server.snapshot()
    client = timed_calls(lambda: work.prepare(operation), ops)
    loadavg = os.getloadavg()
    work.flush_stats()
    after = server.snapshot()
    return sample_of(config, operation, ops, client, before, after, loadavg, ticks_per_second())


# --- a run ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    """What to measure: calls per cell, warm-up calls, rounds, and the configurations in order."""

    commits: int = DEFAULT_COMMITS
    floor_ops: int = DEFAULT_FLOOR_OPS
    warmup: int = DEFAULT_WARMUP
    repeats: int = DEFAULT_REPEATS
    configs: tuple[str, ...] = tuple(CONFIGS)

    def calls(self, operation: str) -> int:
        return self.commits if operation in COMMIT_PUTS else self.floor_ops

    def describe(self) -> str:
        repeats = "1 repeat" if self.repeats == 1 else f"{self.repeats} repeats"
        return (
            f"{repeats} of {self.commits:,} commits and {self.floor_ops:,} floor calls per cell, "
            f"after {self.warmup:,} warm-up calls"
        )


@dataclass
class Run:
    """A finished run. The server it names is stopped and its data directory deleted."""

    server_version: str
    samples: list[Sample]
    postmaster: int
    data_directory: Path


def run(options: Options, log: Callable[[str], None] = lambda line: print(line, flush=True)) -> Run:
    """Start the private server, measure every operation under every configuration ``repeats``
    times, stop the server and delete its data."""
    with private_server() as server:
        log(
            f"server: PostgreSQL {server.version}, postmaster pid {server.postmaster}; CPUs: "
            f"{os.cpu_count()}; clock ticks/s: {ticks_per_second()}; load average at start: "
            f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
        )
        work = Workload(server.url)
        try:
            samples = measure_all(server, work, options, log)
        finally:
            work.close()
        return Run(server.version, samples, server.postmaster, server.data_directory)


def measure_all(
    server: WatchedServer, work: Workload, options: Options, log: Callable[[str], None]
) -> list[Sample]:
    samples: list[Sample] = []
    for repeat in range(options.repeats):
        for config in options.configs:
            settings = {**CONFIGS[config], **COMMON_SETTINGS}
            server.configure(settings)
            for operation in OPERATIONS:
                sample = measure(server, work, config, operation, options.calls(operation), options.warmup)
                sample.settings = settings
                samples.append(sample)
                log(progress_line(repeat, options.repeats, sample))
    return samples


def progress_line(repeat: int, repeats: int, s: Sample) -> str:
    return (
        f"[{repeat + 1}/{repeats}] {s.config:<14} {s.operation:<15} {s.ops / s.wall_s:8,.0f} ops/s  "
        f"wall {s.per_op_ms(s.wall_s):.3f} ms  client {s.per_op_ms(s.client_cpu_s):.3f} ms  "
        f"server {s.per_op_ms(s.server_cpu_s()):.3f} ms  WAL {s.wal_bytes / s.ops:,.0f} B  "
        f"load {s.loadavg[0]:.2f}"
    )


# --- the table --------------------------------------------------------------------------------------


def spread(values: Sequence[float], fmt: str) -> str:
    """The median, and min-max when the repeats differ; a dash for no value."""
    if not values:
        return "—"
    median = statistics.median(values)
    if len(values) < 2 or min(values) == max(values):
        return format(median, fmt)
    return f"{format(median, fmt)} ({format(min(values), fmt)}-{format(max(values), fmt)})"


def _others(role: str) -> bool:
    return role not in (BACKEND, WALWRITER, MONITOR)


#: The table's rows: title, number format, figure of one sample.
ROWS: Final[tuple[tuple[str, str, Callable[[Sample], float]], ...]] = (
    ("ops/s", ",.0f", lambda s: s.ops / s.wall_s),
    ("wall ms", ".3f", lambda s: s.per_op_ms(s.wall_s)),
    ("client CPU ms", ".3f", lambda s: s.per_op_ms(s.client_cpu_s)),
    ("(calling thread)", ".3f", lambda s: s.per_op_ms(s.client_thread_cpu_s)),
    ("wait ms (wall - client CPU)", ".3f", lambda s: s.per_op_ms(s.wall_s - s.client_cpu_s)),
    ("server CPU ms", ".3f", lambda s: s.per_op_ms(s.server_cpu_s())),
    ("backend", ".3f", lambda s: s.per_op_ms(s.server_cpu_s(lambda role: role == BACKEND))),
    ("walwriter", ".3f", lambda s: s.per_op_ms(s.server_cpu_s(lambda role: role == WALWRITER))),
    ("others", ".3f", lambda s: s.per_op_ms(s.server_cpu_s(_others))),
    ("backend CPU ms (schedstat ns)", ".3f", lambda s: s.per_op_ms(s.server_figure(BACKEND, "run_s"))),
    ("client runqueue wait ms", ".3f", lambda s: s.per_op_ms(s.client_runqueue_s)),
    ("backend runqueue wait ms", ".3f", lambda s: s.per_op_ms(s.server_figure(BACKEND, "runqueue_s"))),
    ("WAL B/op", ",.0f", lambda s: s.wal_bytes / s.ops),
    ("WAL FPI/op", ".2f", lambda s: s.wal["fpi"] / s.ops),
    ("WAL writes/op", ".2f", lambda s: s.wal["writes"] / s.ops),
    ("WAL syncs/op", ".2f", lambda s: s.wal["syncs"] / s.ops),
    ("WAL write+sync ms/op", ".3f", lambda s: (s.wal["write_ms"] + s.wal["sync_ms"]) / s.ops),
    ("statements/op", ".2f", lambda s: s.statements / s.ops),
    ("client waits/op", ".2f", lambda s: s.client_voluntary_switches / s.ops),
    ("load avg 1 min", ".2f", lambda s: s.loadavg[0]),
)


def tables(samples: Sequence[Sample], configs: Sequence[str]) -> str:
    """One Markdown table per operation: a row per figure, a column per configuration."""
    out: list[str] = []
    for operation in OPERATIONS:
        out += [f"### {operation}", "", "| per operation | " + " | ".join(configs) + " |"]
        out.append("|---|" + "---|" * len(configs))
        for title, fmt, figure in ROWS:
            cells = [
                spread([figure(s) for s in samples if s.config == c and s.operation == operation], fmt)
                for c in configs
            ]
            out.append(f"| {title} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out).strip() + "\n"


# --- saved runs -------------------------------------------------------------------------------------


def document(result: Run, options: Options, command: Sequence[str]) -> dict[str, object]:
    """What ``--json`` writes: every sample, and what it was measured on."""
    return {
        "server": f"PostgreSQL {result.server_version}",
        "cpus": os.cpu_count(),
        "command": snippets.portable_command(shareable(command)),
        "machine": snippets.machine(),
        "options": asdict(options),
        "samples": [asdict(s) for s in result.samples],
    }


def load_saved(paths: Sequence[Path]) -> list[Sample]:
    """The samples of saved ``--json`` files, pooled."""
    samples: list[Sample] = []
    for path in paths:
        try:
            saved = json.loads(path.read_text())
            samples += [Sample(**{**s, "loadavg": tuple(s["loadavg"])}) for s in saved["samples"]]
        except FileNotFoundError:
            raise CannotMeasure(f"--report {path}: no such file") from None
        except (ValueError, KeyError, TypeError) as e:
            raise CannotMeasure(
                f"--report {path}: not a file {NAME} --json wrote ({type(e).__name__}: {e}); give one "
                "it wrote"
            ) from None
    return samples


# --- checks before anything starts ------------------------------------------------------------------


def parse_configs(text: str) -> tuple[str, ...]:
    """``--configs``' comma-separated names, in order and without repeats."""
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [name for name in names if name not in CONFIGS]
    if unknown or not names:
        what = (
            f"unknown configuration {', '.join(repr(n) for n in unknown)}" if unknown else "no configuration"
        )
        raise CannotMeasure(
            f"--configs {text!r}: {what}; give a comma-separated list of {', '.join(CONFIGS)}"
        )
    return names


def proc_problem(proc: Path = PROC) -> str | None:
    """Why this machine's /proc cannot give the CPU figures; None if it can."""
    needed = [proc / "self" / "stat", proc / "self" / "schedstat", proc / "thread-self" / "schedstat"]
    missing = [str(path) for path in needed if not path.is_file()]
    if not missing:
        return None
    if not (proc / "self" / "stat").is_file():
        return (
            f"it reads every process's CPU time from Linux's {proc}, and this {platform.system()} "
            f"system has no {missing[0]}; run it on Linux"
        )
    return (
        f"it reads CPU and run-queue times from {proc}/PID/schedstat, and this kernel does not "
        f"provide {', '.join(missing)}; run it on a Linux kernel built with CONFIG_SCHED_INFO "
        "(every distribution kernel is)"
    )


def binaries_problem(bindir: Path | None) -> str | None:
    """Why no private PostgreSQL server can be started here; None if its binaries were found."""
    if bindir is not None:
        return None
    return (
        "it starts a PostgreSQL server of its own, and PostgreSQL's server binaries (initdb, postgres) "
        "are not installed: looked in $LOCHKIT_POSTGRES_BINDIR, /usr/lib/postgresql/*/bin and the PATH. "
        "Install them with 'lochkit servers install postgres' (as root; on Debian it is apt-get install "
        "postgresql), or set LOCHKIT_POSTGRES_BINDIR to the directory holding initdb"
    )


def check_machine() -> None:
    """Refuse, before anything starts, a machine the measurement cannot run on."""
    from provisioning.servers.postgres import server_bindir

    for problem in (proc_problem(), binaries_problem(server_bindir())):
        if problem:
            raise CannotMeasure(f"{NAME} cannot run here: {problem}")


def check_outputs(args: argparse.Namespace) -> None:
    for option in ("--markdown-out", "--json"):
        problem = snippets.out_problem(option, getattr(args, option.lstrip("-").replace("-", "_")))
        if problem:
            raise CannotMeasure(problem)
    if args.report and args.json:
        raise CannotMeasure("--json saves a new run and --report reads saved ones; give one of them")


def shareable(argv: Sequence[str]) -> list[str]:
    """``argv`` with each absolute path outside the current and the home directory reduced to its
    file name. :func:`conformance.snippets.portable_command` shortens the others; a snippet is
    published, and a directory of one machine means nothing on another."""
    roots = (str(Path.cwd()) + os.sep, str(Path.home()) + os.sep)
    words = []
    for word in argv:
        prefix, sep, value = word.partition("=") if word.startswith("--") else ("", "", word)
        if os.path.isabs(value) and not value.startswith(roots):
            value = Path(value).name
        words.append(prefix + sep + value)
    return words


# --- the command ------------------------------------------------------------------------------------


def positive(text: str) -> int:
    return _whole_number(text, 1)


def non_negative(text: str) -> int:
    return _whole_number(text, 0)


def _whole_number(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        value = least - 1
    if value < least:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number of at least {least}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=NAME, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--commits",
        type=positive,
        default=DEFAULT_COMMITS,
        help="measured commits per cell (default %(default)s)",
    )
    parser.add_argument(
        "--floor-ops",
        type=positive,
        default=DEFAULT_FLOOR_OPS,
        help="measured floor calls per cell (default %(default)s)",
    )
    parser.add_argument(
        "--warmup",
        type=non_negative,
        default=DEFAULT_WARMUP,
        help="calls made before each cell's measured ones (default %(default)s)",
    )
    parser.add_argument(
        "--repeats",
        type=positive,
        default=DEFAULT_REPEATS,
        help="rounds over every configuration (default %(default)s)",
    )
    parser.add_argument(
        "--configs",
        default=",".join(CONFIGS),
        metavar="NAME[,NAME...]",
        help=f"configurations to measure, in this order (default: all: {', '.join(CONFIGS)})",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write every sample to FILE")
    snippets.add_option(parser, "the tables")
    parser.add_argument(
        "--report",
        type=Path,
        nargs="+",
        metavar="FILE",
        help="start nothing: print the tables of files --json wrote, their samples pooled",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from persist_spi.sigterm import sigterm_interrupts

    args = build_parser().parse_args(argv)
    command = snippets.invocation(PROGRAM, argv)
    try:
        # SIGTERM ends the run as Ctrl-C does, so the server it started is stopped all the same.
        with sigterm_interrupts():
            return _main(args, command)
    except KeyboardInterrupt:
        print(f"{NAME}: interrupted; the server it started is stopped and its data deleted", file=sys.stderr)
        return INTERRUPTED
    except LochkitError as e:
        print(f"{NAME}: {e}", file=sys.stderr)
        return USAGE if isinstance(e, InputError) else FAILED


def _main(args: argparse.Namespace, command: Sequence[str]) -> int:
    check_outputs(args)
    if args.report:
        samples = load_saved(args.report)
        configs: Sequence[str] = list(dict.fromkeys(s.config for s in samples))
        source = f"the samples of {len(args.report)} saved runs, pooled"
    else:
        options = Options(
            args.commits, args.floor_ops, args.warmup, args.repeats, parse_configs(args.configs)
        )
        check_machine()
        result = run(options)
        samples, configs = result.samples, options.configs
        source = f"PostgreSQL {result.server_version}, {options.describe()}"
        if args.json:
            args.json.write_text(json.dumps(document(result, options, command), indent=1) + "\n")
    text = tables(samples, configs)
    print(text, end="")
    if args.markdown_out:
        snippets.write(args.markdown_out, text, shareable(command), source=source)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
