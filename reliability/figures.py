"""A campaign's figures per backend and per fuzz target, and their Markdown tables."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Final

#: The campaign's parts, in the order it runs them (``--only`` picks some).
PARTS: Final = ("crash", "lease-crash", "server", "network", "scale", "fuzz")


@dataclass
class LeaseFigures:
    """Kills of the ``coordinated`` commit-target lease's holder (see reliability/lease_crash.py)."""

    writers: int = 0
    kills: int = 0
    #: Kills that found the victim holding the lease (by its journal, and nobody had skipped it).
    kills_holding: int = 0
    #: Of those, dead holders' leases a waiter took over after they expired.
    expired: int = 0
    #: Longest time from a kill to the next acknowledged commit, seconds.
    longest_stall: float = 0.0
    lease_seconds: float = 0.0
    stall_bound: float = 0.0
    fewest_commits_after_a_kill: int = 0
    #: Lease tickets skipped as stalled in all (the dead holders' and any live holder's).
    tickets_skipped: int = 0


@dataclass
class BackendFigures:
    backend: str
    server: str = ""
    #: How writers ran: "processes", or why not ("one process, 3 threads: ...").
    writers: str = ""
    crash_points: int = 0
    crash_kills: int = 0
    random_kills: int = 0
    half_done_repaired: int = 0
    server_restarts: int = 0
    toxics: int = 0
    #: Longest single Persist call during server and network faults, seconds.
    longest_call: float = 0.0
    #: Documented errors raised while a fault lasted, by type.
    errors: dict[str, int] = field(default_factory=dict)
    scale: str = ""
    linearizable: bool | None = None
    history_operations: int = 0
    commits_acknowledged: int = 0
    commits_checked: int = 0
    ambiguous: int = 0
    lost: int = 0
    duplicated: int = 0
    lease: LeaseFigures | None = None
    #: Parts that do not apply, with the reason ("server faults": "embedded: no server").
    not_applicable: dict[str, str] = field(default_factory=dict)
    #: Parts run differently from the defaults, with what and why (its provisioner's declaration).
    declared: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def add_errors(self, counts: dict[str, int]) -> None:
        for name, n in counts.items():
            self.errors[name] = self.errors.get(name, 0) + n


@dataclass
class FuzzFigures:
    target: str
    engine: str
    inputs: int
    seconds: float
    crashes: int
    description: str = ""


@dataclass
class CampaignReport:
    profile: str
    seed: int
    #: The parts that ran (``--only``); the table says "not run" for the others.
    parts: tuple[str, ...] = PARTS
    backends: list[BackendFigures] = field(default_factory=list)
    fuzz: list[FuzzFigures] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: When the run started (ISO 8601, UTC) and the machine it ran on (conformance.snippets.machine).
    started: str = ""
    machine: str = ""

    @property
    def ok(self) -> bool:
        return (
            not self.problems
            and all(not b.problems for b in self.backends)
            and not any(f.crashes for f in self.fuzz)
        )

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _na(figures: BackendFigures, part: str, value: str, ran: bool = True) -> str:
    if part in figures.not_applicable:
        return "n/a"
    return value if ran else "not run"


def markdown(report: CampaignReport) -> str:
    header = (
        "| backend | writers | crashes survived | server restarts | toxics | linearizability | "
        "commits checked | lost |"
    )
    lines = [header, "|---|---|---|---|---|---|---|---|"]
    ran = set(report.parts)
    for b in report.backends:
        crashes = _na(
            b,
            "crash",
            f"{b.crash_kills} at {b.crash_points} points + {b.random_kills} random",
            "crash" in ran,
        )
        restarts = _na(b, "server faults", str(b.server_restarts), "server" in ran)
        toxics = _na(b, "network faults", str(b.toxics), "network" in ran)
        if "scale" in b.not_applicable:
            linear = "n/a"
        elif "scale" not in ran:
            linear = "not run"
        else:
            verdict = {True: "linearizable", False: "NOT linearizable", None: "not checked"}[b.linearizable]
            linear = f"{b.scale}: {b.history_operations:,} CAS/reads {verdict}"
        lines.append(
            f"| `{b.backend}` | {b.writers} | {crashes} | {restarts} | {toxics} | {linear} | "
            f"{b.commits_checked:,} | {b.lost} |"
        )
    if "lease-crash" in ran and report.backends:
        lines += ["", *_lease_table(report.backends)]
    if report.fuzz:
        lines += ["", "| decoder | engine | inputs | crashes |", "|---|---|---|---|"]
        lines += [f"| {f.target} | {f.engine} | {f.inputs:,} | {f.crashes} |" for f in report.fuzz]
    notes = [
        f"- `{b.backend}`, {part}: {why}"
        for b in report.backends
        for part, why in [*b.not_applicable.items(), *b.declared.items()]
    ]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines)


def _lease_table(backends: list[BackendFigures]) -> list[str]:
    header = (
        "| backend | `coordinated` writers | lease holders killed | leases expired and taken over | "
        "longest stall (lease expiry) | fewest commits between kills |"
    )
    lines = [header, "|---|---|---|---|---|---|"]
    for b in backends:
        lease = b.lease
        if lease is None:
            cells = ["n/a" if "lease crash" in b.not_applicable else "failed"] * 5
        else:
            cells = [
                f"{lease.writers} process{'es' if lease.writers > 1 else ''}",
                f"{lease.kills_holding} of {lease.kills} kills",
                str(lease.expired),
                f"{lease.longest_stall:.2f} s ({lease.lease_seconds:g} s)",
                str(lease.fewest_commits_after_a_kill),
            ]
        lines.append(f"| `{b.backend}` | {' | '.join(cells)} |")
    return lines
