"""``lochkit shared-db``: a real Nessie server and lochkit on one database (reliability.shared_db
does the work)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

NAME = "shared-db"
HELP = "a real Nessie server and lochkit (layout=nessie) reading and writing one database"
DESCRIPTION = (
    "Starts the database and a real Nessie server on it, then: Nessie writes and lochkit reads the "
    "same (Nessie -> lochkit); lochkit writes, Nessie restarted reads it, continues, and its own "
    "deserialisation reads every stored object (lochkit -> Nessie); lochkit initialises a fresh "
    "database and Nessie starts on it (reverse order); both commit to one branch at once "
    "(concurrent). Prints backend x direction x result with commit counts; exits 1 if any "
    "direction failed. Needs Java 21+ (Nessie's server), Maven (its storage jars) and, for "
    "postgres, PostgreSQL's server binaries (lochkit servers install postgres)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from reliability.shared_db.names import BACKENDS, CONCURRENT_COMMITS, DIRECTIONS

    parser.add_argument(
        "--backend",
        action="append",
        default=[],
        metavar="NAME[,NAME...]",
        help=f"backend(s), repeatable or comma-separated: {', '.join(BACKENDS)} (default all)",
    )
    parser.add_argument(
        "--direction",
        action="append",
        default=[],
        metavar="NAME",
        help=f"run only these directions (repeatable): {'; '.join(DIRECTIONS)}",
    )
    parser.add_argument(
        "--commits",
        type=int,
        default=CONCURRENT_COMMITS,
        help=f"commits each side makes in the concurrent direction (default {CONCURRENT_COMMITS})",
    )
    parser.add_argument(
        "--out", metavar="DIR", help="run directory (default: a new one under .lochkit/shared-db)"
    )


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    import datetime
    import json
    from dataclasses import asdict
    from pathlib import Path

    from reliability.shared_db.names import BACKENDS, DIRECTIONS
    from reliability.shared_db.runner import run_backend, table

    backends = [n.strip() for item in (args.backend or list(BACKENDS)) for n in item.split(",") if n.strip()]
    unknown = sorted(set(backends) - set(BACKENDS))
    directions = args.direction or list(DIRECTIONS)
    unknown_directions = sorted(set(directions) - set(DIRECTIONS))
    if unknown or unknown_directions or args.commits < 1:
        what = (
            f"unknown backend(s) {', '.join(unknown)}; use {', '.join(BACKENDS)}"
            if unknown
            else f"unknown direction(s) {', '.join(unknown_directions)}; use {'; '.join(DIRECTIONS)}"
            if unknown_directions
            else "--commits must be at least 1"
        )
        print(f"lochkit shared-db: {what}", file=sys.stderr)
        return 2
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = Path(args.out) if args.out else Path(".lochkit") / "shared-db" / stamp
    out.mkdir(parents=True, exist_ok=True)
    print(f"lochkit shared-db: {', '.join(backends)}; run in {out}", flush=True)
    outcomes = []
    for backend in dict.fromkeys(backends):
        outcomes += run_backend(backend, out.resolve() / backend, directions, args.commits)
    (out / "results.json").write_text(json.dumps([asdict(o) for o in outcomes], indent=2))
    print()
    print(table(outcomes))
    failed = [o for o in outcomes if not o.ok]
    verdict = f"FAILED: {len(failed)} of {len(outcomes)} directions" if failed else "passed"
    print(f"\n{verdict}; results in {out / 'results.json'}")
    return 1 if failed else 0
