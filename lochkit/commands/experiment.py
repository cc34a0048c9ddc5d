"""``lochkit experiment asymmetric``: N writers on one branch, each with its own commit size, under a
chosen commit policy; prints and stores the per-writer table (see ``docs/asymmetric.md``).

Exit codes: 0 done, 1 the target or a writer failed, 2 a usage error, 5 the target cannot be reached
or opened."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from persist_spi.errors import InputError, UsageError

NAME = "experiment"
HELP = "experiments that print a table: 'asymmetric' (writers with different commit sizes on one branch)"
DESCRIPTION = (
    "Experiments against lochkit's version store in-process (--backend NAME) or a Nessie server "
    "(--backend nessie, --uri URI). 'asymmetric': N writers commit to one branch as fast as they can "
    "for a duration, each with its own puts per commit, as threads or as separate processes; prints "
    "per writer commits/s, share, attempts, retry timeouts and latency."
)
USAGE_ERROR = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from loadgen.durations import FORMS
    from loadgen.targets.opening import add_target_arguments
    from persist_spi.versionstore.policies import POLICY_NAMES

    sub = parser.add_subparsers(dest="experiment", required=True, metavar="EXPERIMENT")
    p = sub.add_parser(
        "asymmetric",
        help="writers with different puts per commit race on one branch",
        description=DESCRIPTION,
    )
    add_target_arguments(p, writes_test_data=True)
    p.add_argument(
        "--duration",
        default="20s",
        help=f"how long the writers commit: {FORMS} (default 20s)",
    )
    p.add_argument(
        "--writers",
        default="1,10",
        metavar="PUTS[,PUTS...]",
        help="one writer per number, committing that many puts per commit (default 1,10); "
        "'8x1' is eight writers of 1 put",
    )
    p.add_argument(
        "--policy",
        choices=POLICY_NAMES,
        help="commit policy (default: the version store's, nessie unless its config says otherwise; "
        "against a Nessie server, the server's own retries); over REST only nessie and coordinated apply",
    )
    p.add_argument(
        "--processes",
        action="store_true",
        help="run each writer in its own process with its own connection (server backends only)",
    )
    p.add_argument(
        "--repeat", type=int, default=1, metavar="N", help="run the experiment N times (default 1)"
    )
    p.add_argument(
        "--json", type=Path, metavar="FILE", help="also write the table as JSON, one object per writer"
    )
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="run directory for run.json and events.parquet (default: a new one under .lochkit/runs/)",
    )
    p.add_argument(
        "--compare-nessie",
        action="store_true",
        help="after each run, the same writers through Nessie's own version store (its published "
        "jars; a Java program built with Maven, Java 17+) on the same database, printed beside "
        "lochkit's table (inmemory, rocksdb, postgres, mongodb)",
    )
    p.add_argument(
        "--metrics-port",
        type=int,
        metavar="PORT",
        help="serve Prometheus metrics on this port while the experiment runs (0: any free port)",
    )


def parse_writers(text: str) -> tuple[int, ...]:
    """``1,10`` -> (1, 10); ``8x1`` -> eight writers of 1 put; combinable (``2x1,10``)."""
    puts: list[int] = []
    for item in text.split(","):
        item = item.strip()
        count, sep, size = item.partition("x")
        try:
            if sep:
                puts.extend([int(size)] * int(count))
            else:
                puts.append(int(item))
        except ValueError:
            raise UsageError(
                f"--writers '{text}': '{item}' is not a number of puts (or COUNTxPUTS)"
            ) from None
    return tuple(puts)


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    from loadgen.experiments.asymmetric import ExperimentError
    from loadgen.nessie_jvm import NessieSideError
    from loadgen.targets.opening import TargetError
    from persist_spi.errors import LochkitError, Unreachable
    from persist_spi.exit_codes import UNAVAILABLE
    from persist_spi.registry import UnknownBackend
    from provisioning.base import ProvisioningFailed

    try:
        return _asymmetric(args)
    except (InputError, UnknownBackend) as e:
        print(f"lochkit experiment {args.experiment}: {e}", file=sys.stderr)
        return USAGE_ERROR
    except Unreachable as e:
        print(f"lochkit experiment {args.experiment}: {e}", file=sys.stderr)
        return UNAVAILABLE
    except (
        ExperimentError,
        LochkitError,
        NessieSideError,
        TargetError,
        ProvisioningFailed,
        OSError,
    ) as e:
        print(f"lochkit experiment {args.experiment}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"lochkit experiment {args.experiment}: interrupted", file=sys.stderr)
        return 130


def _asymmetric(args: argparse.Namespace) -> int:
    from loadgen.durations import parse_duration
    from loadgen.experiments import asymmetric as exp
    from loadgen.metrics import serve_metrics
    from loadgen.runs import RunDirectory, default_run_dir
    from loadgen.runs.run_dir import command_line
    from loadgen.targets.opening import check_target_arguments, open_target

    options = exp.AsymmetricOptions(
        duration_s=parse_duration(args.duration),
        puts=parse_writers(args.writers),
        policy=args.policy,
        processes=args.processes,
    )
    options.validate()
    if args.compare_nessie:
        from loadgen.experiments.nessie_side import check_target

        check_target("nessie" if args.nessie_uri or args.backend == "nessie" else "lochkit", args.backend)
    if args.repeat < 1:
        raise UsageError("--repeat must be at least 1")
    if args.json is not None and not args.json.resolve().parent.is_dir():
        raise UsageError(f"--json {args.json}: its directory does not exist")
    check_target_arguments(args)  # before a server starts or a run directory is made
    metrics = (
        serve_metrics(args.metrics_port, multiprocess=options.processes)
        if args.metrics_port is not None
        else None
    )
    rows: list[dict[str, Any]] = []
    with open_target(args, purpose="load") as target:
        policy = exp.prepare(target, options, metrics.instrument if metrics is not None else None)
        options = dataclasses.replace(options, policy=policy)
        mode = "processes" if options.processes else "threads"
        parameters = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
        path = args.out or default_run_dir("experiment-asymmetric")
        with RunDirectory(
            path, "experiment-asymmetric", command_line(), target.facts(), parameters, None
        ) as run_dir:
            results = []
            started = time.perf_counter()
            with tempfile.TemporaryDirectory(prefix="lochkit-asym-") as scratch:
                for repetition in range(args.repeat):
                    result = exp.run(target, options, run_dir.events, Path(scratch))
                    results.append(result)
                    heading = (
                        f"\nasymmetric: {target.describe()}, policy {options.policy}, {len(options.puts)} "
                        f"writers as {mode}, {options.duration_s:g} s, branch {result.branch}"
                        + (f" (run {repetition + 1} of {args.repeat})" if args.repeat > 1 else "")
                    )
                    exp.render(result, heading, print)
                    common = {
                        "backend": target.backend,
                        "mode": mode,
                        "run": repetition + 1,
                        "duration_s": options.duration_s,
                    }
                    rows += [
                        {**common, "policy": options.policy, "implementation": "lochkit", **row}
                        for row in result.rows()
                    ]
                    if args.compare_nessie:
                        nessie_rows = _nessie_side(target, options, result.branch, Path(scratch))
                        rows += [
                            {
                                **common,
                                "mode": "threads",
                                "policy": "nessie",
                                "implementation": "nessie",
                                **row,
                            }
                            for row in nessie_rows
                            if row["writer"] != "all"
                        ]
            run_dir.finish("ok", _totals(results, time.perf_counter() - started))
        print(f"Run:  {path}", file=sys.stderr)
    if metrics is not None:
        metrics.stop()
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


def _nessie_side(target: Any, options: Any, branch: str, scratch: Path) -> list[dict[str, Any]]:
    from loadgen.experiments.asymmetric import render_rows
    from loadgen.experiments.nessie_side import WARMUP_SECONDS, run_nessie_writers

    print(
        f"\nNessie's side: warming its JVM up for {WARMUP_SECONDS:g} s, then the same writers ...", flush=True
    )
    rows = run_nessie_writers(target, options.puts, options.duration_s, f"{branch}-nessie", scratch)
    heading = (
        f"asymmetric, Nessie's own version store (its jars, default retries, object cache) on "
        f"{target.backend}: {len(options.puts)} writers as threads of one JVM, {options.duration_s:g} s"
    )
    render_rows(rows, heading, print)
    return rows


def _totals(results: list[Any], elapsed_s: float) -> dict[str, Any]:
    """run.json's totals (docs/run-format.md) plus the experiment's tables."""
    from loadgen.experiments.asymmetric import COMMIT_ACTION

    last = results[-1]
    total = last.total_row()
    commits = sum(r.commits for r in results)
    latency = {"p50_ms": total["p50_ms"], "p99_ms": total["p99_ms"], "max_ms": total["max_ms"]}
    return {
        "elapsed_s": round(elapsed_s, 3),
        "commits": commits,
        "commits_per_s": round(commits / sum(r.duration_s for r in results), 1),
        "conflicts": sum(r.total_row()["conflicts"] for r in results),
        "errors": sum(r.total_row()["errors"] + r.total_row()["timeouts"] for r in results),
        "calls": sum(w.attempts.get_total_count() + w.errors for r in results for w in r.writers),
        "commit_latency": latency,
        "latency_by_action": {COMMIT_ACTION: latency},
        "experiment": [{"branch": r.branch, "writers": r.rows(), "total": r.total_row()} for r in results],
    }
