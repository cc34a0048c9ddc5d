"""Across runs: one row per backend x scenario x policy x lochkit version, and each group's change
against a baseline run (a regression is a drop in commits/s or a rise in p99 latency above the
threshold)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from reports.run_metrics import ACCURACY, NS_PER_MS, with_flags

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

GROUP: Final = ("backend", "scenario", "policy", "lochkit_version")
DEFAULT_THRESHOLD_PCT: Final = 10.0


def comparison(runs_summary: DataFrame, events: DataFrame, runs: DataFrame) -> DataFrame:
    """Per group: runs, commits, mean commits/s over its runs, and p50 / p99 over all its commits."""
    from pyspark.sql import functions as F

    commits = (
        with_flags(events)
        .where(F.col("is_commit") & F.col("ok"))
        .join(runs.select("run_id", *GROUP), "run_id")
    )
    latency = commits.groupBy(*GROUP).agg(
        F.percentile_approx("duration_ns", [0.5, 0.99], ACCURACY).alias("p"),
    )
    per_group = runs_summary.groupBy(*GROUP).agg(
        F.count(F.lit(1)).alias("runs"),
        F.sum("commits").alias("commits"),
        F.avg("commits_per_s").alias("commits_per_s"),
        F.sum("conflicts").alias("conflicts"),
        F.sum("retry_timeouts").alias("retry_timeouts"),
        F.min("jain_index").alias("worst_jain_index"),
        F.sum("starved_writers").alias("starved_writers"),
    )
    return per_group.join(latency, list(GROUP), "left").select(
        *GROUP,
        "runs",
        "commits",
        "commits_per_s",
        (F.col("p")[0] / NS_PER_MS).alias("p50_ms"),
        (F.col("p")[1] / NS_PER_MS).alias("p99_ms"),
        "conflicts",
        "retry_timeouts",
        "worst_jain_index",
        "starved_writers",
    )


def against_baseline(table: DataFrame, baseline: DataFrame, threshold_pct: float) -> DataFrame:
    """``table`` (with ``commits_per_s`` and ``p99_ms``) with the % change of both against the single
    row of ``baseline``, and ``regression`` set where throughput fell or p99 rose by more than
    ``threshold_pct``."""
    from pyspark.sql import functions as F

    base = baseline.select(
        F.col("run_id").alias("baseline_run"),
        F.col("commits_per_s").alias("_base_rate"),
        F.col("p99_ms").alias("_base_p99"),
    )
    rate_change = F.when(F.col("_base_rate") > 0, (F.col("commits_per_s") / F.col("_base_rate") - 1) * 100)
    p99_change = F.when(F.col("_base_p99") > 0, (F.col("p99_ms") / F.col("_base_p99") - 1) * 100)
    return (
        table.crossJoin(F.broadcast(base))
        .withColumn("commits_per_s_change_pct", rate_change)
        .withColumn("p99_change_pct", p99_change)
        .withColumn(
            "regression",
            F.coalesce(F.col("commits_per_s_change_pct") < -threshold_pct, F.lit(False))
            | F.coalesce(F.col("p99_change_pct") > threshold_pct, F.lit(False)),
        )
        .drop("_base_rate", "_base_p99")
    )


def pick_baseline(runs_summary: DataFrame, run_id: str | None) -> DataFrame:
    """The chosen run, or the earliest one when none is chosen (the caller checks it exists)."""
    from pyspark.sql import functions as F

    if run_id is not None:
        return runs_summary.where(F.col("run_id") == run_id).limit(1)
    return runs_summary.orderBy(F.col("started_at").asc_nulls_last(), "run_id").limit(1)
