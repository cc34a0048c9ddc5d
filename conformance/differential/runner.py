"""Running the differential machine: a fixed seed, a number of examples (each a fresh pair of
version stores) and steps per example; the report says what ran and which registered differences
were met. A disagreement nothing explains raises :class:`~conformance.differential.observe.Divergence`
after Hypothesis has shrunk it to a short sequence of steps (printed as it replays them)."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis.stateful import run_state_machine_as_test

from conformance.differential.machine import Report, make_machine
from conformance.differential.sides import Side


def run_differential(
    reference: Callable[[], Side],
    candidate: Callable[[], Side],
    *,
    examples: int,
    steps: int,
    seed_value: int,
    shrink: bool = True,
    report: Report | None = None,
) -> Report:
    report = report if report is not None else Report()
    machine = make_machine(reference, candidate, report)
    seed(seed_value)(machine)
    phases = [Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.shrink] if shrink else [])
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=examples,
            stateful_step_count=steps,
            deadline=None,
            database=None,
            phases=phases,
            suppress_health_check=list(HealthCheck),
            print_blob=False,
        ),
    )
    return report


def format_report(report: Report) -> str:
    lines = [f"examples: {report.examples}, steps compared: {report.steps}"]
    kinds = sorted({kind for kind, _ in report.outcomes})
    for kind in kinds:
        outcomes = ", ".join(f"{o} {n}" for (k, o), n in sorted(report.outcomes.items()) if k == kind)
        lines.append(f"  {kind:<17} {outcomes}")
    if report.explained:
        lines.append("registered differences met (normalised):")
        lines += [f"  {d:<36} {n}" for d, n in sorted(report.explained.items())]
    else:
        lines.append("registered differences met: none")
    return "\n".join(lines)
