"""The asymmetric-commit experiment: N writers commit to one branch as fast as they can for a
duration, each with its own number of puts per commit (default one writer with 1, one with 10).

The storage design predicts that under optimistic retries the writer with the longer commits keeps
losing the compare-and-swap race. This measures it, per writer: commits, commits/s, share of all
commits, attempts per commit (mean, p99, max), retry-budget timeouts, and latency (p50, p99, max),
all from HDR histograms. Writers are threads sharing one store (one process, so in-process
policies coordinate them) or separate processes, each with its own connection (the realistic case:
several servers on one database).

Every commit puts new tables under keys no other commit uses, so the writers never conflict on
keys: every retry is a lost race on the branch, nothing else.
"""

from __future__ import annotations

import datetime
import multiprocessing
import queue
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from loadgen.contentgen.recording import classify
from loadgen.experiments.writer_stats import WriterStats, writer_row
from loadgen.latency import LATENCY_MAX_US, latency_histogram, max_ms, ms
from loadgen.metrics import worker_metrics
from loadgen.runs.events import OK, RETRY_TIMEOUT, Event, EventWriter
from loadgen.targets.connect import connect
from loadgen.targets.policy import apply_policy
from loadgen.targets.target import Target, TargetConnection
from persist_spi.columns import columns
from persist_spi.errors import InputError, LochkitError
from persist_spi.versionstore.api import VersionStoreApi
from persist_spi.versionstore.content import ContentKey, IcebergTable
from persist_spi.versionstore.errors import ReferenceConflictError, ReferenceRetryFailureError
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import NamedRef, branch

#: Nessie's Java client call a commit corresponds to (the run format's action name).
COMMIT_ACTION: Final = "commitMultipleOperations"
#: A writer stops after this many errors in a row (an unreachable database), with the last one.
MAX_ERRORS_IN_A_ROW: Final = 20
#: How long worker processes may take to start and connect.
START_TIMEOUT_S: Final = 180.0


class ExperimentError(LochkitError):
    """The experiment could not run; the message says why and what to do."""


@dataclass(frozen=True)
class AsymmetricOptions:
    duration_s: float = 20.0
    #: Puts per commit, one writer each.
    puts: tuple[int, ...] = (1, 10)
    #: The commit policy; None: the target's default (``loadgen.targets.policy.default_policy``).
    policy: str | None = None
    processes: bool = False

    def validate(self) -> None:
        if self.duration_s <= 0:
            raise InputError("--duration must be greater than zero")
        if not self.puts:
            raise InputError("--writers needs at least one writer")
        if any(p < 1 for p in self.puts):
            raise InputError("--writers: every writer puts at least 1 key per commit")


@dataclass
class ExperimentResult:
    branch: str
    duration_s: float
    writers: list[WriterStats]

    @property
    def commits(self) -> int:
        return sum(w.commits for w in self.writers)

    def rows(self) -> list[dict[str, Any]]:
        return [writer_row(w, self.commits, self.duration_s) for w in self.writers]

    def total_row(self) -> dict[str, Any]:
        latency = latency_histogram()
        for w in self.writers:
            latency.add(w.latency)
        calls = sum(w.attempts.get_total_count() for w in self.writers)
        attempts = sum(w.attempts.get_mean_value() * w.attempts.get_total_count() for w in self.writers)
        return {
            "writer": "all",
            "commits": self.commits,
            "commits_per_s": round(self.commits / self.duration_s, 1),
            "attempts_mean": round(attempts / calls, 2) if calls else 0.0,
            "attempts_max": max((w.attempts.get_max_value() for w in self.writers), default=0),
            "timeouts": sum(w.timeouts for w in self.writers),
            "conflicts": sum(w.conflicts for w in self.writers),
            "errors": sum(w.errors for w in self.writers),
            "p50_ms": ms(latency, 50),
            "p99_ms": ms(latency, 99),
            "max_ms": max_ms(latency),
        }


def new_branch_name() -> str:
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%S")
    return f"asymmetric-{stamp}-{random.randrange(16**6):06x}"


def create_branch(api: VersionStoreApi, name: str) -> NamedRef:
    b = branch(name)
    default = api.reference(branch(api.default_branch())).hash
    api.create_reference(b, default)
    return b


