"""The report's figures, drawn with matplotlib from the small collected tables (pandas) and returned
as SVG text to inline in the page. Every axis is labelled with its unit."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

WIDTH_IN: Final = 7.5  # fits an A4 / letter page with margins, and a laptop screen
ROW_HEIGHT_IN: Final = 2.4


def _figure(rows: int = 1, cols: int = 1, height: float = ROW_HEIGHT_IN) -> tuple[Figure, list]:  # type: ignore[type-arg]
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH_IN, height * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    return fig, [ax for row in axes for ax in row]


def to_svg(fig: Figure) -> str:
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # text stays text: smaller and searchable
        fig.savefig(buffer, format="svg")
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # drop the XML prolog and doctype: the SVG sits inside HTML


def throughput_timeline(throughput: pd.DataFrame, run_id: str) -> str:
    """Commits per second of each writer over the run (1-second windows)."""
    from matplotlib.ticker import MaxNLocator

    fig, (ax,) = _figure()
    few = throughput["second"].nunique() < 5  # a short run: points, or a step line would not show
    for worker, rows in throughput.groupby("worker", sort=True):
        ax.plot(
            rows["second"],
            rows["commits"],
            label=str(worker),
            linewidth=1.2,
            drawstyle="default" if few else "steps-post",
            marker="o" if few else None,
        )
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("time since run start (s)")
    ax.set_ylabel("commits / s")
    ax.set_title(f"{run_id}: throughput per writer", fontsize=10)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    if throughput["worker"].nunique() > 1:
        ax.legend(fontsize=8, ncols=4)
    return to_svg(fig)


def latency_cdf(cdf: pd.DataFrame, run_id: str) -> str:
    """Cumulative distribution of successful commit latency per writer (log-scaled time axis)."""
    fig, (ax,) = _figure()
    for worker, rows in cdf.groupby("worker", sort=True):
        ax.plot(rows["latency_ms"], rows["quantile"] * 100, label=str(worker), linewidth=1.2)
    ax.set_xscale("log")
    ax.set_xlabel("commit latency (ms, log scale)")
    ax.set_ylabel("commits at or below (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"{run_id}: commit latency CDF", fontsize=10)
    ax.grid(alpha=0.3, which="both")
    if cdf["worker"].nunique() > 1:
        ax.legend(fontsize=8, ncols=4)
    return to_svg(fig)


def attempts_histogram(hist: pd.DataFrame, run_id: str) -> str:
    """Commit events per number of attempts, one bar group per writer."""
    from matplotlib.ticker import MaxNLocator

    fig, (ax,) = _figure()
    workers = sorted(hist["worker"].unique())
    width = 0.8 / max(len(workers), 1)
    for i, worker in enumerate(workers):
        rows = hist[hist["worker"] == worker]
        ax.bar(
            rows["attempts"] + i * width - 0.4 + width / 2,
            rows["commit_events"],
            width=width,
            label=str(worker),
        )
    ax.set_xlabel("attempts per commit")
    ax.set_ylabel("commits (count)")
    ax.set_title(f"{run_id}: attempts per commit", fontsize=10)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    counts = hist["commit_events"]
    if counts.max() > 50 * max(counts.min(), 1):  # the tail of retries would be invisible otherwise
        ax.set_yscale("log")
    ax.grid(alpha=0.3, axis="y")
    if len(workers) > 1:
        ax.legend(fontsize=8, ncols=4)
    return to_svg(fig)


def comparison_bars(comparison: pd.DataFrame) -> str:
    """Commits/s and p99 latency per group of like runs (see the groups table) and lochkit version."""
    labels = [
        f"#{r.group} {r.backend} {r.scenario}, {r.policy}, lochkit {r.lochkit_version}"
        for r in comparison.itertuples()
    ]
    height = max(ROW_HEIGHT_IN, 0.35 * len(labels) + 1.0)
    fig, (rate, p99) = _figure(1, 2, height=height)
    positions = range(len(labels))
    rate.barh(positions, comparison["commits_per_s"].fillna(0), color="#4c72b0")
    rate.set_yticks(list(positions), labels, fontsize=7)
    rate.set_xlabel("commits / s (mean over runs)")
    rate.invert_yaxis()
    p99.barh(positions, comparison["p99_ms"].fillna(0), color="#dd8452")
    p99.set_yticks(list(positions), [""] * len(labels))
    p99.set_xlabel("p99 commit latency (ms)")
    p99.invert_yaxis()
    for ax in (rate, p99):
        ax.grid(alpha=0.3, axis="x")
    return to_svg(fig)


def storage_growth(growth: pd.DataFrame) -> str:
    """Bytes and objects the commits needed so far, per inventory, over commits."""
    fig, (size, count) = _figure(1, 2)
    for inventory, rows in growth.groupby("inventory_id", sort=True):
        size.plot(rows["commit_number"], rows["bytes"] / 1e6, label=str(inventory), linewidth=1.2)
        count.plot(rows["commit_number"], rows["objects"], label=str(inventory), linewidth=1.2)
    size.set_xlabel("commits")
    size.set_ylabel("stored bytes (MB)")
    count.set_xlabel("commits")
    count.set_ylabel("objects (count)")
    for ax in (size, count):
        ax.grid(alpha=0.3)
        ax.set_ylim(bottom=0)
    if growth["inventory_id"].nunique() > 1:
        size.legend(fontsize=7)
    return to_svg(fig)


def projection_bars(projection: pd.DataFrame) -> str:
    """Projected bytes per inventory (backend) and --project setting."""
    labels = [f"{r.backend} ({r.inventory_id})\n{r.projection}" for r in projection.itertuples()]
    height = max(ROW_HEIGHT_IN, 0.45 * len(labels) + 1.0)
    fig, (size, count) = _figure(1, 2, height=height)
    positions = range(len(labels))
    size.barh(positions, projection["projected_bytes"] / 1e9, color="#55a868")
    size.set_yticks(list(positions), labels, fontsize=7)
    size.set_xlabel("projected stored bytes (GB)")
    size.invert_yaxis()
    count.barh(positions, projection["projected_objects"] / 1e6, color="#8172b3")
    count.set_yticks(list(positions), [""] * len(labels))
    count.set_xlabel("projected objects (millions)")
    count.invert_yaxis()
    for ax in (size, count):
        ax.grid(alpha=0.3, axis="x")
    return to_svg(fig)
