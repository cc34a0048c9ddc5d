"""What an API check run counts: per operation the requests sent, the status codes answered against
those Nessie's document declares, and the failures of each check; written as text or markdown."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Final

#: The checks run on every answer, in the order the figures list them (schemathesis's names).
CHECK_NAMES: Final = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
)

#: Why a documented status code cannot be reached on a server without the features behind it.
UNREACHABLE_BECAUSE: Final[dict[str, str]] = {
    "401": "needs authentication configured on the server (the run sends no credentials)",
    "403": "needs authorization rules configured on the server",
    "default": "not a status code: the answer for any status not listed",
    "204": (
        "a merge answers 200 with its result, on Nessie's server as on lochkit serve (204 in the document)"
    ),
}


@dataclass
class OperationFigures:
    """One operation of the document (``GET /v2/trees/{ref}``) and what the run saw of it."""

    label: str
    documented: tuple[str, ...]
    requests: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)
    #: Failures by (check, kind): what failed, without the values of one answer.
    kinds: Counter[tuple[str, str]] = field(default_factory=Counter)
    #: Failures an entry of the known-differences list explains, by its reason.
    explained: Counter[str] = field(default_factory=Counter)
    #: The first failure of each kind, as schemathesis describes it (with a curl command).
    first_failure: dict[tuple[str, str], str] = field(default_factory=dict)

    def reached(self) -> list[str]:
        return [code for code in self.documented if code.isdigit() and int(code) in self.statuses]

    def unreached(self) -> list[str]:
        return [code for code in self.documented if code not in self.reached()]

    def undocumented(self) -> list[int]:
        return sorted(s for s in self.statuses if str(s) not in self.documented)


@dataclass
class RunFigures:
    target: str
    seed: int
    examples: int
    seconds: float = 0.0
    operations: dict[str, OperationFigures] = field(default_factory=dict)
    #: Operations of the document left out, with the reason.
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def requests(self) -> int:
        return sum(op.requests for op in self.operations.values())

    def failures(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for op in self.operations.values():
            total.update(op.failures)
        return total

    def explained(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for op in self.operations.values():
            total.update(op.explained)
        return total

    def documented_codes(self, *, reachable_only: bool = False) -> tuple[int, int]:
        """(reached, documented) status codes over every operation, ``default`` left out; with
        ``reachable_only`` also those no run without credentials reaches (:data:`UNREACHABLE_BECAUSE`)."""
        documented = [
            (op, c)
            for op in self.operations.values()
            for c in op.documented
            if c.isdigit() and not (reachable_only and c in UNREACHABLE_BECAUSE)
        ]
        reached = sum(1 for op, c in documented if int(c) in op.statuses)
        return reached, len(documented)

    def ok(self) -> bool:
        return not self.failures()


def _reachable(run: RunFigures) -> str:
    reached, reachable = run.documented_codes(reachable_only=True)
    return f"{reached} of {reachable}"


def unreached_reason(code: str) -> str:
    return UNREACHABLE_BECAUSE.get(code, "not reached by this run")


def format_text(run: RunFigures) -> str:
    reached, documented = run.documented_codes()
    failures = run.failures()
    lines = [
        (
            f"{run.target}: {len(run.operations)} operations, {run.requests} requests, "
            f"{run.seconds:.0f} s (seed {run.seed}, {run.examples} generated requests per operation)"
        ),
        "failures by check: " + ", ".join(f"{name} {failures.get(name, 0)}" for name in CHECK_NAMES),
        (
            f"documented status codes reached: {reached} of {documented} "
            f"({_reachable(run)} of those a run without credentials can reach)"
        ),
    ]
    for reason, count in sorted(run.explained().items()):
        lines.append(f"explained ({count}): {reason}")
    lines.append("")
    for op in run.operations.values():
        statuses = " ".join(f"{s}x{n}" for s, n in sorted(op.statuses.items()))
        lines.append(f"{op.label}: {op.requests} requests, answered {statuses or '-'}")
        lines.append(f"  documented {' '.join(op.documented)}; not reached {' '.join(op.unreached()) or '-'}")
        for (name, kind), count in sorted(op.kinds.items()):
            lines.append(f"  FAILED {name} x{count}: {kind}")
            lines.extend("    " + line for line in op.first_failure[name, kind].strip().splitlines()[:14])
    for label, reason in run.skipped.items():
        lines.append(f"not checked: {label}: {reason}")
    return "\n".join(lines)


def format_markdown(run: RunFigures) -> str:
    """The figures as Markdown (the snippet's body: :func:`conformance.snippets.render` adds
    which command wrote it, when and on what machine)."""
    reached, documented = run.documented_codes()
    failures = run.failures()
    out = [
        (
            f"{run.target}: {run.requests} requests, {run.examples} generated per operation plus the "
            "fixed valid ones."
        ),
        "",
        "| check | failures |",
        "|---|---|",
        *(f"| `{name}` | {failures.get(name, 0)} |" for name in CHECK_NAMES),
        "",
        (
            f"Documented status codes reached: **{reached} of {documented}** ({_reachable(run)} of "
            "those a run without credentials can reach: see below for the others)."
        ),
        "",
        "| operation | requests | answered | documented, not reached |",
        "|---|---|---|---|",
    ]
    for op in run.operations.values():
        statuses = ", ".join(f"{s} ({n})" for s, n in sorted(op.statuses.items()))
        unreached = ", ".join(op.unreached()) or "none"
        out.append(f"| `{op.label}` | {op.requests} | {statuses} | {unreached} |")
    codes = sorted({c for op in run.operations.values() for c in op.unreached()})
    if codes:
        out += ["", "Why a documented code was not reached:", ""]
        out += [f"- `{code}`: {unreached_reason(code)}" for code in codes]
    kinds: Counter[tuple[str, str, str]] = Counter()
    for op in run.operations.values():
        for (name, kind), count in op.kinds.items():
            kinds[op.label, name, kind] += count
    if kinds:
        out += ["", "Failures:", "", "| operation | check | what | answers |", "|---|---|---|---|"]
        out += [
            f"| `{label}` | `{name}` | {kind} | {n} |" for (label, name, kind), n in sorted(kinds.items())
        ]
    explained = run.explained()
    if explained:
        out += ["", "Counted apart, with the reason (not failures of the server checked):", ""]
        out += [f"- {reason} ({count})" for reason, count in sorted(explained.items())]
    if run.skipped:
        out += ["", "Not checked:", ""]
        out += [f"- `{label}`: {reason}" for label, reason in run.skipped.items()]
    return "\n".join(out) + "\n"


__all__ = ["CHECK_NAMES", "OperationFigures", "RunFigures", "format_markdown", "format_text"]
