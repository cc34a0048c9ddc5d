"""Render a conformance report (``--lochkit-report`` JSON) as the backend x suite matrix.

``python -m conformance.matrix report.json [--markdown]``
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def _cell(counts: dict[str, int]) -> str:
    if not any(counts.values()):
        return "—"  # no test of this group ran here (REST targets run the version-store suites only)
    text = f"{counts.get('passed', 0)}"
    for outcome, mark in (
        ("failed", "F"),
        ("error", "E"),
        ("xfailed", "x"),
        ("xpassed", "X"),
        ("skipped", "s"),
    ):
        if counts.get(outcome):
            text += f" {counts[outcome]}{mark}"
    return text


def _groups(report: dict[str, Any]) -> list[str]:
    """Suite groups (the part of an area name before the dot), in a stable order."""
    groups = {area.split(".")[0] for b in report.values() for area in b["areas"]}
    return sorted(groups)


def render(report: dict[str, Any], markdown: bool) -> str:
    groups = _groups(report)
    header = ["backend", "server (how obtained)", *groups, "total"]
    rows = []
    for backend, data in sorted(report.items()):
        totals: dict[str, dict[str, int]] = {g: {} for g in groups}
        overall: dict[str, int] = {}
        for area, entry in data["areas"].items():
            group = area.split(".")[0]
            for outcome, n in entry["counts"].items():
                totals[group][outcome] = totals[group].get(outcome, 0) + n
                overall[outcome] = overall.get(outcome, 0) + n
        info = data.get("provisioning", {})
        server = f"{info.get('server') or '-'} ({info.get('method', '?')})"
        rows.append([backend, server, *(_cell(totals[g]) for g in groups), _cell(overall)])
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
    else:
        widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
        lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    legend = "cells: passed, then F failed, E errors, x expected failures (declared deviations), s skipped"
    return "\n".join([*lines, "", legend])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.matrix", description=__doc__)
    parser.add_argument("report", type=Path)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    print(render(json.loads(args.report.read_text()), args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
