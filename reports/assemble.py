"""Turning the computed tables into the page: only small, final tables are collected (one row per run,
writer, group, object type...); the per-run figure tables are collected for the runs shown."""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Final

from reports import plots
from reports.comparison import KEY, rule
from reports.compute import Computed
from reports.page import Page, RunSection, html_table, matrix_table

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame

#: Runs given a section of their own (the most recent ones); every run stays in the tables.
MAX_RUN_SECTIONS: Final = 20
#: The projection on the page (the rate and retention are in its label; the table has them all).
PROJECTION_COLUMNS: Final = [
    "inventory_id",
    "backend",
    "projection",
    "measured_commits",
    "measured_objects",
    "fixed_objects",
    "objects_per_commit",
    "bytes_per_commit",
    "projected_commits",
    "projected_objects",
    "projected_bytes",
]
#: Points per growth line in the figure (the table keeps every commit).
GROWTH_POINTS: Final = 400

#: The runs, in two tables that each fit a page: what ran, and how it went.
RUN_SETUP_COLUMNS: Final = [
    "run_id",
    "group",
    "backend",
    "target",
    "scenario",
    "policy",
    "writers",
    "puts_per_commit",
    "lochkit_version",
    "started_at",
    "status",
    "duration_s",
    "events",
]
RUN_RESULT_COLUMNS: Final = [
    "run_id",
    "group",
    "commits",
    "commits_per_s",
    "p50_ms",
    "p99_ms",
    "max_ms",
    "conflicts",
    "retry_timeouts",
    "errors",
    "jain_index",
    "starved_writers",
    "commits_per_s_change_pct",
    "p99_change_pct",
]
GROUP_COLUMNS: Final = [
    "group",
    *KEY,
    "runs",
    "baseline_run",
    "regressions",
]
COMPARISON_COLUMNS: Final = [
    "group",
    "lochkit_version",
    "runs",
    "commits",
    "commits_per_s",
    "p50_ms",
    "p99_ms",
    "conflicts",
    "retry_timeouts",
    "worst_jain_index",
    "starved_writers",
    "commits_per_s_change_pct",
    "p99_change_pct",
]
WRITER_COLUMNS: Final = [
    "worker",
    "commits",
    "commits_per_s",
    "share",
    "puts_per_commit",
    "conflicts",
    "retry_timeouts",
    "errors",
    "attempts_mean",
    "attempts_max",
    "p50_ms",
    "p90_ms",
    "p99_ms",
    "max_ms",
]


def _pandas(df: DataFrame) -> pd.DataFrame:
    # Named, not returned directly: where PySpark is not installed (the lint environment) its calls
    # are Any, and strict mypy refuses to return an Any from a typed function.
    frame: pd.DataFrame = df.toPandas()
    return frame


def _sampled_growth(growth: DataFrame) -> DataFrame:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    per = Window.partitionBy("inventory_id")
    n = F.count(F.lit(1)).over(per)
    position = F.row_number().over(per.orderBy("created_us", "commit_id"))
    step = F.greatest(F.lit(1), F.ceil(F.col("_n") / GROWTH_POINTS))
    return (
        growth.withColumn("_n", n)
        .withColumn("_p", position)
        .where(((F.col("_p") % step) == 0) | (F.col("_p") == 1) | (F.col("_p") == F.col("_n")))
        .orderBy("inventory_id", "_p")
    )


