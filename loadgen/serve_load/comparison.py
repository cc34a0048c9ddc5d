"""The load comparison: every target x number of users, one cell each, and its table.

Targets run one after the other, each server alone on the machine with a database of its own; the
numbers of users run in increasing order against one server process, after an unrecorded warm-up
(a JVM compiles its hot code in the first seconds)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loadgen.serve_load.cells import Cell, run_cell
from loadgen.serve_load.servers import serving

#: Users of the warm-up run (fewer when the comparison's largest number is smaller).
WARMUP_USERS = 10
_MIB = 2**20


@dataclass
class Comparison:
    scenario: str
    seconds: int
    warmup_s: int
    extra: list[str]
    cells: list[Cell] = field(default_factory=list)
    #: What each target ran on (server, version, database).
    descriptions: dict[str, str] = field(default_factory=dict)

    @property
    def failures(self) -> list[str]:
        """Cells whose server answered 5xx or did not answer."""
        return [
            f"{c.target}, {c.users} users: {c.server_errors} 5xx, {c.no_answer} without answer"
            for c in self.cells
            if c.server_errors or c.no_answer
        ]

    def as_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "seconds_per_cell": self.seconds,
            "warmup_s": self.warmup_s,
            "scenario_options": self.extra,
            "targets": self.descriptions,
            "cells": [c.as_dict() for c in self.cells],
        }


def run_comparison(
    targets: Sequence[str],
    users: Sequence[int],
    *,
    seconds: int,
    out: Path,
    scenario: str = "commit-to-branch",
    extra: Sequence[str] = (),
    warmup_s: int = 0,
    interval_s: float = 0.5,
    provision_method: str = "auto",
    log: Callable[[str], None] = print,
) -> Comparison:
    """Run every cell; each cell's run directory, the servers' logs and ``results.json`` (the
    figures and every sample) go under ``out``."""
    comparison = Comparison(scenario, seconds, warmup_s, list(extra))
    for target in targets:
        work = out / target
        with serving(target, work, provision_method=provision_method) as served:
            comparison.descriptions[target] = served.description
            log(f"{target}: {served.description} at {served.uri}")
            if warmup_s > 0:
                warmup_users = min(WARMUP_USERS, max(users))
                log(f"  warm-up: {warmup_users} users for {warmup_s} s (not recorded)")
                run_cell(served, scenario, warmup_users, warmup_s, work / "warmup", extra=extra)
            for n in users:
                cell = run_cell(
                    served, scenario, n, seconds, work / f"users-{n}", extra=extra, interval_s=interval_s
                )
                comparison.cells.append(cell)
                log(
                    f"  {n} users: "
                    + " ".join(f"{k}={v}" for k, v in row(cell).items() if k not in ("target", "users"))
                )
        (out / "results.json").write_text(json.dumps(comparison.as_dict(), indent=2) + "\n")
    return comparison


def row(cell: Cell) -> dict[str, Any]:
    """A cell as one row of the table (column name -> value)."""
    return {
        "target": cell.target,
        "users": cell.users,
        "requests/s": f"{cell.requests_per_s:,.1f}",
        "p50 ms": f"{cell.p50_ms:.1f}",
        "p99 ms": f"{cell.p99_ms:.1f}",
        "5xx": cell.server_errors,
        "conflicts": cell.conflicts,
        "other 4xx": cell.client_errors,
        "no answer": cell.no_answer,
        "RSS peak MiB": f"{cell.rss_peak_bytes / _MIB:.0f}",
        "RSS end MiB": f"{cell.rss_end_bytes / _MIB:.0f}",
        "connections peak": cell.connections_peak,
    }


def table(comparison: Comparison) -> str:
    """The Markdown table of every cell, then what each target ran on."""
    rows = [row(c) for c in comparison.cells]
    if not rows:
        return "(no cells ran)"
    header = list(rows[0])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(r[h]) for h in header) + " |" for r in rows]
    lines.append("")
    options = " ".join(comparison.extra)
    lines.append(
        f"Scenario `{comparison.scenario}`{f' ({options})' if options else ''}, {comparison.seconds} s per "
        f"cell after a {comparison.warmup_s} s warm-up; requests are the scenario's actions (one "
        "locust request each), latency over every request. Servers:"
    )
    lines.append("")
    lines += [f"- `{target}`: {what}" for target, what in comparison.descriptions.items()]
    return "\n".join(lines)
