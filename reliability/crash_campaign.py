"""Crash injection: writers killed with SIGKILL, at every step of an operation and at random.

**The sweep.** A reference operation (a commit, a reference create, a reference delete) runs in a
process of its own, which kills itself before or after its N-th Persist call, for every N. The
operation's steps are learned from a run that is not killed. After each kill the supervisor checks:

- the repository is consistent except for half-done reference changes (no error);
- the operation is atomic around its commit point (the branch's compare-and-swap for a commit, the
  ``int/refs`` compare-and-swap for a create, marking the row for a delete): killed before it, the
  operation did not happen; killed after it, it did (once the half-done part is finished);
- ``check --repair`` finishes what was half-done, with the reads' own recovery;
- a restarted writer carries on: the same operation on fresh names succeeds.

**Random kills.** Writers commit to shared branches while the supervisor SIGKILLs one at random
intervals and restarts it. A restarted writer reads its journal, learns whether the commit it was
making landed, and continues. Afterwards every acknowledged commit must be on its branch exactly
once (:mod:`reliability.ledger`) and the checker must pass. Where a backend cannot share a database
between processes, one writer process with several threads is killed and restarted instead.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from persist_spi.check.consistency import RepositoryChecker
from persist_spi.check.findings import ExitCode, Severity
from persist_spi.persist import Persist
from persist_spi.versionstore.errors import ReferenceAlreadyExistsError
from persist_spi.versionstore.refs import branch
from persist_spi.versionstore.store import VersionStore
from reliability import processes
from reliability.crash_op import CrashOpSpec, crash_op_main, reached_steps
from reliability.crashpoints import CrashPoint, When
from reliability.target import Target
from reliability.verification import RunVerdict, branch_chains, verify_run
from reliability.writer import WriterSpec, stop_file, writer_process_main

#: The steps of each operation after the first of which it has happened (a half-done rest is
#: finished by reads). A commit moves its branch with its objects in one call when it can.
_MOVES = ("store_objs_and_update_reference", "update_reference_pointer")
COMMIT_POINTS: dict[str, tuple[str, ...]] = {
    "commit": _MOVES,
    "create": _MOVES,
    "delete": ("mark_reference_as_deleted",),
}
CRASH_BRANCH = "crash"
Log = Callable[[str], None]


def ensure_branches(persist: Persist, names: Sequence[str]) -> dict[str, str]:
    """Initialise the repository and create the branches (at main's head) if missing; their heads."""
    vs = VersionStore(persist)
    vs.repository.initialize("main")
    main_head = vs.reference(branch("main")).hash
    heads = {}
    for name in names:
        try:
            heads[name] = str(vs.create_reference(branch(name), main_head).hash)
        except ReferenceAlreadyExistsError:
            heads[name] = str(vs.reference(branch(name)).hash)
    return heads


@dataclass
class SweepResult:
    operations: dict[str, int] = field(default_factory=dict)  # operation -> steps
    #: Crash points tried (operation, step, before or after).
    points: int = 0
    kills: int = 0
    finished_before_kill: int = 0
    half_done_found: int = 0
    repaired: int = 0
    restarts: int = 0
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)


def _run_op(
    target: Target, run_dir: Path, operation: str, name: str, token: str, point: CrashPoint | None
) -> int:
    spec = CrashOpSpec(
        target.backend,
        target.url,
        target.options,
        target.repository_id,
        str(run_dir),
        operation,
        name,
        token,
        point,
    )
    process = processes.start(crash_op_main, spec, f"crash-{token}")
    process.join(300)
    if process.is_alive():
        processes.kill(process)
        return -999
    return process.exitcode if process.exitcode is not None else -999


def _ref_exists(persist: Persist, name: str) -> bool:
    return VersionStore(persist).refs.get_references([branch(name).full_name])[0] is not None


def _token_count(persist: Persist, token: str) -> int:
    return sum(1 for _, t in branch_chains(persist, [CRASH_BRANCH])[CRASH_BRANCH] if t == token)


