"""The report's figures, drawn with matplotlib from the small collected tables (pandas) and returned
as SVG text to inline in the page. Every axis is labelled with its unit.

Legibility on the page: every figure is drawn at the width it takes there (:data:`FULL_WIDTH_IN` for
one across the page, :data:`HALF_WIDTH_IN` for one of a pair) and shown at that size, never
stretched, so all figure text renders at one size (:data:`FONT_PT`), whatever the figure. Writers
drawn in one figure differ in colour, line style and marker (or hatching), so lines that coincide
stay apart; counts get whole-number ticks; large numbers are written short (12k, 3.4M).

Each ``*_figure`` function returns the matplotlib Figure (tests inspect it); the function without
the suffix returns its SVG.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: Widths at which figures are drawn and shown (CSS pixels are 1/96 in): one across the page's
#: content column (about 1,050 px at most), or one of two side by side.
FULL_WIDTH_IN: Final = 9.0
HALF_WIDTH_IN: Final = 5.2
ROW_HEIGHT_IN: Final = 2.6
#: The one size of all figure text: 12 CSS pixels, a little under the page's table text.
FONT_PT: Final = 9.0
#: matplotlib settings every figure is drawn with.
STYLE: Final[dict[Any, Any]] = {
    "font.size": FONT_PT,
    "axes.titlesize": FONT_PT,
    "axes.labelsize": FONT_PT,
    "xtick.labelsize": FONT_PT,
    "ytick.labelsize": FONT_PT,
    "legend.fontsize": FONT_PT,
    "legend.title_fontsize": FONT_PT,
    "figure.titlesize": FONT_PT,
    "svg.fonttype": "none",  # text stays text: smaller and searchable
}
_LINE_STYLES: Final = ("-", "--", ":", "-.")
_MARKERS: Final = ("o", "s", "^", "D", "v", "P", "X", "*")
_HATCHES: Final = ("", "//", "..", "xx", "\\\\", "++", "oo", "--")
#: Markers per line: enough to tell lines apart, few enough not to hide them.
_MARKS_PER_LINE: Final = 8


@contextlib.contextmanager
def style() -> Iterator[None]:
    """Draw inside this: the figures' one font size and SVG settings."""
    import matplotlib

    matplotlib.use("Agg")
    with matplotlib.rc_context(STYLE):
        yield


def _figure(width: float, height: float = ROW_HEIGHT_IN, cols: int = 1) -> tuple[Figure, list[Axes]]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(1, cols, squeeze=False)
    return fig, list(axes[0])


def to_svg(fig: Figure) -> str:
    buffer = io.StringIO()
    with style():
        fig.savefig(buffer, format="svg")
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # drop the XML prolog and doctype: the SVG sits inside HTML


