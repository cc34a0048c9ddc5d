"""The report's figures on the data that made them hard to read: a run of a third of a second,
writers whose lines coincide, a single attempts value, large counts and long names. Checked on the
drawn matplotlib figures: axis ranges, line styles, tick positions and where every text lands."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from reports import plots


def _drawn_texts(fig: Figure) -> list[Text]:
    """Every text the figure shows: titles, axis labels and their offsets ("1e7"), legend entries,
    and the tick labels of the ticks inside each axis's view (the figure is drawn first, as the
    page's SVG is)."""
    with plots.style():
        FigureCanvasAgg(fig).draw()
    texts: list[Text] = []
    for ax in fig.axes:
        texts += [
            ax.title,
            ax.xaxis.label,
            ax.yaxis.label,
            ax.xaxis.get_offset_text(),
            ax.yaxis.get_offset_text(),
        ]
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            slack = max(abs(low), abs(high)) * 1e-9
            for locs, labels in (
                (axis.get_majorticklocs(), axis.get_majorticklabels()),
                (axis.get_minorticklocs(), axis.get_minorticklabels()),
            ):
                texts += [
                    label
                    for loc, label in zip(locs, labels, strict=False)
                    if low - slack <= loc <= high + slack
                ]
        legend = ax.get_legend()
        if legend is not None:
            texts += legend.get_texts()
    for legend in fig.legends:
        texts += legend.get_texts()
    return [t for t in texts if t.get_visible() and t.get_text().strip()]


#: Texts closer than this (pixels) run into each other ("100GB200GB").
MIN_GAP_PX = 3


def _overlaps(fig: Figure) -> list[tuple[str, str]]:
    """Pairs of texts that overlap or nearly touch."""
    texts = _drawn_texts(fig)
    renderer = FigureCanvasAgg(fig).get_renderer()
    found = []
    for a, b in itertools.combinations(texts, 2):
        box_a, box_b = a.get_window_extent(renderer), b.get_window_extent(renderer)
        # Labels in a row (tick labels) need a gap; an axis label beside its tick labels only must
        # not cover them (its box is loose).
        gap = MIN_GAP_PX if a.get_rotation() == b.get_rotation() else 0
        width = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
        height = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
        if width > -gap and height > -gap:
            found.append((a.get_text(), b.get_text()))
    return found


def _throughput(
    duration_s: float, writers: list[str], windows: int = 20, rate: float = 580.0
) -> pd.DataFrame:
    window = duration_s / windows
    return pd.DataFrame(
        [
            {"worker": w, "window": i, "start_s": i * window, "window_s": window, "commits_per_s": rate}
            for w in writers
            for i in range(windows)
        ]
    )


def test_a_run_of_a_third_of_a_second_gets_a_time_axis_of_its_own_length() -> None:
    fig = plots.throughput_timeline_figure(_throughput(0.34, ["main"]), "short")
    low, high = fig.axes[0].get_xlim()
    assert low == 0.0
    assert high == pytest.approx(0.34)
    (line,) = fig.axes[0].get_lines()
    assert len(np.asarray(line.get_xdata())) == 21  # 20 windows, closed at the run's end


def test_writers_whose_lines_coincide_stay_apart() -> None:
    """Two writers with the same numbers (the coordinated policy shares commits evenly)."""
    same = _throughput(3.0, ["w0-1put", "w1-10put"])
    cdf = pd.DataFrame(
        [
            {"worker": w, "quantile": q / 10, "latency_ms": 1.0 + q}
            for w in ("w0-1put", "w1-10put")
            for q in range(11)
        ]
    )
    for fig in (plots.throughput_timeline_figure(same, "r"), plots.latency_cdf_figure(cdf, "r")):
        first, second = fig.axes[0].get_lines()
        assert first.get_linestyle() != second.get_linestyle()
        assert first.get_marker() != second.get_marker()
        assert first.get_color() != second.get_color()
        assert first.get_markevery() != second.get_markevery()  # markers of one never hide the other's


