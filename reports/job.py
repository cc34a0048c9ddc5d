"""The report job: ``lochkit report INPUT... --out DIR`` or, on any Spark deployment,
``spark-submit reports/job.py INPUT... --out DIR`` (also ``python -m reports.job``)."""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from reports.comparison import DEFAULT_THRESHOLD_PCT

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from reports.inputs import Inputs
    from reports.projection import Projection


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="run directories, inventories, conformance reports (.json), or directories holding them; "
        "local paths or any URI Spark reads (file:, hdfs:, s3a:)",
    )
    parser.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="output directory (path or URI) for report.html and tables/",
    )
    parser.add_argument("--master", help="Spark master URL (default local[*]; e.g. spark://HOST:7077)")
    parser.add_argument(
        "--driver-memory",
        help="Spark driver memory when the job starts Spark itself (e.g. 4g; Spark's default 1g)",
    )
    parser.add_argument("--since", help="only inputs from this time on: ISO date/time or an age (7d, 12h)")
    parser.add_argument(
        "--baseline",
        help="run id (directory name): the baseline of its group of like runs (default: each group's "
        "earliest run); runs are only compared within a group",
    )
    parser.add_argument(
        "--regression-threshold",
        type=float,
        default=DEFAULT_THRESHOLD_PCT,
        metavar="PCT",
        help="flag a regression when commits/s falls or p99 rises by more than PCT %% "
        f"(default {DEFAULT_THRESHOLD_PCT:g})",
    )
    parser.add_argument(
        "--project",
        action="append",
        default=[],
        metavar="RATE:RETENTION",
        help="storage projection for a commit rate kept for a retention period, e.g. 10/s:30d (repeatable)",
    )
    parser.add_argument("--title", default="lochkit report", help="page title")
    parser.add_argument("--verbose", action="store_true", help="print the time each table took")


def run(args: argparse.Namespace) -> int:
    from reports.inputs import InputError
    from reports.projection import ProjectionError, parse_projection
    from reports.session import SparkUnavailable, spark_session
    from reports.since import SinceError, parse_since

    try:
        projections = [parse_projection(p) for p in args.project]
        since = parse_since(args.since) if args.since else None
    except (ProjectionError, SinceError) as e:
        print(f"lochkit report: {e}", file=sys.stderr)
        return 2
    if args.regression_threshold < 0:
        print("lochkit report: --regression-threshold must not be negative", file=sys.stderr)
        return 2
    try:
        # Local inputs are found and checked before Spark starts (seconds): a bad one fails at once.
        local = local_inputs(args.inputs)
    except InputError as e:
        print(f"lochkit report: {e}", file=sys.stderr)
        return 2
    try:
        spark = spark_session(args.master, driver_memory=args.driver_memory)
    except SparkUnavailable as e:
        print(f"lochkit report: {e}", file=sys.stderr)
        return 2
    try:
        result = build_report(spark, args, projections, since, local)
    except InputError as e:
        print(f"lochkit report: {e}", file=sys.stderr)
        return 2
    print(result.describe())
    if args.verbose:
        for name, seconds in result.timings.items():
            print(f"  {name:<30} {seconds:8.2f} s")
    return 0


@dataclass
class ReportResult:
    out: str
    tables: list[str]
    timings: dict[str, float]
    seconds: float
    #: What the comparison across runs found, and its rule (empty without runs).
    comparison: list[str] = field(default_factory=list)

    def describe(self) -> str:
        written = (
            f"report written to {self.out}/report.html ({len(self.tables)} tables in {self.out}/tables, "
            f"Parquet and CSV; {self.seconds:.1f} s)"
        )
        return "\n".join([written, *self.comparison])


def comparison_summary(runs_vs_baseline: DataFrame, threshold_pct: float) -> list[str]:
    """The comparison in two lines: runs, groups and regressions found, then the rule."""
    from reports.comparison import rule

    rows = runs_vs_baseline.select("run_id", "group", "regression").collect()
    regressed = sorted(r["run_id"] for r in rows if r["regression"])
    found = f"{len(rows)} run(s) in {len({r['group'] for r in rows})} group(s) of like runs; "
    found += f"{len(regressed)} regression(s)" + (f": {', '.join(regressed)}" if regressed else "")
    return [found, rule(threshold_pct)]


def local_inputs(paths: list[str]) -> Inputs:
    """The inputs under the local ones of ``paths``, checked without Spark; when every path is
    local, an error if they hold nothing to report on."""
    from reports.inputs import LocalFs, discover, is_local, require_some

    inputs = discover(LocalFs(), [p for p in paths if is_local(p)])
    if all(is_local(p) for p in paths):
        require_some(inputs, paths)
    return inputs


def build_report(
    spark: SparkSession,
    args: argparse.Namespace,
    projections: list[Projection],
    since: datetime.datetime | None,
    local: Inputs | None = None,
) -> ReportResult:
    """Discover (the inputs that are not ``local``, already found), compute, write the tables and
    the page."""
    from reports.assemble import assemble
    from reports.compute import Settings, compute
    from reports.inputs import HadoopFs, discover, is_local, require_some
    from reports.page import render
    from reports.table_output import write_table

    started = time.monotonic()
    hfs = HadoopFs(spark)
    inputs = local if local is not None else local_inputs(args.inputs)
    inputs.extend(discover(hfs, [p for p in args.inputs if not is_local(p)]))
    require_some(inputs, args.inputs)
    settings = Settings(
        since=since, baseline=args.baseline, threshold_pct=args.regression_threshold, projections=projections
    )
    computed = compute(spark, inputs, settings)
    out = hfs.qualified(args.out.rstrip("/"))
    tables_uri = f"{out}/tables"
    for name, df in list(computed.tables.items()):
        step = time.monotonic()
        computed.tables[name] = write_table(spark, hfs, df, tables_uri, name)
        computed.timings[name] = time.monotonic() - step
    step = time.monotonic()
    page = assemble(computed, args.title, inputs.describe(), list(computed.tables))
    computed.timings["page"] = time.monotonic() - step
    hfs.write_text(f"{out}/report.html", render(page))
    comparison = (
        comparison_summary(computed.tables["runs_vs_baseline"], settings.threshold_pct)
        if "runs_vs_baseline" in computed.tables
        else []
    )
    return ReportResult(out, list(computed.tables), computed.timings, time.monotonic() - started, comparison)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lochkit report", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
