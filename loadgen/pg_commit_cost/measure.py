"""Timing the calls (:func:`timed_calls`), one cell (:func:`measure`), and a whole run over every
configuration and repeat on the private server (:func:`run`)."""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from loadgen.pg_commit_cost.options import COMMON_SETTINGS, CONFIGS, OPERATIONS, Options
from loadgen.pg_commit_cost.proc import PROC, ProcCpu, read_proc, ticks_per_second
from loadgen.pg_commit_cost.sample import ClientCost, Sample, sample_of
from loadgen.pg_commit_cost.server import WatchedServer, private_server
from loadgen.pg_commit_cost.workload import Workload


def freeze_heap() -> None:
    """As the bench measures: what exists leaves the collector's view before the measured calls.
    Never undone: ``gc.unfreeze`` would also hand back to the collector what the caller froze
    itself (a test session, a benchmark), and a measurement process only goes on measuring."""
    gc.collect()
    gc.freeze()


def timed_calls(prepare: Callable[[], Callable[[], object]], ops: int) -> ClientCost:
    """Make ``ops`` calls of what ``prepare`` returns; only the calls themselves are timed."""
    import resource  # Unix only: imported here, after the command has checked the platform

    wall = cpu = thread_cpu = 0.0
    freeze_heap()
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