def crash_sweep(
    target: Target,
    run_dir: Path,
    *,
    operations: Sequence[str] = ("commit", "create", "delete"),
    steps_per_operation: int | None = None,
    log: Log = print,
) -> SweepResult:
    """Kill an operation before and after each of its steps (``steps_per_operation`` limits the
    steps to those around the commit point, for short runs)."""
    result = SweepResult()
    started = time.monotonic()
    run_dir.mkdir(parents=True, exist_ok=True)
    with target.persist() as persist:
        ensure_branches(persist, [CRASH_BRANCH])
    for operation in operations:
        steps = _learn_steps(target, run_dir, operation, result)
        if steps is None:
            continue
        result.operations[operation] = len(steps)
        commit_point = _commit_point(operation, steps)
        assert commit_point is not None  # _learn_steps refused steps without one
        chosen = _choose_steps(len(steps), commit_point, steps_per_operation)
        for step in chosen:
            for when in When:
                _one_kill(target, run_dir, operation, steps, commit_point, CrashPoint(step, when), result)
        log(
            f"  crash sweep {operation}: {len(chosen)} of {len(steps)} steps x before/after "
            f"(commit point: step {commit_point}, {steps[commit_point - 1]})"
        )
    result.seconds = time.monotonic() - started
    log(
        f"  crash sweep: {result.kills} kills at {result.points} points, {result.half_done_found} half-done "
        f"found, {result.repaired} repaired, {result.restarts} restarted writers in {result.seconds:.0f} s"
    )
    return result


def _choose_steps(count: int, commit_point: int, limit: int | None) -> list[int]:
    everything = list(range(1, count + 1))
    if limit is None or limit >= count:
        return everything
    # Nearest the commit point first: the steps around it decide atomicity.
    return sorted(sorted(everything, key=lambda s: (abs(s - commit_point), s))[:limit])


def _names(operation: str, label: str) -> tuple[str, str]:
    token = f"{operation}-{label}:0"
    return (CRASH_BRANCH if operation == "commit" else f"crash-{operation}-{label}"), token


def _prepare(target: Target, operation: str, name: str) -> None:
    if operation == "delete":
        with target.persist() as persist:
            vs = VersionStore(persist)
            vs.create_reference(branch(name), vs.reference(branch("main")).hash)


def _learn_steps(target: Target, run_dir: Path, operation: str, result: SweepResult) -> list[str] | None:
    name, token = _names(operation, "learn")
    _prepare(target, operation, name)
    code = _run_op(target, run_dir, operation, name, token, None)
    if code != 0:
        result.problems.append(f"{operation}: the run without a crash point exited with {code}")
        return None
    steps = reached_steps(run_dir, token)
    if operation == "commit":  # learn again on a branch that has commits: reads its head too
        name, token = _names(operation, "learn-again")
        if _run_op(target, run_dir, operation, name, token, None) != 0:
            result.problems.append(f"{operation}: the second run without a crash point failed")
            return None
        steps = reached_steps(run_dir, token)
    if _commit_point(operation, steps) is None:
        points = " or ".join(COMMIT_POINTS[operation])
        result.problems.append(f"{operation}: no {points} among its steps {steps}")
        return None
    return steps


def _commit_point(operation: str, steps: list[str]) -> int | None:
    """The 1-based step after which ``operation`` has happened; None when it has none."""
    return next((i for i, step in enumerate(steps, 1) if step in COMMIT_POINTS[operation]), None)


