"""``lochkit torture``: the reliability campaign (reliability.campaign does the work)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reliability.figures import CampaignReport

NAME = "torture"
HELP = "reliability campaign: crashes, server and network faults, linearizability at scale, fuzzing"
DESCRIPTION = (
    "Kills writers at every step of a commit, reference create and delete and at random, restarts "
    "database servers under load, breaks the network through Toxiproxy, checks 8 writers' commits "
    "on one branch for linearizability, and fuzzes every decoder; then prints the figures per "
    "backend. Exits 1 if anything was lost, duplicated, reordered or inconsistent, or a decoder "
    "crashed. --profile ci is the short fixed-seed version CI runs."
)
#: Backends a local campaign can start by itself (the others need --url NAME=URL).
LOCAL_BACKENDS = ("inmemory", "rocksdb", "postgres", "mariadb", "mongodb", "cassandra", "dynamodb")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from reliability.campaign import PROFILES
    from reliability.figures import PARTS

    parser.add_argument(
        "--backend",
        action="append",
        default=[],
        metavar="NAME[,NAME...]",
        help=f"backend(s), repeatable or comma-separated; 'all' = {', '.join(LOCAL_BACKENDS)} "
        "(others, such as bigtable, run when named)",
    )
    parser.add_argument(
        "--profile",
        choices=sorted(PROFILES),
        default="long",
        help="ci: the short fixed-seed campaign CI runs (minutes); long: every crash step, more "
        "restarts, toxics and writers (see docs/reliability.md)",
    )
    parser.add_argument("--only", help=f"comma-separated parts to run: {', '.join(PARTS)} (default all)")
    parser.add_argument(
        "--seed", type=int, default=1, help="seed of every random choice: the same seed, the same run"
    )
    parser.add_argument(
        "--url",
        action="append",
        default=[],
        metavar="NAME=URL",
        help="use your own server for backend NAME (repeatable)",
    )
    parser.add_argument(
        "--allow-existing-data",
        action="store_true",
        help="run on a server given by --url even when it holds repositories lochkit's test and load "
        "commands did not create (refused otherwise); the campaign still writes only into scratch "
        "repositories of its own",
    )
    parser.add_argument(
        "--out", metavar="DIR", help="run directory (default: a new one under .lochkit/torture)"
    )
    parser.add_argument(
        "--markdown-out",
        metavar="FILE",
        help="also write the figures' tables to FILE as a documentation snippet",
    )
    parser.add_argument(
        "--combine",
        action="append",
        default=[],
        metavar="RUN",
        help="run nothing: print (and with --markdown-out write) one table of earlier runs, each a "
        "run directory or its results.json, e.g. a long campaign run one backend at a time; runs "
        "of different profiles, seeds or parts are refused",
    )
    parser.add_argument(
        "--scale-commits",
        type=int,
        help="commits per writer in the linearizability run (default: the profile's)",
    )
    parser.add_argument("--fuzz-inputs", type=int, help="fuzz inputs per decoder (default: the profile's)")
    parser.add_argument("--restarts", type=int, help="server restarts per backend (default: the profile's)")
    parser.add_argument(
        "--toxic-seconds", type=float, help="seconds each toxic lasts (default: the profile's)"
    )
    parser.add_argument(
        "--kill-seconds", type=float, help="seconds of random kills per backend (default: the profile's)"
    )
    parser.add_argument(
        "--lease-seconds",
        type=float,
        help="seconds of kills of the commit lease's holder per backend (default: the profile's)",
    )


def _backends(given: Sequence[str]) -> list[str]:
    names: list[str] = []
    for item in given or ["all"]:
        for name in filter(None, (n.strip() for n in item.split(","))):
            names.extend(LOCAL_BACKENDS if name == "all" else [name])
    return list(dict.fromkeys(names))


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    import dataclasses
    import datetime
    import json
    from pathlib import Path

    from conformance import snippets
    from persist_spi.logic.ownership import ExistingDataRefused
    from persist_spi.registry import UnknownBackend, backend_factory
    from reliability.campaign import PROFILES, guard_servers, run_campaign
    from reliability.figures import PARTS, markdown
    from reliability.writer import quiet_driver_logs

    problem = snippets.out_problem("--markdown-out", args.markdown_out)
    if problem:
        print(f"lochkit torture: {problem}", file=sys.stderr)
        return 2
    if args.combine:
        return _combine(args)
    backends = _backends(args.backend)
    parts = [p.strip() for p in (args.only or ",".join(PARTS)).split(",") if p.strip()]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        print(
            f"lochkit torture: unknown part(s) {', '.join(unknown)}; use {', '.join(PARTS)}", file=sys.stderr
        )
        return 2
    urls: dict[str, str] = {}
    for item in args.url:
        name, sep, url = item.partition("=")
        if not sep or not url:
            print(
                "lochkit torture: --url takes NAME=URL, e.g. --url postgres=postgresql://...", file=sys.stderr
            )
            return 2
        urls[name] = url
    for name in backends:
        try:
            backend_factory(name)
        except UnknownBackend as e:
            print(f"lochkit torture: {e}", file=sys.stderr)
            return 2
    try:
        guard_servers(
            {n: u for n, u in urls.items() if n in backends}, allow_existing_data=args.allow_existing_data
        )
    except ExistingDataRefused as e:
        print(f"lochkit torture: {e}", file=sys.stderr)
        return 2
    changes = {
        "scale_commits": args.scale_commits,
        "fuzz_inputs": args.fuzz_inputs,
        "restarts": args.restarts,
        "toxic_seconds": args.toxic_seconds,
        "kill_seconds": args.kill_seconds,
        "lease_seconds": args.lease_seconds,
    }
    profile = dataclasses.replace(
        PROFILES[args.profile], **{k: v for k, v in changes.items() if v is not None}
    )
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = Path(args.out) if args.out else Path(".lochkit") / "torture" / stamp
    out.mkdir(parents=True, exist_ok=True)
    quiet_driver_logs()
    print(f"lochkit torture, profile {profile.name}, seed {args.seed}: {', '.join(backends)}; run in {out}")
    # lochkit's entry point ends the command on SIGTERM as on Ctrl-C: the servers and Toxiproxy the
    # campaign started are stopped on the way out.
    report = run_campaign(backends, profile, parts=parts, seed=args.seed, work=out, urls=urls, log=_log)
    table = markdown(report)
    (out / "results.json").write_text(json.dumps(report.as_dict(), indent=2))
    (out / "results.md").write_text(table + "\n")
    if args.markdown_out:
        source = f"profile {profile.name}, seed {args.seed}, {report.seconds:.0f} s"
        source += f"; backends: {', '.join(backends)}"
        snippets.write(args.markdown_out, table, snippets.invocation(["lochkit"]), source=source)
    print()
    print(table)
    return _verdict(report, f"figures in {out / 'results.json'}")


def _combine(args: argparse.Namespace) -> int:
    from pathlib import Path

    from conformance import snippets
    from reliability.combine import UnlikeRuns, combine, combined_tables, load_report, results_file

    try:
        runs = [(path, load_report(path)) for path in (results_file(Path(run)) for run in args.combine)]
        report = combine(runs)
    except UnlikeRuns as e:
        print(f"lochkit torture --combine: {e}", file=sys.stderr)
        return 2
    table = combined_tables([r for _, r in runs], report, LOCAL_BACKENDS)
    if args.markdown_out:
        source = f"profile {report.profile}, seed {report.seed}, {len(runs)} runs"
        snippets.write(args.markdown_out, table, snippets.invocation(["lochkit"]), source=source)
    print(table)
    return _verdict(report, f"{len(runs)} runs")


def _verdict(report: CampaignReport, where: str) -> int:
    """Prints the report's problems and its verdict; the exit code (1 when anything went wrong)."""
    problems = report.problems + [f"{b.backend}: {p}" for b in report.backends for p in b.problems]
    problems += [f"fuzz {f.target}: {f.crashes} crash(es)" for f in report.fuzz if f.crashes]
    print()
    if problems:
        print(f"{len(problems)} problem(s):")
        for problem in problems:
            print(f"  - {problem}")
    print(f"{'FAILED' if problems else 'passed'} in {report.seconds:.0f} s; {where}")
    return 1 if problems else 0


def _log(line: str) -> None:
    print(line, flush=True)