def assemble(computed: Computed, title: str, inputs_text: str, table_names: list[str]) -> Page:
    from pyspark.sql import functions as F

    t = computed.tables
    page = Page(
        title=title,
        generated_at=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        inputs=inputs_text,
        notes=list(computed.notes),
        tables=table_names,
    )
    if computed.ignored_reports:
        page.notes.append(
            f"{len(computed.ignored_reports)} JSON file(s) were not conformance reports and were left out: "
            + ", ".join(computed.ignored_reports[:10])
        )
    if "runs" in t:
        runs = _pandas(t["runs_vs_baseline"])
        if len(runs):
            page.runs_setup_table = html_table(runs, RUN_SETUP_COLUMNS)
            page.runs_results_table = html_table(runs, RUN_RESULT_COLUMNS, flag="regression")
            page.comparison_rule = rule(computed.threshold_pct)
            shown = runs.sort_values("started_at", ascending=False).head(MAX_RUN_SECTIONS)["run_id"].tolist()
            if len(runs) > MAX_RUN_SECTIONS:
                page.notes.append(
                    f"{len(runs)} runs: sections and figures for the {MAX_RUN_SECTIONS} most recent; "
                    "every run is in the tables."
                )
            _run_sections(computed, page, sorted(shown))
            page.groups_table = html_table(_pandas(t["comparison_groups"]), GROUP_COLUMNS)
            comparison = _pandas(t["comparison"])
            page.comparison_table = html_table(comparison, COMPARISON_COLUMNS, flag="regression")
            page.comparison_figure = plots.comparison_bars(comparison)
    if "objects_by_type" in t:
        page.storage_tables["Commits"] = html_table(_pandas(t["commit_summary"]))
        page.storage_tables["Objects by type"] = html_table(_pandas(t["objects_by_type"]))
        page.storage_tables["Added per commit, by object type"] = html_table(_pandas(t["per_commit_by_type"]))
        page.storage_tables["Reference-index spills"] = html_table(_pandas(t["index_spills"]))
        growth = _pandas(_sampled_growth(t["growth"]))
        if len(growth):
            page.storage_figures.append(plots.storage_growth(growth))
        if "projection" in t:
            projection = _pandas(t["projection"])
            page.storage_tables["Projection"] = html_table(projection, PROJECTION_COLUMNS)
            if len(projection):
                page.storage_figures.append(plots.projection_bars(projection))
    if "conformance_matrix" in t:
        page.conformance_matrix = matrix_table(_pandas(t["conformance_matrix"]))
        history = _pandas(t["conformance_history"])
        changes = history[history["change"] != ""]
        cols = ["report_id", "report_time", "backend", "area", "cell", "change"]
        page.conformance_changes = html_table(changes, cols) if len(changes) else ""
        fixed = _pandas(t["conformance_fixed_deviations"])
        page.conformance_fixed = html_table(fixed) if len(fixed) else ""
        page.conformance_history = html_table(_pandas(t["conformance_history"].where(F.lit(True))), cols)
    return page


def _run_sections(computed: Computed, page: Page, shown: list[str]) -> None:
    from pyspark.sql import functions as F

    t = computed.tables
    chosen = F.col("run_id").isin(shown)
    writers = _pandas(t["writers"].where(chosen))
    throughput = _pandas(t["throughput"].where(chosen))
    cdf = _pandas(t["latency_cdf"].where(chosen))
    attempts = _pandas(t["attempts"].where(chosen))
    runs = _pandas(t["runs"].where(chosen).orderBy("started_at", "run_id"))
    for run in runs.itertuples():
        rid = str(run.run_id)
        section = RunSection(
            run_id=rid,
            title=(
                f"{rid}: {run.backend}, {run.scenario}, policy {run.policy}, lochkit {run.lochkit_version} "
                f"(group {run.group})"
            ),
            writers_table=html_table(writers[writers["run_id"] == rid], WRITER_COLUMNS, flag="starved"),
        )
        tp = throughput[throughput["run_id"] == rid]
        if len(tp):
            section.figures.append(plots.throughput_timeline(tp, rid))
        c = cdf[cdf["run_id"] == rid]
        if len(c):
            section.figures.append(plots.latency_cdf(c, rid))
        a = attempts[attempts["run_id"] == rid]
        if len(a):
            section.figures.append(plots.attempts_histogram(a, rid))
        page.runs.append(section)
