"""What ``lochkit check`` found: findings, per-reference summaries, the report and its exit code."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(enum.Enum):
    #: Data is missing, undecodable or contradicts itself: something was lost or corrupted.
    ERROR = "error"
    #: A reference create or delete stopped half-way; reads finish it (``--repair`` does it now).
    HALF_DONE = "half-done"
    #: A half-done operation that ``--repair`` finished.
    REPAIRED = "repaired"
    #: Worth knowing, not wrong (e.g. a walk stopped at ``--max-commits``).
    NOTE = "note"


class ExitCode(enum.IntEnum):
    CONSISTENT = 0
    ERRORS = 1
    #: Usage errors and unreachable backends are 2, as for every lochkit command.
    USAGE = 2
    HALF_DONE = 3
    NO_REPOSITORY = 4


@dataclass(frozen=True)
class Finding:
    severity: Severity
    #: A stable code, e.g. ``missing-commit``; docs/check.md lists them.
    check: str
    message: str
    reference: str | None = None
    #: The object id (hex) or reference name the finding is about.
    subject: str | None = None


@dataclass
class ReferenceSummary:
    name: str
    #: branch, tag, internal, lease (a commit-target lease: its head is the lease state) or other
    kind: str
    head: str
    commits_checked: int = 0
    #: False when the walk stopped early (``--max-commits``) or at a broken link.
    complete: bool = True
    errors: int = 0


@dataclass
class Counters:
    commits: int = 0
    index_segments: int = 0
    values: int = 0
    registrations: int = 0


@dataclass
class CheckReport:
    repository_id: str
    backend: str
    address: str
    findings: list[Finding] = field(default_factory=list)
    references: list[ReferenceSummary] = field(default_factory=list)
    counters: Counters = field(default_factory=Counters)
    initialised: bool = True
    duration_seconds: float = 0.0

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity is severity)

    @property
    def exit_code(self) -> ExitCode:
        if not self.initialised:
            return ExitCode.NO_REPOSITORY
        if self.count(Severity.ERROR):
            return ExitCode.ERRORS
        if self.count(Severity.HALF_DONE):
            return ExitCode.HALF_DONE
        return ExitCode.CONSISTENT

    def summary_line(self) -> str:
        c = self.counters
        return (
            f"{len(self.references)} references, {c.commits} commits, {c.index_segments} index segments, "
            f"{c.values} values, {c.registrations} registrations checked: {self.count(Severity.ERROR)} "
            f"errors, {self.count(Severity.HALF_DONE)} half-done, {self.count(Severity.REPAIRED)} repaired"
        )
