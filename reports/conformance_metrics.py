"""From conformance reports: the backend x suite-area matrix of the latest report per backend, the
history across reports, and what changed: new failures (an area with failures or errors whose
previous report for that backend had none), fixed areas, and fixed deviations (a test that was an
expected failure in the previous report and is not any more)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

#: The per-area counts every table carries, in the order they are shown.
COUNTS: Final = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")


def _order() -> list[Column]:
    from pyspark.sql import functions as F

    return [F.col("report_time").asc(), F.col("report_id").asc()]


def cell_text() -> Column:
    """``475 + 3s + 1x, 2 failed``: passed, then skipped (s) and declared deviations (x), then what
    went wrong."""
    from pyspark.sql import functions as F

    def part(column: str, suffix: str) -> Column:
        return F.when(F.col(column) > 0, F.concat(F.lit(" + "), F.col(column).cast("string"), F.lit(suffix)))

    def bad(column: str, label: str) -> Column:
        return F.when(F.col(column) > 0, F.concat(F.lit(", "), F.col(column).cast("string"), F.lit(label)))

    return F.concat(
        F.col("passed").cast("string"),
        F.coalesce(part("skipped", "s"), F.lit("")),
        F.coalesce(part("xfailed", "x"), F.lit("")),
        F.coalesce(bad("failed", " failed"), F.lit("")),
        F.coalesce(bad("error", " errors"), F.lit("")),
        F.coalesce(bad("xpassed", " fixed deviations (xpassed)"), F.lit("")),
    )


def history(counts: DataFrame) -> DataFrame:
    """Every (report, backend, area) in time order, with the previous report's failures and the
    change: ``new failure``, ``fixed`` or empty."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    broken = F.col("failed") + F.col("error")
    before = Window.partitionBy("backend", "area").orderBy(*_order())
    with_prev = counts.withColumn("broken", broken).withColumn(
        "previous_broken", F.lag("broken").over(before)
    )
    change = (
        F.when((F.col("broken") > 0) & F.coalesce(F.col("previous_broken") == 0, F.lit(True)), "new failure")
        .when((F.col("broken") == 0) & (F.col("previous_broken") > 0), "fixed")
        .otherwise("")
    )
    return (
        with_prev.withColumn("cell", cell_text())
        .withColumn("change", change)
        .select(
            "report_id",
            "report_time",
            "backend",
            "area",
            *COUNTS,
            "cell",
            "change",
        )
        .orderBy("report_time", "report_id", "backend", "area")
    )


def latest_matrix(counts: DataFrame) -> DataFrame:
    """The latest report's cell per backend and area (long form: backend, area, cell, broken)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    newest = Window.partitionBy("backend").orderBy(
        *[c.desc() for c in (F.col("report_time"), F.col("report_id"))]
    )
    latest_report = (
        counts.select("backend", "report_id", "report_time")
        .distinct()
        .withColumn("_n", F.row_number().over(newest))
        .where(F.col("_n") == 1)
        .drop("_n", "report_time")
    )
    return (
        counts.join(latest_report, ["backend", "report_id"])
        .withColumn("cell", cell_text())
        .select(
            "backend",
            "area",
            "report_id",
            *COUNTS,
            "cell",
        )
        .orderBy("backend", "area")
    )


def fixed_deviations(counts: DataFrame, not_passed: DataFrame) -> DataFrame:
    """Tests xfailed (a declared deviation) in one report of a backend and not in its next one."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    reports = counts.select("backend", "report_id", "report_time").distinct()
    order = Window.partitionBy("backend").orderBy(*_order())
    pairs = reports.withColumn("next_report", F.lead("report_id").over(order)).where(
        F.col("next_report").isNotNull()
    )
    deviations = not_passed.where(F.col("outcome") == "xfailed").select(
        "backend", "report_id", "area", "test_id", "reason"
    )
    later = not_passed.where(F.col("outcome") == "xfailed").select(
        "backend", F.col("report_id").alias("next_report"), "test_id", F.lit(True).alias("_still")
    )
    return (
        deviations.join(pairs.drop("report_time"), ["backend", "report_id"])
        .join(later, ["backend", "next_report", "test_id"], "left")
        .where(F.col("_still").isNull())
        .select(
            "backend",
            "area",
            "test_id",
            "reason",
            F.col("report_id").alias("deviation_in"),
            F.col("next_report").alias("fixed_in"),
        )
        .orderBy("backend", "area", "test_id")
    )
