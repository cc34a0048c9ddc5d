"""The one self-contained HTML page: Jinja2 renders ``templates/report.html.j2`` with the collected
tables (as HTML tables whose headers carry units) and the inline SVG figures."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import pandas as pd

#: Column name -> header shown on the page (with its unit).
HEADERS: Final = {
    "run_id": "run",
    "puts_per_commit": "puts/commit",
    "lochkit_version": "lochkit",
    "started_at": "started (UTC)",
    "duration_s": "duration (s)",
    "events": "events",
    "commits_per_s": "commits/s",
    "p50_ms": "p50 (ms)",
    "p90_ms": "p90 (ms)",
    "p99_ms": "p99 (ms)",
    "max_ms": "max (ms)",
    "share": "share of commits (%)",
    "retry_timeouts": "retry timeouts",
    "attempts_mean": "attempts mean",
    "attempts_max": "attempts max",
    "jain_index": "Jain's index",
    "worst_jain_index": "worst Jain's index",
    "starved_writers": "starved writers",
    "commits_per_s_change_pct": "commits/s vs baseline (%)",
    "p99_change_pct": "p99 vs baseline (%)",
    "baseline_run": "baseline run",
    "obj_type": "object type",
    "bytes": "bytes (B)",
    "mean_bytes": "mean size (B)",
    "max_bytes": "max size (B)",
    "objects_per_commit": "objects/commit",
    "bytes_per_commit": "bytes/commit (B)",
    "incremental_index_mean_bytes": "incremental index mean (B)",
    "incremental_index_max_bytes": "incremental index max (B)",
    "max_embedded_stripes": "max embedded stripes",
    "commits_with_segments_obj": "commits with segments object",
    "commits_per_spill": "commits per spill",
    "retention_days": "retention (days)",
    "measured_commits": "measured commits",
    "projected_commits": "projected commits",
    "projected_objects": "projected objects",
    "projected_bytes": "projected bytes",
    "measured_objects": "measured objects",
    "measured_bytes": "measured bytes",
    "fixed_objects": "fixed objects",
    "fixed_bytes": "fixed bytes",
    "inventory_id": "inventory",
    "internal_commits": "internal commits",
    "lost_race_commits": "lost-race commits",
    "lost_race_commit_bytes": "lost-race commit bytes (B)",
    "report_id": "report",
    "report_time": "report time (UTC)",
    "test_id": "test",
    "deviation_in": "deviation in",
    "fixed_in": "fixed in",
}

_PERCENT_COLUMNS: Final = ("share",)
_BYTE_COLUMNS: Final = ("projected_bytes", "measured_bytes", "fixed_bytes")


def human_bytes(value: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(value) >= size:
            return f"{value / size:.2f} {unit}"
    return f"{value:.0f} B"


def format_value(column: str, value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else ""
    if column in _PERCENT_COLUMNS and isinstance(value, int | float):
        return f"{value * 100:.1f}"
    if column in _BYTE_COLUMNS and isinstance(value, int | float):
        return human_bytes(float(value))
    if isinstance(value, float):
        if value == 0 or abs(value) >= 100:
            return f"{value:,.0f}"
        if abs(value) >= 1:
            return f"{value:.2f}"
        return f"{value:.3g}"
    if isinstance(value, int):
        return f"{value:,}"
    if hasattr(value, "strftime"):
        return str(value.strftime("%Y-%m-%d %H:%M:%S"))
    return str(value)


def _numeric(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def html_table(frame: pd.DataFrame, columns: list[str] | None = None, flag: str | None = None) -> str:
    """An HTML table of ``frame``; rows where boolean column ``flag`` is true get that column's name
    as class (``regression``, ``starved``: each drawn in its own colour, and marked with its own
    sign, which survives black-and-white printing)."""
    columns = columns or [c for c in frame.columns if c != flag]
    head = "".join(f"<th>{html.escape(HEADERS.get(c, c.replace('_', ' ')))}</th>" for c in columns)
    rows = []
    for record in frame.to_dict("records"):
        flagged = bool(flag and record.get(flag))
        cells = "".join(
            f'<td class="{"num" if _numeric(record[c]) else ""}">'
            f"{html.escape(format_value(c, record[c]))}</td>"
            for c in columns
        )
        marker = f' class="{flag}"' if flagged else ""
        rows.append(f"<tr{marker}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def matrix_table(matrix: pd.DataFrame) -> str:
    """Backend rows x area columns; a cell with failures or errors is flagged."""
    areas = sorted(matrix["area"].unique())
    backends = sorted(matrix["backend"].unique())
    cells = {(r.backend, r.area): r for r in matrix.itertuples()}
    head = "<th>backend</th>" + "".join(f"<th>{html.escape(a)}</th>" for a in areas)
    rows = []
    for backend in backends:
        tds = []
        for area in areas:
            r = cells.get((backend, area))
            if r is None:
                tds.append('<td class="missing">-</td>')
                continue
            css = "bad" if (r.failed or r.error or r.xpassed) else ("dev" if r.xfailed else "good")
            tds.append(f'<td class="{css}">{html.escape(str(r.cell))}</td>')
        rows.append(f"<tr><th>{html.escape(backend)}</th>{''.join(tds)}</tr>")
    return f'<table class="matrix"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


@dataclass
class RunSection:
    run_id: str
    title: str
    writers_table: str
    figures: list[str] = field(default_factory=list)


@dataclass
class Page:
    title: str
    generated_at: str
    inputs: str
    notes: list[str] = field(default_factory=list)
    runs_setup_table: str = ""
    runs_results_table: str = ""
    runs: list[RunSection] = field(default_factory=list)
    comparison_rule: str = ""
    groups_table: str = ""
    comparison_table: str = ""
    comparison_figure: str = ""
    storage_tables: dict[str, str] = field(default_factory=dict)
    storage_figures: list[str] = field(default_factory=list)
    conformance_matrix: str = ""
    conformance_changes: str = ""
    conformance_fixed: str = ""
    conformance_history: str = ""
    tables: list[str] = field(default_factory=list)


def render(page: Page) -> str:
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(
        loader=PackageLoader("reports", "templates"), autoescape=select_autoescape(["j2", "html"])
    )
    return str(env.get_template("report.html.j2").render(page=page))
