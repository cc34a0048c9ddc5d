"""All the report's tables, as DataFrames, from the loaded inputs. Nothing is computed until a table
is written or collected."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from reports import comparison as cmp
from reports import conformance_metrics as conf
from reports import run_metrics as rm
from reports import storage_metrics as sm
from reports.inputs import HadoopFs, InputError, Inputs
from reports.loading import load_conformance, load_inventories, load_runs
from reports.projection import Projection

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass
class Settings:
    since: datetime.datetime | None = None
    baseline: str | None = None
    threshold_pct: float = cmp.DEFAULT_THRESHOLD_PCT
    projections: list[Projection] = field(default_factory=list)


@dataclass
class Computed:
    tables: dict[str, DataFrame] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    ignored_reports: list[str] = field(default_factory=list)
    #: The regression threshold the comparison used (the page states its rule).
    threshold_pct: float = cmp.DEFAULT_THRESHOLD_PCT
    #: Seconds spent writing each table (and the page), for --verbose and the benchmark.
    timings: dict[str, float] = field(default_factory=dict)


def compute(spark: SparkSession, inputs: Inputs, settings: Settings) -> Computed:
    out = Computed(threshold_pct=settings.threshold_pct, ignored_reports=[f.name for f in inputs.ignored])
    hfs = HadoopFs(spark)
    if inputs.runs:
        _runs(spark, hfs, inputs, settings, out)
    if inputs.inventories:
        _storage(spark, hfs, inputs, settings, out)
    if inputs.reports:
        _conformance(spark, inputs, settings, out)
    return out


def _runs(spark: SparkSession, hfs: HadoopFs, inputs: Inputs, settings: Settings, out: Computed) -> None:
    from pyspark.sql import functions as F

    runs, events = load_runs(spark, hfs, inputs.runs)
    if settings.since is not None:
        runs = runs.where(F.col("started_at") >= F.lit(settings.since))
        events = events.join(runs.select("run_id"), "run_id", "left_semi")
    bounds = rm.run_bounds(events).cache()
    writers = rm.writers(events, bounds).cache()
    summary = cmp.with_groups(rm.runs_summary(runs, events, bounds, writers)).cache()
    if settings.baseline is not None and summary.where(F.col("run_id") == settings.baseline).isEmpty():
        raise InputError(
            f"--baseline {settings.baseline} is not among the runs; give a run id (its directory name) "
            "from the runs table"
        )
    out.tables.update(
        runs=summary,
        writers=writers,
        throughput=rm.throughput(events, bounds),
        latency=rm.latency(events),
        latency_cdf=rm.latency_cdf(events),
        attempts=rm.attempts_histogram(events),
    )
    vs_baseline = cmp.against_baseline(summary, settings.baseline, settings.threshold_pct)
    out.tables["runs_vs_baseline"] = vs_baseline
    out.tables["comparison_groups"] = cmp.groups(vs_baseline)
    out.tables["comparison"] = cmp.comparison(vs_baseline, events, settings.threshold_pct)


def _storage(spark: SparkSession, hfs: HadoopFs, inputs: Inputs, settings: Settings, out: Computed) -> None:
    from pyspark.sql import functions as F

    inventories, tables = load_inventories(spark, hfs, inputs.inventories)
    if settings.since is not None:
        inventories = inventories.where(F.col("taken_at") >= F.lit(settings.since))
        tables = {
            k: v.join(inventories.select("inventory_id"), "inventory_id", "left_semi")
            for k, v in tables.items()
        }
    objects, links = tables["objects"], tables["links"]
    commits = sm.with_landed(tables["commits"], tables["references"]).cache()
    additions = sm.commit_additions(sm.attributed_objects(objects, commits, links), commits).cache()
    out.tables.update(
        inventories=inventories,
        commit_summary=sm.commit_summary(commits, inventories),
        objects_by_type=sm.objects_by_type(objects, inventories),
        commit_additions=additions,
        per_commit_by_type=sm.per_commit_by_type(additions, commits, inventories),
        index_spills=sm.index_spills(commits, inventories),
        growth=sm.growth(additions),
    )
    for row in sm.unlinked_claims(objects, links).collect():  # one row per older inventory, if any
        out.notes.append(
            f"Inventory {row['inventory_id']} was taken by an older lochkit, which did not link content "
            f"values to their content-id claims: its {row['unique_objects']:,} unique-id objects count as "
            "fixed overhead instead of per commit. Take the inventory again (lochkit inventory) for "
            "per-commit figures and a projection that include them."
        )
    if settings.projections:
        out.tables["projection"] = sm.projection(
            spark, additions, objects, commits, inventories, settings.projections
        )


def _conformance(spark: SparkSession, inputs: Inputs, settings: Settings, out: Computed) -> None:
    from pyspark.sql import functions as F

    counts, not_passed = load_conformance(spark, HadoopFs(spark), inputs.reports)
    if settings.since is not None:
        counts = counts.where(F.col("report_time") >= F.lit(settings.since))
        not_passed = not_passed.where(F.col("report_time") >= F.lit(settings.since))
    counts = counts.cache()
    out.tables.update(
        conformance_matrix=conf.latest_matrix(counts),
        conformance_history=conf.history(counts),
        conformance_fixed_deviations=conf.fixed_deviations(counts, not_passed),
    )
