"""Across runs, like with like: runs fall into *groups* by what they measured (:data:`KEY`: backend,
target, command or scenario, policy, writers, puts per commit); a run is compared only with the
baseline of its own group, never with a run of another group. Each group's baseline is its earliest
run, or the ``--baseline`` run in the group that holds it; a group of one run has no comparison.
A regression is a drop in commits/s or a rise in p99 latency beyond the threshold.

The lochkit version is deliberately not part of the key: comparing versions on the same workload
is what the comparison is for."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from reports.run_metrics import ACCURACY, NS_PER_MS, with_flags

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

#: What makes two runs comparable (columns of the runs summary).
KEY: Final = ("backend", "target", "scenario", "policy", "writers", "puts_per_commit")
DEFAULT_THRESHOLD_PCT: Final = 10.0


def rule(threshold_pct: float) -> str:
    """The comparison rule in words, for the page and the command's summary."""
    return (
        "Runs are compared only with runs of the same backend, target, scenario, policy, writers and "
        "puts per commit (a group), against the group's baseline: its earliest run, or the --baseline "
        f"run in the group that holds it. A regression is a fall in commits/s or a rise in p99 latency "
        f"of more than {threshold_pct:g} % against that baseline. A group of one run has no comparison."
    )


def with_groups(summary: DataFrame) -> DataFrame:
    """``summary`` with ``group``: 1, 2, 3... one number per distinct :data:`KEY`, numbered in the
    order of each group's first run."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    first_run = F.min("started_at").over(Window.partitionBy(*KEY))
    # One partition: the summary has one row per run.
    everything = Window.orderBy(F.col("_first").asc_nulls_last(), *[F.col(c).asc_nulls_last() for c in KEY])
    return (
        summary.withColumn("_first", first_run)
        .withColumn("group", F.dense_rank().over(everything))
        .drop("_first")
        .orderBy("started_at", "run_id")
    )


def _changes(
    rate: Column, p99: Column, base_rate: Column, base_p99: Column, threshold_pct: float
) -> dict[str, Column]:
    from pyspark.sql import functions as F

    rate_change = F.when(base_rate > 0, (rate / base_rate - 1) * 100)
    p99_change = F.when(base_p99 > 0, (p99 / base_p99 - 1) * 100)
    regression = F.coalesce(rate_change < -threshold_pct, F.lit(False)) | F.coalesce(
        p99_change > threshold_pct, F.lit(False)
    )
    return {"commits_per_s_change_pct": rate_change, "p99_change_pct": p99_change, "regression": regression}


def against_baseline(grouped: DataFrame, baseline_run: str | None, threshold_pct: float) -> DataFrame:
    """Every run of ``grouped`` (:func:`with_groups`) with its group's baseline run, that run's
    commits/s and p99, the % change of both, and ``regression``. In a group of one run they are
    null (and ``regression`` false)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    chosen = (F.col("run_id") == F.lit(baseline_run)) if baseline_run is not None else F.lit(False)
    ordered = (
        Window.partitionBy("group")
        .orderBy(chosen.desc(), F.col("started_at").asc_nulls_last(), "run_id")
        .rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    )
    compared = F.count(F.lit(1)).over(Window.partitionBy("group")) > 1
    with_base = (
        grouped.withColumn("baseline_run", F.when(compared, F.first("run_id").over(ordered)))
        .withColumn("baseline_commits_per_s", F.when(compared, F.first("commits_per_s").over(ordered)))
        .withColumn("baseline_p99_ms", F.when(compared, F.first("p99_ms").over(ordered)))
    )
    changes = _changes(
        F.col("commits_per_s"),
        F.col("p99_ms"),
        F.col("baseline_commits_per_s"),
        F.col("baseline_p99_ms"),
        threshold_pct,
    )
    return with_base.withColumns(changes).orderBy("started_at", "run_id")


def comparison(runs_vs_baseline: DataFrame, events: DataFrame, threshold_pct: float) -> DataFrame:
    """Per group and lochkit version: runs, commits, mean commits/s over its runs, p50 / p99 over all
    its commits, and their change against the group's baseline run."""
    from pyspark.sql import functions as F

    by = ["group", *KEY, "lochkit_version"]
    runs = runs_vs_baseline.select("run_id", *by)
    commits = with_flags(events).where(F.col("is_commit") & F.col("ok")).join(runs, "run_id")
    latency = commits.groupBy(*by).agg(F.percentile_approx("duration_ns", [0.5, 0.99], ACCURACY).alias("p"))
    per_group = runs_vs_baseline.groupBy(*by).agg(
        F.count(F.lit(1)).alias("runs"),
        F.sum("commits").alias("commits"),
        F.avg("commits_per_s").alias("commits_per_s"),
        F.sum("conflicts").alias("conflicts"),
        F.sum("retry_timeouts").alias("retry_timeouts"),
        F.min("jain_index").alias("worst_jain_index"),
        F.sum("starved_writers").alias("starved_writers"),
    )
    baselines = runs_vs_baseline.groupBy("group").agg(
        F.first("baseline_run", ignorenulls=True).alias("baseline_run"),
        F.first("baseline_commits_per_s", ignorenulls=True).alias("_base_rate"),
        F.first("baseline_p99_ms", ignorenulls=True).alias("_base_p99"),
    )
    table = (
        per_group.join(latency, by, "left")
        .join(baselines, "group")
        .select(
            *by,
            "runs",
            "commits",
            "commits_per_s",
            (F.col("p")[0] / NS_PER_MS).alias("p50_ms"),
            (F.col("p")[1] / NS_PER_MS).alias("p99_ms"),
            "conflicts",
            "retry_timeouts",
            "worst_jain_index",
            "starved_writers",
            "baseline_run",
            "_base_rate",
            "_base_p99",
        )
    )
    changes = _changes(
        F.col("commits_per_s"), F.col("p99_ms"), F.col("_base_rate"), F.col("_base_p99"), threshold_pct
    )
    return table.withColumns(changes).drop("_base_rate", "_base_p99").orderBy("group", "lochkit_version")


def groups(runs_vs_baseline: DataFrame) -> DataFrame:
    """One row per group: what its runs have in common, how many there are, its baseline run and
    how many of its runs regressed."""
    from pyspark.sql import functions as F

    return (
        runs_vs_baseline.groupBy("group", *KEY)
        .agg(
            F.count(F.lit(1)).alias("runs"),
            F.first("baseline_run", ignorenulls=True).alias("baseline_run"),
            F.sum(F.col("regression").cast("int")).alias("regressions"),
        )
        .orderBy("group")
    )
