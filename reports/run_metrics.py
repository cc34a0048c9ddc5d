"""Per run and per worker: throughput over time, latency percentiles, attempts, conflicts,
retry timeouts, each writer's share of commits, Jain's fairness index and the starvation flag.

Every function takes and returns DataFrames; nothing here collects rows.

A *commit event* is an event whose action commits (``puts > 0``, or an action named like a commit,
e.g. ``commitMultipleOperations``); a *writer* is a worker with at least one commit event; *commits*
are commit events with outcome ``ok``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

#: A writer below this share of its run's commits is flagged as starved.
STARVATION_SHARE: Final = 0.05
#: A run shorter than this many seconds is cut in this many throughput windows (longer: 1-s windows).
MIN_WINDOWS: Final = 20
#: percentile_approx accuracy: relative error about 1/accuracy, plenty for latency percentiles.
ACCURACY: Final = 10_000
NS_PER_MS: Final = 1_000_000.0
NS_PER_S: Final = 1_000_000_000


def is_commit() -> Column:
    from pyspark.sql import functions as F

    return (F.col("puts") > 0) | F.lower(F.col("action")).contains("commit")


def with_flags(events: DataFrame) -> DataFrame:
    from pyspark.sql import functions as F

    return events.withColumn("is_commit", is_commit()).withColumn("ok", F.col("outcome") == "ok")


def run_bounds(events: DataFrame) -> DataFrame:
    """Per run: first start, last end (ns) and the duration in seconds (at least 1 ns)."""
    from pyspark.sql import functions as F

    return (
        events.groupBy("run_id")
        .agg(
            F.min("start_ns").alias("first_ns"),
            F.max(F.col("start_ns") + F.col("duration_ns")).alias("last_ns"),
        )
        .withColumn("duration_s", F.greatest(F.col("last_ns") - F.col("first_ns"), F.lit(1)) / NS_PER_S)
    )


def throughput(events: DataFrame, bounds: DataFrame) -> DataFrame:
    """Operations and commits per worker in equal time windows since the run's first event: one
    second long for a run of 20 s or more (a little longer, so no window is a partial one), a
    twentieth of the run for a shorter run, so a short run still shows how it went. Windows in which
    a worker did nothing appear with zeros, so a stalled writer shows as a gap."""
    from pyspark.sql import functions as F

    windows = F.greatest(F.lit(MIN_WINDOWS), F.floor(F.col("duration_s"))).cast("int")
    window_ns = F.greatest(F.col("last_ns") - F.col("first_ns"), F.lit(1)) / F.col("windows")
    sized = bounds.select("run_id", "first_ns", "last_ns", windows.alias("windows")).withColumn(
        "window_ns", window_ns
    )
    flagged = with_flags(events).join(sized, "run_id")
    # The last event may start at the very end of the run (a zero-length call): it is in the last window.
    window = F.least(
        F.floor((F.col("start_ns") - F.col("first_ns")) / F.col("window_ns")), F.col("windows") - 1
    )
    counted = flagged.groupBy("run_id", "worker", window.cast("int").alias("window")).agg(
        F.count(F.lit(1)).alias("ops"),
        F.sum((F.col("is_commit") & F.col("ok")).cast("int")).alias("commits"),
        F.sum((F.col("outcome") != "ok").cast("int")).alias("failed"),
    )
    grid = (
        counted.select("run_id", "worker")
        .distinct()
        .join(sized, "run_id")
        .select(
            "run_id",
            "worker",
            "window_ns",
            F.explode(F.sequence(F.lit(0), F.col("windows") - 1)).alias("window"),
        )
    )
    window_s = F.col("window_ns") / NS_PER_S
    return (
        grid.join(counted, ["run_id", "worker", "window"], "left")
        .fillna(0, ["ops", "commits", "failed"])
        .select(
            "run_id",
            "worker",
            "window",
            (F.col("window") * window_s).alias("start_s"),
            window_s.alias("window_s"),
            "ops",
            "commits",
            "failed",
            (F.col("commits") / window_s).alias("commits_per_s"),
        )
        .orderBy("run_id", "worker", "window")
    )


def latency(events: DataFrame) -> DataFrame:
    """Per run, worker and action: successful calls and their p50 / p90 / p99 / max latency in ms."""
    from pyspark.sql import functions as F

    ok = events.where(F.col("outcome") == "ok")
    pct = F.percentile_approx("duration_ns", [0.5, 0.9, 0.99], ACCURACY)
    return (
        ok.groupBy("run_id", "worker", "action")
        .agg(F.count(F.lit(1)).alias("calls"), pct.alias("p"), F.max("duration_ns").alias("max_ns"))
        .select(
            "run_id",
            "worker",
            "action",
            "calls",
            (F.col("p")[0] / NS_PER_MS).alias("p50_ms"),
            (F.col("p")[1] / NS_PER_MS).alias("p90_ms"),
            (F.col("p")[2] / NS_PER_MS).alias("p99_ms"),
            (F.col("max_ns") / NS_PER_MS).alias("max_ms"),
        )
        .orderBy("run_id", "worker", "action")
    )


#: Quantiles of the latency CDF plot: fine in the tail, where runs differ.
CDF_QUANTILES: Final = (
    *(i / 100 for i in range(1, 100)),
    0.995,
    0.999,
)


def latency_cdf(events: DataFrame) -> DataFrame:
    """Per run and writer: the latency (ms) of successful commits at :data:`CDF_QUANTILES`."""
    from pyspark.sql import functions as F

    commits = with_flags(events).where(F.col("is_commit") & F.col("ok"))
    quantiles = list(CDF_QUANTILES)
    grouped = commits.groupBy("run_id", "worker").agg(
        F.percentile_approx("duration_ns", quantiles, ACCURACY).alias("p"),
        F.min("duration_ns").alias("min_ns"),
        F.max("duration_ns").alias("max_ns"),
    )
    points = F.arrays_zip(F.array([F.lit(q) for q in quantiles]).alias("q"), F.col("p").alias("ns"))
    return (
        grouped.select(
            "run_id",
            "worker",
            F.explode(
                F.concat(
                    F.array(F.struct(F.lit(0.0).alias("q"), F.col("min_ns").alias("ns"))),
                    points.cast("array<struct<q: double, ns: long>>"),
                    F.array(F.struct(F.lit(1.0).alias("q"), F.col("max_ns").alias("ns"))),
                )
            ).alias("point"),
        )
        .select(
            "run_id",
            "worker",
            F.col("point.q").alias("quantile"),
            (F.col("point.ns") / NS_PER_MS).alias("latency_ms"),
        )
        .orderBy("run_id", "worker", "quantile")
    )


def attempts_histogram(events: DataFrame) -> DataFrame:
    """Per run and writer: how many commit events took 1, 2, 3... attempts, by outcome."""
    from pyspark.sql import functions as F

    commits = with_flags(events).where("is_commit")
    return (
        commits.groupBy("run_id", "worker", "attempts")
        .agg(
            F.count(F.lit(1)).alias("commit_events"),
            F.sum(F.col("ok").cast("int")).alias("ok"),
        )
        .orderBy("run_id", "worker", "attempts")
    )


def writers(events: DataFrame, bounds: DataFrame) -> DataFrame:
    """One row per run and writer: commits, commits/s, share of the run's commits, conflicts, retry
    timeouts, errors, attempts (mean, max) and commit latency, and the starvation flag."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    commits = with_flags(events).where("is_commit")
    ok = F.col("ok")
    pct = F.percentile_approx(F.when(ok, F.col("duration_ns")), [0.5, 0.9, 0.99], ACCURACY)
    per = commits.groupBy("run_id", "worker").agg(
        F.sum(ok.cast("long")).alias("commits"),
        F.sum((F.col("outcome") == "conflict").cast("long")).alias("conflicts"),
        F.sum((F.col("outcome") == "retry-timeout").cast("long")).alias("retry_timeouts"),
        F.sum((F.col("outcome") == "error").cast("long")).alias("errors"),
        F.avg("attempts").alias("attempts_mean"),
        F.max("attempts").alias("attempts_max"),
        F.sum("puts").alias("puts"),
        pct.alias("p"),
        F.max(F.when(ok, F.col("duration_ns"))).alias("max_ns"),
    )
    run = Window.partitionBy("run_id")
    total = F.sum("commits").over(run)
    share = F.when(total > 0, F.col("commits") / total)
    return (
        per.join(bounds.select("run_id", "duration_s"), "run_id")
        .select(
            "run_id",
            "worker",
            "commits",
            (F.col("commits") / F.col("duration_s")).alias("commits_per_s"),
            share.alias("share"),
            "conflicts",
            "retry_timeouts",
            "errors",
            "attempts_mean",
            "attempts_max",
            (
                F.col("puts")
                / F.greatest(
                    F.col("commits") + F.col("conflicts") + F.col("retry_timeouts") + F.col("errors"),
                    F.lit(1),
                )
            ).alias("puts_per_commit"),
            (F.col("p")[0] / NS_PER_MS).alias("p50_ms"),
            (F.col("p")[1] / NS_PER_MS).alias("p90_ms"),
            (F.col("p")[2] / NS_PER_MS).alias("p99_ms"),
            (F.col("max_ns") / NS_PER_MS).alias("max_ms"),
            F.count(F.lit(1)).over(run).alias("writers_in_run"),
        )
        .withColumn(
            "starved",
            (F.col("writers_in_run") > 1) & (F.coalesce(F.col("share"), F.lit(0.0)) < STARVATION_SHARE)
            | (F.col("retry_timeouts") > 0),
        )
        .drop("writers_in_run")
        .orderBy("run_id", "worker")
    )


