"""One campaign report from several runs' ``results.json`` (``lochkit torture --combine``).

A long campaign on every backend takes hours; it is run one backend at a time (and fuzzing on its
own) and published as one table. Combining refuses unlike runs: different profiles, seeds or
parts, or the same backend twice, would make one table of figures that do not compare.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reliability.figures import PARTS, BackendFigures, CampaignReport, FuzzFigures, LeaseFigures, markdown


class UnlikeRuns(ValueError):
    """The runs given to combine cannot make one table; the message says which and why."""


def results_file(run: Path) -> Path:
    """``run``'s ``results.json``: ``run`` is a run directory or the file itself."""
    path = run / "results.json" if run.is_dir() else run
    if not path.is_file():
        raise UnlikeRuns(f"{run}: no results.json there; give a run directory of lochkit torture (--out)")
    return path


def load_report(path: Path) -> CampaignReport:
    """The report a run wrote to ``path``. Runs written before reports carried their start time get
    the file's modification time less the run's duration."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        report = report_from_dict(data)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UnlikeRuns(f"{path}: not a lochkit torture results.json ({type(e).__name__}: {e})") from e
    if not report.started:
        finished = datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.UTC)
        report.started = (finished - datetime.timedelta(seconds=report.seconds)).isoformat(timespec="seconds")
    return report


def report_from_dict(data: dict[str, Any]) -> CampaignReport:
    backends = []
    for item in data["backends"]:
        lease = item.get("lease")
        fields = {**item, "lease": LeaseFigures(**lease) if lease is not None else None}
        backends.append(BackendFigures(**fields))
    known = {f.name for f in dataclasses.fields(CampaignReport)}
    plain = {k: v for k, v in data.items() if k in known and k not in ("backends", "fuzz", "parts")}
    return CampaignReport(
        **plain,
        parts=tuple(data["parts"]),
        backends=backends,
        fuzz=[FuzzFigures(**f) for f in data["fuzz"]],
    )


def combine(reports: Sequence[tuple[Path, CampaignReport]]) -> CampaignReport:
    """One report of ``reports`` (each with the file it came from, for the messages)."""
    if not reports:
        raise UnlikeRuns("no run to combine")
    first_path, first = reports[0]
    backend_parts: tuple[str, ...] | None = None
    seen: dict[str, Path] = {}
    fuzzed: Path | None = None
    for path, report in reports:
        if (report.profile, report.seed) != (first.profile, first.seed):
            raise UnlikeRuns(
                f"{path} is profile {report.profile}, seed {report.seed}; {first_path} is profile "
                f"{first.profile}, seed {first.seed}: rerun one of them with the other's"
            )
        if report.backends:
            parts = tuple(p for p in report.parts if p != "fuzz")
            if backend_parts is not None and parts != backend_parts:
                raise UnlikeRuns(
                    f"{path} ran {', '.join(parts)} on its backends, another run "
                    f"{', '.join(backend_parts)}: a table needs the same parts on every backend"
                )
            backend_parts = parts
        for b in report.backends:
            if b.backend in seen:
                raise UnlikeRuns(f"backend {b.backend} is in both {seen[b.backend]} and {path}: keep one")
            seen[b.backend] = path
        if report.fuzz:
            if fuzzed is not None:
                raise UnlikeRuns(f"both {fuzzed} and {path} fuzzed the decoders: keep one")
            fuzzed = path
    ran = set(backend_parts or ()) | ({"fuzz"} if fuzzed else set())
    return CampaignReport(
        profile=first.profile,
        seed=first.seed,
        parts=tuple(p for p in PARTS if p in ran),
        backends=[b for _, r in reports for b in r.backends],
        fuzz=[f for _, r in reports for f in r.fuzz],
        problems=[f"{path}: {p}" for path, r in reports for p in r.problems],
        seconds=sum(r.seconds for _, r in reports),
        started=min(r.started for _, r in reports),
        machine="; ".join(dict.fromkeys(r.machine for _, r in reports if r.machine)),
    )


def combined_tables(
    reports: Sequence[CampaignReport], combined: CampaignReport, expected: Sequence[str]
) -> str:
    """The Markdown of ``combined`` (made of ``reports``): its tables, which run measured what,
    and the ``expected`` backends no run covered (a partial campaign says so)."""
    text = markdown(combined) + "\n\n" + runs_line(reports)
    missing = [name for name in expected if name not in {b.backend for b in combined.backends}]
    return text + (f" Not in these runs: {', '.join(missing)}." if missing else "")


def runs_line(reports: Sequence[CampaignReport]) -> str:
    """Which run measured what, when and on what machine: a line under the combined tables."""
    pieces = []
    for r in reports:
        what = ", ".join(b.backend for b in r.backends) or ("fuzzing" if r.fuzz else "nothing")
        when = r.started.replace("T", " ")[:16] + " UTC"
        pieces.append(f"{what}: {when}, {r.seconds / 60:.0f} min" + (f" ({r.machine})" if r.machine else ""))
    return "Runs: " + "; ".join(pieces) + "."