def _one_kill(
    target: Target,
    run_dir: Path,
    operation: str,
    steps: list[str],
    commit_point: int,
    point: CrashPoint,
    result: SweepResult,
) -> None:
    result.points += 1
    label = f"{point.step}-{point.when.value}"
    name, token = _names(operation, label)
    what = f"{operation} killed {point}"
    _prepare(target, operation, name)
    code = _run_op(target, run_dir, operation, name, token, point)
    if code == 0:
        result.finished_before_kill += 1
    elif code != -9:
        result.problems.append(f"{what}: the process exited with {code} instead of being killed")
        return
    else:
        result.kills += 1
    # The steps this run reached (the last is the one it died in): the operation happened if it
    # got past its commit point, or died just after it.
    reached = reached_steps(run_dir, token)
    points = COMMIT_POINTS[operation]
    applied = any(step in points for step in reached[:-1]) or (
        bool(reached) and reached[-1] in points and point.when is When.AFTER
    )
    what = f"{operation} killed {point.when.value} step {len(reached)} ({reached[-1] if reached else '-'})"
    with target.persist() as persist:
        report = RepositoryChecker(persist, backend=target.backend, address=target.address).run()
    errors = [f"{f.check}: {f.message}" for f in report.findings if f.severity is Severity.ERROR]
    if errors:
        result.problems.append(f"{what}: the repository has errors: {'; '.join(errors[:3])}")
    result.half_done_found += report.count(Severity.HALF_DONE)
    # The restarted writer carries on (the same operation on fresh names) before anyone repairs:
    # it must work around what the killed one left, and the repair must work after it.
    again_name, again_token = _names(operation, label + "-restart")
    _prepare(target, operation, again_name)
    if _run_op(target, run_dir, operation, again_name, again_token, None) != 0:
        result.problems.append(f"{what}: the restarted writer failed")
    result.restarts += 1
    try:
        with target.persist() as persist:
            repaired = RepositoryChecker(
                persist, backend=target.backend, address=target.address, repair=True
            ).run()
            result.repaired += repaired.count(Severity.REPAIRED)
            if repaired.exit_code is not ExitCode.CONSISTENT:
                result.problems.append(f"{what}: check --repair left it {repaired.exit_code.name}")
            happened = _happened(persist, operation, name, token)
    except Exception as e:  # the reads' own recovery failing is exactly what this must catch
        result.problems.append(f"{what}: reading the repository back failed: {type(e).__name__}: {e}")
        return
    if happened is None:
        result.problems.append(f"{what}: the commit is on the branch more than once")
    elif happened != applied and code != 0:
        expected = "happened" if applied else "not happened"
        result.problems.append(f"{what}: the operation should have {expected}")


def _happened(persist: Persist, operation: str, name: str, token: str) -> bool | None:
    if operation == "commit":
        count = _token_count(persist, token)
        return None if count > 1 else count == 1
    exists = _ref_exists(persist, name)
    return exists if operation == "create" else not exists


@dataclass
class KillRunResult:
    writers: int
    threads: int
    kills: int = 0
    restarts: int = 0
    seconds: float = 0.0
    verdict: RunVerdict | None = None
    problems: list[str] = field(default_factory=list)


def random_kills(
    target: Target,
    run_dir: Path,
    *,
    writers: int,
    threads: int,
    branches: Sequence[str],
    seconds: float,
    kill_every: tuple[float, float],
    seed: int,
    log: Log = print,
) -> KillRunResult:
    run_dir.mkdir(parents=True, exist_ok=True)
    with target.persist() as persist:
        ensure_branches(persist, branches)
    rng = random.Random(seed)
    specs = [
        WriterSpec(
            target.backend,
            target.url,
            target.options,
            target.repository_id,
            f"k{i}",
            tuple(branches),
            str(run_dir),
            threads=threads,
            seed=seed,
        )
        for i in range(writers)
    ]
    result = KillRunResult(writers, threads)
    running = {spec.writer: processes.start(writer_process_main, spec, spec.writer) for spec in specs}
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        time.sleep(rng.uniform(*kill_every))
        victim = rng.choice(specs)
        processes.kill(running[victim.writer])
        result.kills += 1
        running[victim.writer] = processes.start(writer_process_main, victim, victim.writer)
        result.restarts += 1
        for spec in specs:
            code = running[spec.writer].exitcode
            if code is not None and code != 0:
                result.problems.append(f"writer {spec.writer} exited with {code}")
                running[spec.writer] = processes.start(writer_process_main, spec, spec.writer)
    stop_file(run_dir).touch()
    for process in running.values():
        process.join(120)
        if process.is_alive():
            result.problems.append(f"writer {process.name} did not stop within 120 s")
            processes.kill(process)
        elif process.exitcode not in (0, None):
            result.problems.append(f"writer {process.name} exited with {process.exitcode}")
    result.seconds = time.monotonic() - started
    with target.persist() as persist:
        result.verdict = verify_run(
            persist, run_dir, branches, backend=target.backend, address=target.address
        )
    result.problems += result.verdict.problems()
    ledger = result.verdict.ledger
    log(
        f"  random kills: {result.kills} kills of {writers} writer process(es) x {threads} thread(s) in "
        f"{result.seconds:.0f} s; {ledger.acknowledged} acknowledged, {ledger.landed} on branches, "
        f"{len(ledger.lost)} lost"
    )
    return result
