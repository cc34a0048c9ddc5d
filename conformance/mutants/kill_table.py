"""The kill table of a self-check: which broken adapter was caught, by which test, how fast."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from conformance.mutants.catalogue import Mutant
from conformance.mutants.self_check import MutantResult, SelfCheckResult
from persist_spi.columns import columns

_HEADERS = ("mutant", "from", "method", "guarantee", "caught", "tests", "first failing test", "time to kill")


def _row(result: MutantResult) -> tuple[str, ...]:
    mutant = result.mutant
    runs = result.kill_runs
    caught = "yes" if result.caught else "NO"
    if len(runs) > 1:
        caught += f" ({sum(r.caught for r in runs)}/{len(runs)} runs)"
    return (
        mutant.name,
        mutant.base,
        mutant.method,
        mutant.guarantee,
        caught,
        result.catching_tests,
        result.first_failure or "-",
        f"{result.seconds_to_kill:.1f} s",
    )


def summary(result: SelfCheckResult) -> list[str]:
    killed, total = result.kill_rate
    lines = [f"{killed} of {total} broken adapters caught ({100 * killed / max(total, 1):.0f} %)"]
    for control in result.controls:
        verdict = "passes" if control.exit_code == 0 and not control.problem else "FAILS"
        lines.append(
            f"control {control.adapter} {verdict}: {control.passed} passed, {control.skipped} skipped, "
            f"{len(control.failed)} failed"
        )
    survivors = [m.mutant.name for m in result.mutants if not m.caught]
    if survivors:
        lines.append(f"survived: {', '.join(survivors)}")
    lines.append(f"self-check took {result.seconds:.0f} s")
    return lines


def catalogue_lines(mutants: Sequence[Mutant]) -> list[str]:
    """The broken adapters, one line each under a header: name, the adapter it derives from, the
    method its bug is in, the guarantee it breaks, and whether it shows only under concurrency."""
    headers = ("mutant", "from", "method", "guarantee", "racy")
    rows = [(m.name, m.base, m.method, m.guarantee, "racy" if m.racy else "") for m in mutants]
    return columns(headers, rows)


def text_table(result: SelfCheckResult) -> list[str]:
    rows = [_row(m) for m in result.mutants]
    keep = [i for i, header in enumerate(_HEADERS) if header != "tests" or any(r[i] for r in rows)]
    return columns([_HEADERS[i] for i in keep], [[r[i] for i in keep] for r in rows])


def markdown_table(result: SelfCheckResult) -> list[str]:
    rows = [_row(m) for m in result.mutants]
    keep = [i for i, header in enumerate(_HEADERS) if header != "tests" or any(r[i] for r in rows)]
    lines = [
        "| " + " | ".join(_HEADERS[i] for i in keep) + " |",
        "|" + "---|" * len(keep),
    ]
    for r in rows:
        cells = [
            f"`{r[i]}`" if _HEADERS[i] in ("mutant", "method", "first failing test") else r[i] for i in keep
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def catching_suites(result: MutantResult) -> dict[str, int]:
    """How many tests of each suite catch the mutant (counted runs only), most first."""
    if result.full_run is None:
        return {}
    suites = Counter(test_id.split("::", 1)[0].removeprefix("Test") for test_id in result.full_run.failed)
    return dict(suites.most_common())


def to_json(result: SelfCheckResult) -> dict[str, Any]:
    killed, total = result.kill_rate
    return {
        "caught": killed,
        "total": total,
        "seconds": round(result.seconds, 1),
        "controls": {
            c.adapter: {
                "exit_code": c.exit_code,
                "passed": c.passed,
                "skipped": c.skipped,
                "failed": c.failed,
            }
            for c in result.controls
        },
        "mutants": {
            m.mutant.name: {
                "base": m.mutant.base,
                "method": m.mutant.method,
                "guarantee": m.mutant.guarantee,
                "racy": m.mutant.racy,
                "bug": m.mutant.bug,
                "caught": m.caught,
                "runs": [
                    {"caught": r.caught, "seconds": round(r.seconds, 1), "problem": r.problem}
                    for r in m.kill_runs
                ],
                "first_failing_test": m.first_failure,
                "seconds_to_kill": round(m.seconds_to_kill, 1),
                "catching_tests": None if m.full_run is None else m.full_run.failed,
                "catching_tests_complete": None if m.full_run is None else m.full_run.complete,
                "catching_suites": catching_suites(m),
            }
            for m in result.mutants
        },
    }
