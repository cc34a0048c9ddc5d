"""Crashes while the ``coordinated`` policy's commit-target lease is held: the lease must expire and
the branch keep moving, with nothing acknowledged lost.

Writer processes commit to one branch under ``coordinated`` (processes take turns through the lease
kept in the database). Each keeps the lease a short pause before it commits
(:class:`reliability.lease_watch.LeaseWatch`), and journals when it holds it and when it starts to
give it up. At random moments the supervisor waits for a writer whose journal says it holds the
lease, SIGKILLs it, starts it again, and measures how long the branch stands still: until the first
commit acknowledged after the kill. The dead writer's ticket can only be passed by a waiter that
saw it stand still for the lease's expiry (``commit-lease-millis``) and skipped it.

Afterwards, per kill: the victim journaled ``hold`` for its ticket and never ``releasing`` (it held
the lease and had not started to give it up), nobody had skipped the ticket before the kill, some
writer journaled ``skip`` for it afterwards (it expired and was taken over), and the branch moved
again within the expiry plus a slack. Writers wait for the lease far longer than that before they
commit without it, so a lease that never expires shows as a stall.
Then every acknowledged commit must be on the branch exactly once and the repository consistent
(:mod:`reliability.ledger`, :func:`reliability.verification.verify_run`).

Where a database cannot be shared between processes (RocksDB), one writer process is killed while it
holds the lease and started again: the restarted process finds its predecessor's ticket served and
must wait for it to expire.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from reliability import processes
from reliability.crash_campaign import ensure_branches
from reliability.lease_watch import LeaseEvents
from reliability.target import Target
from reliability.verification import RunVerdict, verify_run
from reliability.writer import WriterSpec, stop_file, writer_process_main

BRANCH = "leased"
#: The branch may stand still this much longer than the lease's expiry after its holder died: the
#: waiters' polling, a commit on a loaded machine, and (one process only) the restart.
STALL_SLACK_SECONDS = 2.0
#: The same where one commit takes several slow compare-and-swaps (Cassandra's LWTs, DynamoDB Local,
#: FerretDB: hundreds of milliseconds each under load; measured up to 1.8 s from a kill to the next
#: commit on Cassandra with a 1 s expiry on a loaded 2-core machine).
SLOW_STALL_SLACK_SECONDS = 5.0
#: Where one writer process is killed and started again, the stall also holds its restart (opening
#: the store, learning whether its last commit landed).
RESTART_SLACK_SECONDS = 2.0
#: Writers wait this many times the allowed stall before they commit without the lease, so that a
#: lease that never expires shows as a stall instead of being hidden by writers giving up.
GIVE_UP_FACTOR = 3
#: How long the holder keeps the lease before committing (s): a kill at a random moment then finds
#: a holder, and the pause stays far below the expiry, so a live holder is never taken over.
HOLD_PAUSE = (0.02, 0.1)


@dataclass
class Kill:
    writer: str
    #: The lease ticket the victim's journal said it held when the supervisor chose it.
    ticket: tuple[str, int]
    at_ns: int
    #: Seconds until the first commit acknowledged after the kill (None: none came).
    stall: float | None = None
    #: Commits acknowledged after this kill, before the next one.
    commits_after: int = 0
    #: The victim never journaled ``releasing`` for the ticket, nor was it skipped before the kill.
    holding: bool = False
    #: A writer skipped this ticket after it stood still for the lease's expiry.
    expired: bool = False


@dataclass
class LeaseCrashResult:
    writers: int
    lease_seconds: float
    #: Longest stall allowed after a kill: the expiry plus :data:`STALL_SLACK_SECONDS`.
    stall_bound: float
    kills: list[Kill] = field(default_factory=list)
    #: Moments at which no writer held the lease within the stall bound (nobody to kill).
    no_holder: int = 0
    #: Tickets any writer skipped as stalled, the dead holders' included (more than the kills: a
    #: live holder was taken over, its pause too close to the expiry).
    skipped: int = 0
    seconds: float = 0.0
    verdict: RunVerdict | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def kills_holding(self) -> int:
        return sum(k.holding for k in self.kills)

    @property
    def expired(self) -> int:
        return sum(k.holding and k.expired for k in self.kills)

    @property
    def longest_stall(self) -> float:
        return max((k.stall for k in self.kills if k.stall is not None), default=0.0)

    @property
    def fewest_commits_after_a_kill(self) -> int:
        return min((k.commits_after for k in self.kills), default=0)


class JournalTail:
    """The records appended to a run's journals since the last look (each file read once)."""

    def __init__(self, run_dir: Path, pattern: str) -> None:
        self.run_dir = run_dir
        self.pattern = pattern
        self._offsets: dict[Path, int] = {}

    def new_records(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for path in sorted(self.run_dir.glob(self.pattern)):
            with path.open("rb") as f:
                f.seek(self._offsets.get(path, 0))
                data = f.read()
            complete = data[: data.rfind(b"\n") + 1]  # a line still being written waits
            self._offsets[path] = self._offsets.get(path, 0) + len(complete)
            out += [json.loads(line) for line in complete.splitlines()]
        return out


def lease_crashes(
    target: Target,
    run_dir: Path,
    *,
    writers: int,
    seconds: float,
    kill_every: tuple[float, float],
    seed: int,
    lease_millis: int = 1000,
    slow_commits: bool = False,
    stall_slack: float | None = None,
    writer_config: Mapping[str, int] | None = None,
    log: Callable[[str], None] = print,
) -> LeaseCrashResult:
    """``stall_slack``: how much longer than the expiry the branch may stand still after a kill
    (default :data:`STALL_SLACK_SECONDS`, or :data:`SLOW_STALL_SLACK_SECONDS` with ``slow_commits``,
    plus :data:`RESTART_SLACK_SECONDS` for one process).
    ``writer_config`` changes the writers' store config after the run's own (a test gives them a
    lease that never expires, which the run must report)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    lease_seconds = lease_millis / 1000
    if stall_slack is None:
        stall_slack = default_slack(slow_commits=slow_commits, one_process=not target.multi_process)
    bound = lease_seconds + stall_slack
    result = LeaseCrashResult(writers if target.multi_process else 1, lease_seconds, bound)
    with target.persist() as persist:
        ensure_branches(persist, [BRANCH])
    config: dict[str, int | str] = {
        "commit_policy": "coordinated",
        "commit_lease_millis": lease_millis,
        "commit_timeout_millis": int(bound * GIVE_UP_FACTOR * 1000),
        **(writer_config or {}),
    }
    base = WriterSpec(
        target.backend,
        target.url,
        target.options,
        target.repository_id,
        "l",
        (BRANCH,),
        str(run_dir),
        seed=seed,
        config=config,
        lease_pause=HOLD_PAUSE,
    )
    specs = {f"l{i}": replace(base, writer=f"l{i}") for i in range(result.writers)}
    running = {name: processes.start(writer_process_main, spec, name) for name, spec in specs.items()}
    rng = random.Random(seed)
    leases = JournalTail(run_dir, "lease-*.jsonl")
    acks = JournalTail(run_dir, "ledger-*.jsonl")
    events = LeaseEvents()
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        time.sleep(rng.uniform(*kill_every))
        found = _await_holder(leases, events, sorted(specs), rng, bound)
        if found is None:
            result.no_holder += 1
            continue
        victim, ticket = found
        processes.kill(running[victim])
        result.kills.append(Kill(victim, ticket, time.monotonic_ns()))
        running[victim] = processes.start(writer_process_main, specs[victim], victim)
        # Pace the kills: the next only once the branch moved again (or clearly never will).
        _await_ack(acks, result.kills[-1].at_ns, bound * GIVE_UP_FACTOR + 5)
        for name, process in running.items():
            if process.exitcode not in (None, 0):
                result.problems.append(f"writer {name} exited with {process.exitcode}")
                running[name] = processes.start(writer_process_main, specs[name], name)
    stop_file(run_dir).touch()
    for process in running.values():
        process.join(bound * GIVE_UP_FACTOR + 60)
        if process.is_alive():
            result.problems.append(f"writer {process.name} did not stop in time")
            processes.kill(process)
        elif process.exitcode not in (0, None):
            result.problems.append(f"writer {process.name} exited with {process.exitcode}")
    result.seconds = time.monotonic() - started
    events = LeaseEvents()
    events.merge(JournalTail(run_dir, "lease-*.jsonl").new_records())
    measure(result, events, JournalTail(run_dir, "ledger-*.jsonl").new_records())
    result.problems += judge(result)
    with target.persist() as persist:
        result.verdict = verify_run(
            persist, run_dir, [BRANCH], backend=target.backend, address=target.address
        )
    result.problems += result.verdict.problems()
    ledger = result.verdict.ledger
    log(
        f"  lease crashes: {len(result.kills)} kills of {result.writers} writer process(es) in "
        f"{result.seconds:.0f} s, {result.kills_holding} holding the lease, {result.expired} of those "
        f"leases expired and taken over ({result.skipped} tickets skipped in all); longest stall "
        f"{result.longest_stall:.2f} s (lease expiry {lease_seconds:g} s, allowed {bound:g} s); "
        f"{ledger.acknowledged} acknowledged, {len(ledger.lost)} lost"
    )
    return result


def measure(result: LeaseCrashResult, events: LeaseEvents, ledger_records: list[dict[str, Any]]) -> None:
    """Each kill's figures from the complete journals. A victim held the lease at its death when
    it never journaled ``releasing`` for its ticket and nobody had skipped that ticket before the kill
    (a live holder taken over no longer holds it); its lease expired when a writer skipped the ticket
    afterwards. The branch moved again at the first commit acknowledged after the kill."""
    acked = sorted(int(r["t"]) for r in ledger_records if r["e"] == "ack")
    ends = [k.at_ns for k in result.kills[1:]] + [None]
    for kill, end in zip(result.kills, ends, strict=True):
        skipped_at = events.skipped.get(kill.ticket)
        kill.holding = kill.ticket not in events.releasing and (skipped_at is None or skipped_at > kill.at_ns)
        kill.expired = skipped_at is not None and skipped_at > kill.at_ns
        after = [t for t in acked if t > kill.at_ns and (end is None or t <= end)]
        kill.commits_after = len(after)
        kill.stall = (after[0] - kill.at_ns) / 1e9 if after else None
    result.skipped = len(events.skipped)


def default_slack(*, slow_commits: bool, one_process: bool) -> float:
    """How much longer than the lease's expiry the branch may stand still after a kill."""
    slack = SLOW_STALL_SLACK_SECONDS if slow_commits else STALL_SLACK_SECONDS
    return slack + (RESTART_SLACK_SECONDS if one_process else 0)


def judge(result: LeaseCrashResult) -> list[str]:
    """What the kills prove, or why they do not."""
    problems = []
    if not result.kills:
        problems.append(f"no writer was killed while holding the lease ({result.no_holder} looks found none)")
    elif not result.kills_holding:
        problems.append(f"none of the {len(result.kills)} kills found the victim holding the lease")
    for kill in result.kills:
        what = f"writer {kill.writer} killed holding lease ticket {kill.ticket[1]}"
        if kill.stall is None:
            problems.append(f"{what}: the branch never moved again")
        elif kill.stall > result.stall_bound:
            problems.append(
                f"{what}: the branch stood still {kill.stall:.1f} s (lease expiry "
                f"{result.lease_seconds:g} s, allowed {result.stall_bound:g} s)"
            )
        if kill.holding and not kill.expired:
            problems.append(f"{what}: no writer took the dead holder's lease over")
    return problems


def _await_holder(
    leases: JournalTail, events: LeaseEvents, writers: list[str], rng: random.Random, within: float
) -> tuple[str, tuple[str, int]] | None:
    """A writer whose journal says it holds the lease now, and its ticket."""
    deadline = time.monotonic() + within
    while True:
        events.merge(leases.new_records())
        holders = [(w, t) for w in writers if (t := events.holding(w)) is not None]
        if holders:
            return rng.choice(holders)
        if time.monotonic() > deadline:
            return None
        time.sleep(0.002)


def _await_ack(acks: JournalTail, at_ns: int, within: float) -> None:
    """Until a commit acknowledged after ``at_ns`` is journaled, or ``within`` seconds passed."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if any(r["e"] == "ack" and r["t"] > at_ns for r in acks.new_records()):
            return
        time.sleep(0.005)
