"""``lochkit report-bench``: how the report job scales. Generates synthetic run directories of
realistic shape (``loadgen.runs.synthetic``), runs the whole report on them on local Spark, and
prints events/s and peak memory for each size. A benchmark, not a test: it prints figures."""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

NAME = "report-bench"
HELP = "time the Spark report on synthetic runs of 1, 10, 100 million events (prints figures)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--events",
        default="1000000,10000000,100000000",
        help="comma-separated event totals, one report each (default 1,10,100 million)",
    )
    parser.add_argument("--runs", type=int, default=10, help="run directories per total (default 10)")
    parser.add_argument("--writers", type=int, default=2, help="writers per run (default 2: 1 and 10 puts)")
    parser.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    parser.add_argument("--driver-memory", default="4g", help="Spark driver memory (default 4g)")
    parser.add_argument(
        "--dir", type=Path, help="where to generate runs (default: a temporary directory, removed)"
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the synthetic runs: the same seed, the same events (default 0)",
    )
    parser.add_argument(
        "--markdown-out",
        metavar="FILE",
        help="also write the figures' table to FILE as a documentation snippet",
    )


def _vm_peak_kib(pid: int | str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def _reset_peak(pid: int | str) -> None:
    # Writing 5 to clear_refs resets the peak resident set size (VmHWM) on Linux.
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/clear_refs").write_text("5")


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    from conformance import snippets
    from loadgen.runs.synthetic import write_runs
    from reports.job import add_arguments as job_arguments
    from reports.job import build_report
    from reports.session import SparkUnavailable, spark_session

    problem = snippets.out_problem("--markdown-out", args.markdown_out)
    if problem:
        print(f"lochkit report-bench: {problem}", file=sys.stderr)
        return 2
    try:
        totals = [int(float(x)) for x in args.events.split(",") if x.strip()]
    except ValueError:
        print(f"lochkit report-bench: --events '{args.events}' is not a list of numbers", file=sys.stderr)
        return 2
    if args.runs < 1 or any(t < args.runs for t in totals):
        print("lochkit report-bench: every --events total must be at least --runs", file=sys.stderr)
        return 2
    root = args.dir or Path(tempfile.mkdtemp(prefix="lochkit-report-bench-"))
    try:
        spark = spark_session(args.master, driver_memory=args.driver_memory)
    except SparkUnavailable as e:
        print(f"lochkit report-bench: {e}", file=sys.stderr)
        return 2
    jvm: Any = spark._jvm
    jvm_pid = jvm.java.lang.ProcessHandle.current().pid()
    memory = jvm.java.lang.management.ManagementFactory
    print(
        f"Spark {spark.version}, master {spark.sparkContext.master}, driver memory {args.driver_memory}, "
        f"{args.runs} runs x {args.writers} writers per total"
    )
    header = (
        f"{'events':>12} {'runs':>5} {'generate s':>11} {'report s':>9} {'events/s':>11} "
        f"{'JVM heap peak':>14} {'JVM RSS peak':>13} {'Python RSS peak':>16}"
    )
    print(header)
    rows = [
        "| events | runs | report s | events/s | JVM heap peak | JVM RSS peak | Python RSS peak |",
        "|---|---|---|---|---|---|---|",
    ]
    try:
        for total in totals:
            where = root / f"events-{total}"
            started = time.monotonic()
            if not where.exists():
                write_runs(where, args.runs, total, seed=args.seed, writers=args.writers)
            generated = time.monotonic() - started
            out = root / f"report-{total}"
            shutil.rmtree(out, ignore_errors=True)
            pools = [p for p in memory.getMemoryPoolMXBeans() if str(p.getType()) == "Heap memory"]
            for pool in pools:
                pool.resetPeakUsage()
            _reset_peak(jvm_pid)
            _reset_peak("self")
            parser = argparse.ArgumentParser()
            job_arguments(parser)
            job_args = parser.parse_args([str(where), "--out", str(out)])
            started = time.monotonic()
            build_report(spark, job_args, [], None)
            seconds = time.monotonic() - started
            heap = sum(int(p.getPeakUsage().getUsed()) for p in pools)
            print(
                f"{total:>12,} {args.runs:>5} {generated:>11.1f} {seconds:>9.1f} {total / seconds:>11,.0f} "
                f"{heap / 2**20:>11,.0f} MiB {_vm_peak_kib(jvm_pid) / 1024:>9,.0f} MiB "
                f"{_vm_peak_kib('self') / 1024:>12,.0f} MiB",
                flush=True,
            )
            rows.append(
                f"| {total:,} | {args.runs} | {seconds:,.0f} | {total / seconds:,.0f} | "
                f"{heap / 2**20:,.0f} MiB | {_vm_peak_kib(jvm_pid) / 1024:,.0f} MiB | "
                f"{_vm_peak_kib('self') / 1024:,.0f} MiB |"
            )
        if args.markdown_out:
            source = f"Spark {spark.version}, master {args.master}, driver memory {args.driver_memory}"
            snippets.write(
                args.markdown_out, "\n".join(rows), snippets.invocation(["lochkit"]), source=source
            )
    finally:
        spark.stop()
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0