def run_writer(
    api: VersionStoreApi,
    b: NamedRef,
    name: str,
    puts: int,
    deadline: float,
    events: EventWriter | None,
) -> WriterStats:
    """Commit ``puts`` new tables per commit until ``deadline`` (monotonic s)."""
    stats = WriterStats(name, puts)
    started = time.monotonic()
    errors_in_a_row = 0
    n = 0
    while time.monotonic() < deadline:
        ops = [
            Put(ContentKey.of(f"{name}-{n}-{p}"), IcebergTable(metadata_location=f"asym/{name}/{n}/{p}"))
            for p in range(puts)
        ]
        wall = time.time_ns()
        t0 = time.perf_counter_ns()
        outcome, kind, attempts, commit_hash = OK, None, 1, None
        try:
            result = api.commit(b, None, CommitMeta(f"{name} commit {n}"), ops)
            attempts, commit_hash = result.attempts, str(result.hash)
        except (ReferenceRetryFailureError, ReferenceConflictError) as e:
            outcome, kind = classify(e)
            attempts = e.attempts
        except Exception as e:  # the database or server failed: count it, go on for a while
            outcome, kind = classify(e)
            stats.last_error = f"{type(e).__name__}: {e}"
        duration = time.perf_counter_ns() - t0
        if outcome == OK:
            stats.commits += 1
            stats.latency.record_value(min(max(duration // 1000, 1), LATENCY_MAX_US))
            errors_in_a_row = 0
        elif outcome == RETRY_TIMEOUT:
            stats.timeouts += 1
        elif kind is not None and outcome == "conflict":
            stats.conflicts += 1
        else:
            stats.errors += 1
            errors_in_a_row += 1
        if outcome in (OK, RETRY_TIMEOUT):
            stats.attempts.record_value(max(1, attempts))
        if events is not None:
            events.add(
                Event(wall, duration, name, COMMIT_ACTION, outcome, puts, attempts, kind, b.name, commit_hash)
            )
        if errors_in_a_row >= MAX_ERRORS_IN_A_ROW:
            break
        n += 1
    stats.elapsed_s = time.monotonic() - started
    return stats


def writer_names(puts: Sequence[int]) -> list[str]:
    return [f"w{i}-{p}put" for i, p in enumerate(puts)]


def run_threads(target: Target, options: AsymmetricOptions, events: EventWriter | None) -> ExperimentResult:
    """Writers as threads sharing the target's store (and so its commit policy)."""
    b = create_branch(target.api, new_branch_name())
    names = writer_names(options.puts)
    barrier = threading.Barrier(len(names))
    results: list[WriterStats | None] = [None] * len(names)
    failures: list[BaseException] = []

    def writer(i: int) -> None:
        try:
            barrier.wait(timeout=60)
            deadline = time.monotonic() + options.duration_s
            results[i] = run_writer(target.api, b, names[i], options.puts[i], deadline, events)
        except BaseException as e:
            failures.append(e)
            barrier.abort()

    threads = [threading.Thread(target=writer, args=(i,), name=names[i]) for i in range(len(names))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise failures[0]
    return ExperimentResult(b.name, options.duration_s, [r for r in results if r is not None])


def _process_writer(
    connection: TargetConnection,
    policy: str | None,
    branch_name: str,
    name: str,
    puts: int,
    duration_s: float,
    events_path: str | None,
    ready: Any,
    go: Any,
    results: Any,
) -> None:
    try:
        target = connect(connection)
    except BaseException as e:
        ready.put((name, f"{type(e).__name__}: {e}"))
        return
    try:
        apply_policy(target, policy)
        metrics = worker_metrics()
        if metrics is not None:
            metrics.instrument(target)
        ready.put((name, None))
        if not go.wait(START_TIMEOUT_S):
            return
        deadline = time.monotonic() + duration_s
        events = EventWriter(Path(events_path)) if events_path else None
        try:
            stats = run_writer(target.api, branch(branch_name), name, puts, deadline, events)
        finally:
            if events is not None:
                events.close()
        results.put(stats.to_wire())
    except BaseException as e:
        results.put({"writer": name, "failure": f"{type(e).__name__}: {e}"})
    finally:
        target.close()


def run_processes(
    target: Target, options: AsymmetricOptions, events: EventWriter | None, scratch: Path
) -> ExperimentResult:
    """Writers as separate processes, each with its own connection to the target."""
    if target.connection is None:
        raise ExperimentError(
            f"--processes: {target.backend} cannot be shared by several processes "
            + (f"({'; '.join(target.notes)})" if target.notes else "")
            + "; run the writers as threads (without --processes) or use a server backend"
        )
    b = create_branch(target.api, new_branch_name())
    names = writer_names(options.puts)
    context = multiprocessing.get_context("spawn")
    ready, results, go = context.Queue(), context.Queue(), context.Event()
    parts = [scratch / f"events-{name}.parquet" for name in names] if events is not None else []
    processes = [
        context.Process(
            target=_process_writer,
            args=(
                target.connection,
                options.policy,
                b.name,
                names[i],
                options.puts[i],
                options.duration_s,
                str(parts[i]) if parts else None,
                ready,
                go,
                results,
            ),
            name=names[i],
        )
        for i in range(len(names))
    ]
    for p in processes:
        p.start()
    try:
        _wait_ready(ready, names, processes)
        go.set()
        collected = _collect(results, len(names), options.duration_s)
    finally:
        go.set()
        for p in processes:
            p.join(30)
            if p.is_alive():
                p.terminate()
    for part in parts:
        if part.exists() and events is not None:
            events.append_file(part)
            part.unlink()
    by_name = {s.writer: s for s in collected}
    return ExperimentResult(b.name, options.duration_s, [by_name[n] for n in names])


def _wait_ready(ready: Any, names: list[str], processes: list[Any]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    pending = set(names)
    while pending:
        try:
            name, failure = ready.get(timeout=1.0)
        except queue.Empty:
            dead = [p.name for p in processes if p.name in pending and not p.is_alive()]
            if dead:
                raise ExperimentError(
                    f"writer process(es) {', '.join(dead)} exited before starting"
                ) from None
            if time.monotonic() > deadline:
                raise ExperimentError(
                    f"writer process(es) {', '.join(sorted(pending))} did not connect within "
                    f"{START_TIMEOUT_S:.0f} s"
                ) from None
            continue
        if failure is not None:
            raise ExperimentError(f"writer process {name} could not connect: {failure}")
        pending.discard(name)


def _collect(results: Any, count: int, duration_s: float) -> list[WriterStats]:
    collected: list[WriterStats] = []
    deadline = time.monotonic() + duration_s + START_TIMEOUT_S
    while len(collected) < count:
        try:
            doc = results.get(timeout=max(1.0, deadline - time.monotonic()))
        except queue.Empty:
            raise ExperimentError(f"only {len(collected)} of {count} writer processes reported") from None
        if "failure" in doc:
            raise ExperimentError(f"writer process {doc['writer']} failed: {doc['failure']}")
        collected.append(WriterStats.from_wire(doc))
    return collected


def prepare(target: Target, options: AsymmetricOptions, instrument: Callable[[Target], None] | None) -> str:
    """Give the target the policy (then, optionally, the metrics wrappers): once per target.
    Answers the policy's name (the target's default when the options name none)."""
    options.validate()
    policy = apply_policy(target, options.policy)
    if instrument is not None:
        instrument(target)
    return policy


def run(
    target: Target,
    options: AsymmetricOptions,
    events: EventWriter | None,
    scratch: Path,
) -> ExperimentResult:
    """One run on a target :func:`prepare` made ready: a new branch, the writers, their stats."""
    if options.processes:
        return run_processes(target, options, events, scratch)
    return run_threads(target, options, events)


def render(result: ExperimentResult, heading: str, out: Callable[[str], None]) -> None:
    """The per-writer table, as the command prints it."""
    render_rows([*result.rows(), result.total_row()], heading, out)
    errors = [w for w in result.writers if w.last_error]
    for w in errors:
        out(f"{w.writer}: {w.errors} errors, last: {w.last_error}")


def render_rows(rows: Sequence[Mapping[str, Any]], heading: str, out: Callable[[str], None]) -> None:
    """Rows of :func:`writer_row`'s fields (lochkit's, or Nessie's side's) as a table."""
    # (title, field, right-aligned)
    table = (
        ("writer", "writer", False),
        ("puts", "puts_per_commit", True),
        ("commits", "commits", True),
        ("commits/s", "commits_per_s", True),
        ("share", "share", True),
        # Attempts per commit and commit latency each have a p99 and a max: every title says which.
        ("attempts mean", "attempts_mean", True),
        ("attempts p99", "attempts_p99", True),
        ("attempts max", "attempts_max", True),
        ("timeouts", "timeouts", True),
        ("latency p50 ms", "p50_ms", True),
        ("latency p99 ms", "p99_ms", True),
        ("latency max ms", "max_ms", True),
    )
    cells = [[_cell(row.get(field, ""), field) for _, field, _ in table] for row in rows]
    out(heading)
    right = [i for i, (_, _, right_aligned) in enumerate(table) if right_aligned]
    for line in columns([title for title, _, _ in table], cells, right_aligned=right):
        out(line)


def _cell(value: Any, field: str) -> str:
    if field == "share" and isinstance(value, float):
        return f"{value * 100:.1f} %"
    if isinstance(value, float):
        return f"{value:.2f}" if field.endswith("_ms") or field == "attempts_mean" else f"{value:.1f}"
    return str(value)
