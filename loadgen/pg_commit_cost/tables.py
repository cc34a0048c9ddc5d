"""The Markdown tables: one per operation, a row per figure, a column per configuration; a cell is
the median of the repeats, with their range when they differ."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Final

from loadgen.pg_commit_cost.groups import BACKEND, MONITOR, WALWRITER
from loadgen.pg_commit_cost.options import OPERATIONS
from loadgen.pg_commit_cost.sample import Sample


def spread(values: Sequence[float], fmt: str) -> str:
    """The median, and min-max when the repeats differ; a dash for no value."""
    if not values:
        return "—"
    median = statistics.median(values)
    if len(values) < 2 or min(values) == max(values):
        return format(median, fmt)
    return f"{format(median, fmt)} ({format(min(values), fmt)}-{format(max(values), fmt)})"


def _others(role: str) -> bool:
    return role not in (BACKEND, WALWRITER, MONITOR)


#: The table's rows: title, number format, figure of one sample.
ROWS: Final[tuple[tuple[str, str, Callable[[Sample], float]], ...]] = (
    ("ops/s", ",.0f", lambda s: s.ops / s.wall_s),
    ("wall ms", ".3f", lambda s: s.per_op_ms(s.wall_s)),
    ("client CPU ms", ".3f", lambda s: s.per_op_ms(s.client_cpu_s)),
    ("(calling thread)", ".3f", lambda s: s.per_op_ms(s.client_thread_cpu_s)),
    ("wait ms (wall - client CPU)", ".3f", lambda s: s.per_op_ms(s.wall_s - s.client_cpu_s)),
    ("server CPU ms", ".3f", lambda s: s.per_op_ms(s.server_cpu_s())),
    ("backend", ".3f", lambda s: s.per_op_ms(s.server_cpu_s(lambda role: role == BACKEND))),
    ("walwriter", ".3f", lambda s: s.per_op_ms(s.server_cpu_s(lambda role: role == WALWRITER))),
    ("others", ".3f", lambda s: s.per_op_ms(s.server_cpu_s(_others))),
    ("backend CPU ms (schedstat ns)", ".3f", lambda s: s.per_op_ms(s.server_figure(BACKEND, "run_s"))),
    ("client runqueue wait ms", ".3f", lambda s: s.per_op_ms(s.client_runqueue_s)),
    ("backend runqueue wait ms", ".3f", lambda s: s.per_op_ms(s.server_figure(BACKEND, "runqueue_s"))),
    ("WAL B/op", ",.0f", lambda s: s.wal_bytes / s.ops),
    ("WAL FPI/op", ".2f", lambda s: s.wal["fpi"] / s.ops),
    ("WAL writes/op", ".2f", lambda s: s.wal["writes"] / s.ops),
    ("WAL syncs/op", ".2f", lambda s: s.wal["syncs"] / s.ops),
    ("WAL write+sync ms/op", ".3f", lambda s: (s.wal["write_ms"] + s.wal["sync_ms"]) / s.ops),
    ("statements/op", ".2f", lambda s: s.statements / s.ops),
    ("client waits/op", ".2f", lambda s: s.client_voluntary_switches / s.ops),
    ("load avg 1 min", ".2f", lambda s: s.loadavg[0]),
)


def tables(samples: Sequence[Sample], configs: Sequence[str]) -> str:
    """One Markdown table per operation: a row per figure, a column per configuration."""
    out: list[str] = []
    for operation in OPERATIONS:
        out += [f"### {operation}", "", "| per operation | " + " | ".join(configs) + " |"]
        out.append("|---|" + "---|" * len(configs))
        for title, fmt, figure in ROWS:
            cells = [
                spread([figure(s) for s in samples if s.config == c and s.operation == operation], fmt)
                for c in configs
            ]
            out.append(f"| {title} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out).strip() + "\n"
