"""``lochkit spark-cluster start|stop|status``: a local Spark standalone master and worker, to run
``lochkit report --master spark://...`` the way a cluster runs it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

NAME = "spark-cluster"
HELP = "start or stop a local Spark standalone master and worker (for lochkit report --master)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["start", "stop", "status"])
    parser.add_argument("--cores", type=int, default=2, help="worker cores (default 2)")
    parser.add_argument("--memory", default="2g", help="worker memory, Spark syntax (default 2g)")
    parser.add_argument(
        "--state-dir",
        type=Path,
        default=None,
        help="where pids and logs live (default .lochkit/spark-cluster)",
    )


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    from reports.standalone import DEFAULT_STATE, ClusterError, load, start, stop

    state = args.state_dir or DEFAULT_STATE
    try:
        if args.action == "start":
            cluster = start(state, cores=args.cores, memory=args.memory)
            print(f"master {cluster.master_url} (web UI {cluster.master_ui}); logs in {state}")
            print(f"run: lochkit report INPUT... --out DIR --master {cluster.master_url}")
            return 0
        if args.action == "stop":
            print("stopped" if stop(state) else f"no cluster recorded in {state}")
            return 0
        recorded = load(state)
        print(f"master {recorded.master_url} (web UI {recorded.master_ui})" if recorded else "not running")
        return 0
    except ClusterError as e:
        print(f"lochkit spark-cluster: {e}", file=sys.stderr)
        return 1
