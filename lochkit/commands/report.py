"""``lochkit report``: the PySpark report job over load runs, inventories and conformance reports."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

NAME = "report"
HELP = "capacity-planning report (HTML + Parquet/CSV tables) from runs, inventories, conformance reports"
DESCRIPTION = (
    "Runs the PySpark report job (local Spark unless --master says otherwise) over load-run "
    "directories, inventories and conformance reports, and writes one self-contained report.html "
    "plus every computed table as Parquet and CSV under --out. The same job runs with "
    "spark-submit: see docs/reports.md."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from reports.job import add_arguments as job_arguments

    job_arguments(parser)


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    if passthrough:
        print(f"lochkit report: unexpected arguments after '--': {' '.join(passthrough)}", file=sys.stderr)
        return 2
    from reports.job import run as run_job

    return run_job(args)