def writer_style(index: int, writers: int, points: int) -> dict[str, Any]:
    """Colour, line style and marker of the ``index``-th of ``writers`` lines of ``points`` points;
    markers are staggered between lines, so coinciding lines show each other's."""
    step = max(writers, points // _MARKS_PER_LINE)
    return {
        "color": f"C{index % 10}",
        "linestyle": _LINE_STYLES[index % len(_LINE_STYLES)],
        "marker": _MARKERS[index % len(_MARKERS)],
        "markevery": (index * step // writers, step),
        "markersize": 4,
        "linewidth": 1.3,
    }


def compact_number(value: float, _position: object = None) -> str:
    """12, 1.5k, 12k, 3.4M, 2G, 1.2T: tick labels that stay short."""
    for unit, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= size:
            scaled = value / size
            return (
                f"{scaled:.0f}{unit}"
                if scaled == round(scaled) or abs(scaled) >= 10
                else f"{scaled:.1f}{unit}"
            )
    return f"{value:.0f}" if value == round(value) else f"{value:g}"


def compact_bytes(value: float, _position: object = None) -> str:
    return compact_number(value) + "B"


def _whole_number_ticks(ax: Axes, axis: str) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

    target = ax.yaxis if axis == "y" else ax.xaxis
    if target.get_scale() == "log":
        target.set_major_locator(LogLocator(base=10))
        target.set_minor_formatter(NullFormatter())
    else:
        target.set_major_locator(MaxNLocator(integer=True))
    target.set_major_formatter(FuncFormatter(compact_number))


def _log_ticks(ax: Axes, low: float, high: float) -> None:
    """Plain labels on a log x axis (0.5, 1, 2, 10...), none on the minor ticks: left to itself,
    matplotlib labels the minor ticks of a range within a decade as "4x10^-1", in another size."""
    import math

    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    decades = math.log10(high / low) if low > 0 and high > low else 0.0
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if decades <= 2 else (1.0,)))
    ax.xaxis.set_major_formatter(FuncFormatter(compact_number))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _sparse_ticks(ax: Axes, formatter: Callable[[float, object], str]) -> None:
    """At most five x ticks, written short: an axis half the page wide holds five labels like
    "600GB" with room between them (matplotlib's default would crowd in eight)."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(nbins=4, steps=[1, 2, 2.5, 5, 10]))
    ax.xaxis.set_major_formatter(FuncFormatter(formatter))


def _per_writer(frame: pd.DataFrame, column: str = "worker") -> Iterator[tuple[int, int, str, pd.DataFrame]]:
    """Index, count, name and rows of each writer (or inventory) in name order."""
    names = sorted(frame[column].unique())
    for i, name in enumerate(names):
        yield i, len(names), str(name), frame[frame[column] == name]


def _legend(ax: Axes, writers: int) -> None:
    if writers > 1:
        ax.legend(ncols=min(writers, 4), loc="best")


def throughput_timeline_figure(throughput: pd.DataFrame, run_id: str) -> Figure:
    """Commits per second of each writer over the run, window by window (``start_s``,
    ``window_s``, ``commits_per_s``); the time axis spans the run, however short."""
    with style():
        fig, (ax,) = _figure(FULL_WIDTH_IN)
        end = float((throughput["start_s"] + throughput["window_s"]).max())
        for i, writers, worker, rows in _per_writer(throughput.sort_values("start_s")):
            # Steps over each window, closed at the end of the last one.
            x = [*rows["start_s"], float(rows["start_s"].iloc[-1] + rows["window_s"].iloc[-1])]
            y = [*rows["commits_per_s"], float(rows["commits_per_s"].iloc[-1])]
            ax.plot(x, y, label=worker, drawstyle="steps-post", **writer_style(i, writers, len(x)))
        ax.set_xlim(0, end)
        ax.set_xlabel("time since run start (s)")
        ax.set_ylabel("commits / s")
        ax.set_title(f"{run_id}: throughput per writer")
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_formatter(compact_number)
        ax.grid(alpha=0.3)
        _legend(ax, throughput["worker"].nunique())
    return fig


def throughput_timeline(throughput: pd.DataFrame, run_id: str) -> str:
    return to_svg(throughput_timeline_figure(throughput, run_id))


def latency_cdf_figure(cdf: pd.DataFrame, run_id: str) -> Figure:
    """Cumulative distribution of successful commit latency per writer (log-scaled time axis)."""
    with style():
        fig, (ax,) = _figure(HALF_WIDTH_IN)
        for i, writers, worker, rows in _per_writer(cdf):
            ax.plot(
                rows["latency_ms"],
                rows["quantile"] * 100,
                label=worker,
                **writer_style(i, writers, len(rows)),
            )
        ax.set_xscale("log")
        _log_ticks(ax, float(cdf["latency_ms"].min()), float(cdf["latency_ms"].max()))
        ax.set_xlabel("commit latency (ms, log scale)")
        ax.set_ylabel("commits at or below (%)")
        ax.set_ylim(0, 100)
        ax.set_title(f"{run_id}: commit latency CDF")
        ax.grid(alpha=0.3, which="both")
        _legend(ax, cdf["worker"].nunique())
    return fig


def latency_cdf(cdf: pd.DataFrame, run_id: str) -> str:
    return to_svg(latency_cdf_figure(cdf, run_id))


def attempts_histogram_figure(hist: pd.DataFrame, run_id: str) -> Figure:
    """Commit events per number of attempts, one bar group per writer; whole-number ticks."""
    with style():
        fig, (ax,) = _figure(HALF_WIDTH_IN)
        writers = hist["worker"].nunique()
        width = 0.8 / max(writers, 1)
        for i, _, worker, rows in _per_writer(hist):
            ax.bar(
                rows["attempts"] + i * width - 0.4 + width / 2,
                rows["commit_events"],
                width=width,
                label=worker,
                color=f"C{i % 10}",
                hatch=_HATCHES[i % len(_HATCHES)],
                edgecolor="white",
            )
        attempts = sorted(int(a) for a in hist["attempts"].unique())
        ax.set_xlim(attempts[0] - 0.6, attempts[-1] + 0.6)
        if len(attempts) <= 12:
            ax.set_xticks(attempts)
        else:
            _whole_number_ticks(ax, "x")
        counts = hist["commit_events"]
        if counts.max() > 50 * max(counts.min(), 1):  # the tail of retries would be invisible otherwise
            ax.set_yscale("log")
        _whole_number_ticks(ax, "y")
        ax.set_xlabel("attempts per commit")
        ax.set_ylabel("commits (count)")
        ax.set_title(f"{run_id}: attempts per commit")
        ax.grid(alpha=0.3, axis="y")
        _legend(ax, writers)
    return fig


def attempts_histogram(hist: pd.DataFrame, run_id: str) -> str:
    return to_svg(attempts_histogram_figure(hist, run_id))


def comparison_bars_figure(comparison: pd.DataFrame) -> Figure:
    """Commits/s and p99 latency per group of like runs (see the groups table) and lochkit version."""
    labels = [
        f"#{r.group} {r.backend} {r.scenario}, {r.policy}, lochkit {r.lochkit_version}"
        for r in comparison.itertuples()
    ]
    with style():
        fig, (rate, p99) = _figure(FULL_WIDTH_IN, max(ROW_HEIGHT_IN, 0.3 * len(labels) + 0.9), cols=2)
        positions = list(range(len(labels)))
        rate.barh(positions, comparison["commits_per_s"].fillna(0), color="#4c72b0")
        rate.set_yticks(positions, labels)
        rate.set_xlabel("commits / s (mean over runs)")
        p99.barh(positions, comparison["p99_ms"].fillna(0), color="#dd8452")
        p99.set_yticks(positions, [""] * len(labels))
        p99.set_xlabel("p99 commit latency (ms)")
        for ax in (rate, p99):
            ax.invert_yaxis()
            _sparse_ticks(ax, compact_number)
            ax.grid(alpha=0.3, axis="x")
    return fig


def comparison_bars(comparison: pd.DataFrame) -> str:
    return to_svg(comparison_bars_figure(comparison))


def storage_growth_figure(growth: pd.DataFrame) -> Figure:
    """Bytes and objects the commits needed so far, per inventory, over landed commits."""
    with style():
        fig, (size, count) = _figure(FULL_WIDTH_IN, cols=2)
        for i, inventories, inventory, rows in _per_writer(growth, "inventory_id"):
            line = writer_style(i, inventories, len(rows))
            size.plot(rows["commit_number"], rows["bytes"], label=inventory, **line)
            count.plot(rows["commit_number"], rows["objects"], **line)
        size.set_ylabel("stored bytes")
        size.yaxis.set_major_formatter(compact_bytes)
        count.set_ylabel("objects (count)")
        count.yaxis.set_major_formatter(compact_number)
        for ax in (size, count):
            ax.set_xlabel("landed commits")
            _sparse_ticks(ax, compact_number)
            ax.grid(alpha=0.3)
            ax.set_ylim(bottom=0)
        inventories = growth["inventory_id"].nunique()
        if inventories > 1:  # below both plots: it never covers a line or a label
            fig.legend(loc="outside lower center", ncols=min(inventories, 3))
    return fig


def storage_growth(growth: pd.DataFrame) -> str:
    return to_svg(storage_growth_figure(growth))


def projection_bars_figure(projection: pd.DataFrame) -> Figure:
    """Projected bytes and objects per inventory (backend) and --project setting."""
    labels = [f"{r.backend} ({r.inventory_id})\n{r.projection}" for r in projection.itertuples()]
    with style():
        fig, (size, count) = _figure(FULL_WIDTH_IN, max(ROW_HEIGHT_IN, 0.45 * len(labels) + 0.9), cols=2)
        positions = list(range(len(labels)))
        size.barh(positions, projection["projected_bytes"], color="#55a868")
        size.set_yticks(positions, labels)
        size.set_xlabel("projected stored bytes")
        _sparse_ticks(size, compact_bytes)
        count.barh(positions, projection["projected_objects"], color="#8172b3")
        count.set_yticks(positions, [""] * len(labels))
        count.set_xlabel("projected objects (count)")
        _sparse_ticks(count, compact_number)
        for ax in (size, count):
            ax.invert_yaxis()
            ax.grid(alpha=0.3, axis="x")
    return fig


def projection_bars(projection: pd.DataFrame) -> str:
    return to_svg(projection_bars_figure(projection))
