"""Linearizability at scale: many writers, one branch, every commit and every compare-and-swap checked.

Writers (processes where the backend allows several, threads in one process otherwise) each make a
fixed number of acknowledged commits on one branch, recording every read and compare-and-swap of
it. Afterwards the branch is checked for lost, duplicated and reordered commits against the
writers' journals, and the recorded history is checked as a linearizable compare-and-swap register.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from reliability import processes
from reliability.crash_campaign import ensure_branches
from reliability.target import Target
from reliability.verification import RunVerdict, verify_run
from reliability.writer import WriterSpec, run_writers, writer_process_main

BRANCH = "contended"
#: Shorter retry sleeps than Nessie's defaults (5-25 ms doubling to 250 ms): with eight writers on
#: one branch the defaults leave most of them asleep at the cap, so the branch advances at a few
#: commits per second and the run measures the sleeps instead of the store.
SCALE_RETRIES = {
    "retry_initial_sleep_millis_lower": 1,
    "retry_initial_sleep_millis_upper": 5,
    "retry_max_sleep_millis": 20,
}


@dataclass
class ScaleResult:
    writers: int
    commits_per_writer: int
    processes: bool
    seconds: float = 0.0
    verdict: RunVerdict | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def history_operations(self) -> int:
        return sum(v.operations for v in self.verdict.linearizability.values()) if self.verdict else 0


def linearizability_at_scale(
    target: Target,
    run_dir: Path,
    *,
    writers: int = 8,
    commits: int = 1000,
    seed: int = 0,
    threads: bool = False,
    log: Callable[[str], None] = print,
) -> ScaleResult:
    """Writers are processes where the backend allows it, unless ``threads`` asks for threads."""
    run_dir.mkdir(parents=True, exist_ok=True)
    use_processes = target.multi_process and not threads
    with target.persist() as persist:
        heads = ensure_branches(persist, [BRANCH])
    result = ScaleResult(writers, commits, use_processes)
    started = time.monotonic()
    base = WriterSpec(
        target.backend,
        target.url,
        target.options,
        target.repository_id,
        "s",
        (BRANCH,),
        str(run_dir),
        commits=commits,
        record_history=True,
        seed=seed,
        # Eight writers on one branch of a slow server can need more than the default 5 s of
        # retries for one commit; a retry timeout would be a refused commit, not a wrong one.
        config={"commit_timeout_millis": 60_000, **SCALE_RETRIES},
    )
    if use_processes:
        specs = [_with_writer(base, f"s{i}") for i in range(writers)]
        running = [processes.start(writer_process_main, spec, spec.writer) for spec in specs]
        for process in running:
            process.join()
            if process.exitcode != 0:
                result.problems.append(f"writer {process.name} exited with {process.exitcode}")
    else:
        code = run_writers(_with_writer(base, "s", threads=writers))
        if code != 0:
            result.problems.append(f"writer threads ended with {code}")
    result.seconds = time.monotonic() - started
    with target.persist() as persist:
        result.verdict = verify_run(
            persist, run_dir, [BRANCH], backend=target.backend, address=target.address, initial_heads=heads
        )
    result.problems += result.verdict.problems()
    ledger, lin = result.verdict.ledger, result.verdict.linearizability[BRANCH]
    log(
        f"  linearizability: {writers} {'processes' if use_processes else 'threads'} x {commits} "
        f"commits in {result.seconds:.0f} s ({ledger.acknowledged / max(result.seconds, 1e-9):.0f}/s); "
        f"{ledger.acknowledged} acknowledged, {len(ledger.lost)} lost, {len(ledger.duplicated)} duplicated, "
        f"{len(ledger.reordered)} reordered; {lin.operations} reads and compare-and-swaps "
        f"{'linearizable' if lin.linearizable else 'NOT linearizable'}"
    )
    return result


def _with_writer(spec: WriterSpec, writer: str, threads: int = 1) -> WriterSpec:
    from dataclasses import replace

    return replace(spec, writer=writer, threads=threads)