@pytest.mark.parametrize(
    "rows",
    [
        [("main", 1, 200)],  # every commit at the first attempt
        [("w0", 1, 2), ("w1", 1, 1), ("w1", 2, 1)],  # a handful of commits
        [("w0", 1, 912), ("w0", 2, 40), ("w0", 5, 1), ("w1", 1, 368), ("w1", 3, 4)],  # log scale
    ],
)
def test_attempt_histograms_have_whole_number_ticks(rows: list[tuple[str, int, int]]) -> None:
    hist = pd.DataFrame(rows, columns=["worker", "attempts", "commit_events"])
    fig = plots.attempts_histogram_figure(hist, "r")
    _drawn_texts(fig)
    ax = fig.axes[0]
    for axis in (ax.xaxis, ax.yaxis):
        low, high = sorted(axis.get_view_interval())
        shown = [loc for loc in axis.get_majorticklocs() if low <= loc <= high]
        assert shown, "no tick at all"
        assert all(float(loc).is_integer() for loc in shown), shown


LONG = [f"2026112{i}T005005Z-rocksdb-inventory-of-a-long-name" for i in range(3)]

FIGURES: dict[str, Callable[[], Figure]] = {
    "growth": lambda: plots.storage_growth_figure(
        pd.DataFrame(
            [
                {
                    "inventory_id": inv,
                    "commit_number": n,
                    "objects": n * 9.4 * (i + 1),
                    "bytes": n * 26_000.0 * (i + 1),
                }
                for i, inv in enumerate(LONG)
                for n in range(0, 2_000_001, 100_000)
            ]
        )
    ),
    "projection": lambda: plots.projection_bars_figure(
        pd.DataFrame(
            [
                {
                    "backend": "postgres",
                    "inventory_id": inv,
                    "projection": p,
                    "projected_bytes": 6.7e11,
                    "projected_objects": 2.4e8,
                }
                for inv in LONG
                for p in ("10/s:30d", "100/s:1y")
            ]
        )
    ),
    "projection, short names": lambda: plots.projection_bars_figure(
        pd.DataFrame(
            [
                {
                    "backend": "rocksdb",
                    "inventory_id": f"20261127T00500{i}Z-rocksdb",
                    "projection": "10/s:30d",
                    "projected_bytes": 7.1e11 * i,
                    "projected_objects": 1.4e8 * i,
                }
                for i in (1, 2)
            ]
        )
    ),
    "comparison": lambda: plots.comparison_bars_figure(
        pd.DataFrame(
            [
                {
                    "group": g,
                    "backend": "cockroachdb",
                    "scenario": "experiment-asymmetric",
                    "policy": "coordinated",
                    "lochkit_version": "0.1.0",
                    "commits_per_s": 12_345.0,
                    "p99_ms": 1234.5,
                }
                for g in range(1, 7)
            ]
        )
    ),
    # Within one decade: a log axis would label its minor ticks ("4x10^-1") in another size.
    "latency CDF, narrow": lambda: plots.latency_cdf_figure(
        pd.DataFrame(
            [
                {"worker": w, "quantile": q / 20, "latency_ms": 0.3 + 0.12 * q}
                for w in ("a", "b")
                for q in range(21)
            ]
        ),
        "r",
    ),
    "latency CDF, wide": lambda: plots.latency_cdf_figure(
        pd.DataFrame([{"worker": "a", "quantile": q / 20, "latency_ms": 0.05 * 2.0**q} for q in range(21)]),
        "r",
    ),
    "timeline": lambda: plots.throughput_timeline_figure(
        _throughput(3600.0, [f"user-{i}" for i in range(8)], windows=3600, rate=12_000.0), "r"
    ),
}


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_no_text_of_a_figure_overlaps_another(name: str) -> None:
    assert _overlaps(FIGURES[name]()) == []


def test_every_figure_text_has_the_same_size() -> None:
    sizes = {t.get_fontsize() for make in FIGURES.values() for t in _drawn_texts(make())}
    assert sizes == {plots.FONT_PT}


def test_the_growth_legend_covers_no_plot() -> None:
    fig = FIGURES["growth"]()
    _drawn_texts(fig)
    renderer = FigureCanvasAgg(fig).get_renderer()
    legends = [*fig.legends, *(legend for ax in fig.axes if (legend := ax.get_legend()) is not None)]
    assert len(legends) == 1
    legend_box = legends[0].get_window_extent(renderer)
    for ax in fig.axes:
        assert not legend_box.overlaps(ax.get_window_extent(renderer))
