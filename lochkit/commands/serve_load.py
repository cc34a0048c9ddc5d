"""``lochkit serve-load``: Nessie's perf simulations against ``lochkit serve`` and the real Nessie
server, each on RocksDB and PostgreSQL, with more and more concurrent users (loadgen.serve_load
does the work)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

NAME = "serve-load"
HELP = "lochkit serve and the real Nessie server under load, side by side (1 to 200 users)"
DESCRIPTION = (
    "Starts each target in turn as a process of its own on a database it creates (lochkit serve "
    "and Nessie's runner jar, on a new RocksDB directory and on a new local PostgreSQL server), "
    "runs one of Nessie's perf simulations ('lochkit scenario NAME --uri ...') against it with "
    "each number of users, samples the server's memory and open connections meanwhile, stops "
    "everything it started, and prints one table: target x users -> requests/s, p50/p99 latency, "
    "errors (5xx, conflicts, other 4xx, no answer), server RSS (peak, end), connections (peak). "
    "Arguments after '--' go to the scenario (e.g. -- --sim-mode SINGLE_BRANCH_RANDOM_TABLE). "
    "Exits 1 when a server answered 5xx or did not answer."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from conformance import snippets
    from loadgen.scenarios import SCENARIOS
    from loadgen.serve_load.servers import TARGETS

    parser.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="NAME[,NAME...]",
        help=f"targets, repeatable or comma-separated: {', '.join(TARGETS)} (default all)",
    )
    parser.add_argument(
        "--users", default="1,10,50,200", metavar="N,N,...", help="numbers of concurrent users, one cell each"
    )
    parser.add_argument(
        "--duration", default="60s", metavar="DURATION", help="how long each cell runs (30s, 2m, PT1M, ...)"
    )
    parser.add_argument(
        "--warmup",
        default="10s",
        help="how long an unrecorded run before each target's cells lasts (a duration; 0 for none)",
    )
    parser.add_argument(
        "--scenario", default="commit-to-branch", choices=sorted(SCENARIOS), help="the perf simulation to run"
    )
    parser.add_argument(
        "--interval", type=float, default=0.5, metavar="SECONDS", help="how often the server is sampled"
    )
    parser.add_argument(
        "--provision",
        default="auto",
        choices=["auto", "external", "testcontainers", "local"],
        help="how to start the PostgreSQL server of the postgres targets (each target gets a new one; "
        "external, a server given by address, is refused)",
    )
    parser.add_argument(
        "--out", metavar="DIR", help="run directory (default: a new one under .lochkit/serve-load)"
    )
    parser.add_argument("--json", metavar="FILE", help="also write the figures and every sample to FILE")
    snippets.add_option(parser, "the table")


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    import datetime
    import shutil
    from pathlib import Path

    from conformance import snippets
    from loadgen.durations import parse_duration
    from loadgen.serve_load.cells import CellFailed
    from loadgen.serve_load.comparison import run_comparison, table
    from loadgen.serve_load.servers import TARGETS
    from persist_spi.errors import LochkitError
    from provisioning.base import ProvisioningFailed

    def usage(message: str) -> int:
        print(f"lochkit serve-load: {message}", file=sys.stderr)
        return 2

    targets = [t.strip() for item in (args.target or list(TARGETS)) for t in item.split(",") if t.strip()]
    unknown = sorted(set(targets) - set(TARGETS))
    if unknown:
        return usage(f"unknown target(s) {', '.join(unknown)}; use {', '.join(TARGETS)}")
    try:
        users = [int(n) for n in args.users.split(",") if n.strip()]
    except ValueError:
        return usage(f"--users {args.users}: give numbers, e.g. 1,10,50")
    try:
        seconds = round(parse_duration(args.duration, "--duration"))
        warmup = round(parse_duration(args.warmup, "--warmup"))
    except ValueError as e:  # names the option and the forms it takes
        return usage(str(e))
    if not users or min(users) < 1:
        return usage("--users needs numbers of at least 1, e.g. 1,10,50,200")
    if seconds < 1:
        return usage("--duration must be at least 1 s")
    if not args.interval > 0:
        return usage("--interval must be more than 0 seconds")
    for option, value in (("--markdown-out", args.markdown_out), ("--json", args.json)):
        problem = snippets.out_problem(option, value)
        if problem:
            return usage(problem)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = Path(args.out) if args.out else Path(".lochkit") / "serve-load" / stamp
    if out.exists() and any(out.iterdir()):
        return usage(f"--out {out}: exists and is not empty; give a new directory")
    out.mkdir(parents=True, exist_ok=True)
    print(
        f"lochkit serve-load: {', '.join(targets)} x {', '.join(map(str, users))} users, {seconds} s each "
        f"({args.scenario}); run in {out}",
        flush=True,
    )
    try:
        comparison = run_comparison(
            list(dict.fromkeys(targets)),
            sorted(set(users)),
            seconds=seconds,
            out=out.resolve(),
            scenario=args.scenario,
            extra=list(passthrough),
            warmup_s=warmup,
            interval_s=args.interval,
            provision_method=args.provision,
            log=lambda line: print(line, flush=True),
        )
    except (CellFailed, ProvisioningFailed, LochkitError) as e:
        print(f"lochkit serve-load: {e}", file=sys.stderr)
        return 1
    text = table(comparison)
    print()
    print(text)
    if args.json:
        shutil.copyfile(out / "results.json", args.json)
    if args.markdown_out:
        source = f"{seconds} s per cell; targets: {', '.join(targets)}"
        snippets.write(args.markdown_out, text, snippets.invocation(["lochkit"]), source=source)
    failures = comparison.failures
    for failure in failures:
        print(f"  server error: {failure}", file=sys.stderr)
    print(f"\n{'FAILED' if failures else 'passed'}; figures and samples in {out / 'results.json'}")
    return 1 if failures else 0
