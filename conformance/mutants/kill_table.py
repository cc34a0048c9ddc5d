"""The kill table of a self-check: which broken adapter was caught, by which test, how fast."""

from __future__ import annotations

from conformance.mutants.self_check import MutantResult, SelfCheckResult

_HEADERS = ("mutant", "from", "method", "guarantee", "caught", "tests", "first failing test", "time to kill")


def _row(result: MutantResult) -> tuple[str, ...]:
    mutant = result.mutant
    runs = result.kill_runs
    caught = "yes" if result.caught else "NO"
    if len(runs) > 1:
        caught += f" ({sum(r.caught for r in runs)}/{len(runs)} runs)"
    tests = "" if result.catching_tests is None else str(result.catching_tests)
    return (
        mutant.name,
        mutant.base,
        mutant.method,
        mutant.guarantee,
        caught,
        tests,
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


def text_table(result: SelfCheckResult) -> list[str]:
    rows = [_HEADERS, *(_row(m) for m in result.mutants)]
    keep = [i for i, header in enumerate(_HEADERS) if header != "tests" or any(r[i] for r in rows[1:])]
    widths = [max(len(r[i]) for r in rows) for i in keep]
    return ["  ".join(r[i].ljust(w) for i, w in zip(keep, widths, strict=True)).rstrip() for r in rows]


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