def jain_index(values: Column) -> Column:
    """Jain's fairness index of an aggregated column: (sum x)^2 / (n * sum x^2), 1 when all equal,
    1/n when one gets everything; null when every value is 0."""
    from pyspark.sql import functions as F

    squares = F.sum(values * values)
    return F.when(squares > 0, F.pow(F.sum(values), 2) / (F.count(values) * squares))


def runs_summary(runs: DataFrame, events: DataFrame, bounds: DataFrame, per_writer: DataFrame) -> DataFrame:
    """One row per run: what it was (backend, target, scenario, policy, writers, typical puts per
    commit of its writers, version) and how it went."""
    from pyspark.sql import functions as F

    commits = with_flags(events).where(F.col("is_commit") & F.col("ok"))
    latency_all = commits.groupBy("run_id").agg(
        F.percentile_approx("duration_ns", [0.5, 0.99], ACCURACY).alias("p"),
        F.max("duration_ns").alias("max_ns"),
    )
    fairness = per_writer.groupBy("run_id").agg(
        F.count(F.lit(1)).alias("writers"),
        F.sum("commits").alias("commits"),
        F.sum("conflicts").alias("conflicts"),
        F.sum("retry_timeouts").alias("retry_timeouts"),
        F.sum("errors").alias("errors"),
        jain_index(F.col("commits").cast("double")).alias("jain_index"),
        F.sum(F.col("starved").cast("int")).alias("starved_writers"),
    )
    events_count = events.groupBy("run_id").agg(F.count(F.lit(1)).alias("events"))
    # Each writer's typical (median) puts per commit; a run's profile is the distinct ones, "1,10".
    typical = (
        with_flags(events)
        .where("is_commit")
        .groupBy("run_id", "worker")
        .agg(F.percentile_approx("puts", 0.5, ACCURACY).alias("typical_puts"))
    )
    puts_profile = typical.groupBy("run_id").agg(
        F.array_join(F.array_sort(F.collect_set("typical_puts")).cast("array<string>"), ",").alias(
            "puts_per_commit"
        )
    )
    return (
        runs.join(bounds.select("run_id", "duration_s"), "run_id", "left")
        .join(events_count, "run_id", "left")
        .join(fairness, "run_id", "left")
        .join(latency_all, "run_id", "left")
        .join(puts_profile, "run_id", "left")
        .select(
            "run_id",
            "backend",
            "target",
            "scenario",
            "policy",
            F.coalesce("writers", F.lit(0)).alias("writers"),
            F.coalesce("puts_per_commit", F.lit("-")).alias("puts_per_commit"),
            "lochkit_version",
            "started_at",
            "status",
            F.coalesce("events", F.lit(0)).alias("events"),
            "duration_s",
            F.coalesce("commits", F.lit(0)).alias("commits"),
            (F.col("commits") / F.col("duration_s")).alias("commits_per_s"),
            (F.col("p")[0] / NS_PER_MS).alias("p50_ms"),
            (F.col("p")[1] / NS_PER_MS).alias("p99_ms"),
            (F.col("max_ns") / NS_PER_MS).alias("max_ms"),
            F.coalesce("conflicts", F.lit(0)).alias("conflicts"),
            F.coalesce("retry_timeouts", F.lit(0)).alias("retry_timeouts"),
            F.coalesce("errors", F.lit(0)).alias("errors"),
            "jain_index",
            F.coalesce("starved_writers", F.lit(0)).alias("starved_writers"),
        )
        .orderBy("started_at", "run_id")
    )
