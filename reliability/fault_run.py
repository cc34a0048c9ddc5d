"""What server and network fault runs share: writers that keep committing through the faults, a
prober that times single Persist calls and records what they raise, and the verdict.

Writers and prober keep the clients (connections, pools) they started with: a fault run checks
that lochkit resumes by itself once the fault is gone, not that a new client works.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.process import BaseProcess
from pathlib import Path

from persist_spi.errors import LochkitError
from persist_spi.objs import content_value
from persist_spi.persist import Persist
from reliability import processes
from reliability.target import Target
from reliability.verification import RunVerdict, verify_run
from reliability.writer import WriterSpec, stop_file, writer_process_main


@dataclass(frozen=True)
class Probe:
    phase: str
    operation: str
    seconds: float
    #: ``Type: message`` of what it raised, or None.
    error: str | None
    #: The error is one of lochkit's documented types.
    typed: bool


class Prober:
    """Alternates a reference read and an object write, each one Persist call, on its own thread."""

    def __init__(self, persist: Persist, interval: float = 0.2) -> None:
        self.persist = persist
        self.interval = interval
        self.phase = "normal"
        self.results: list[Probe] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="prober", daemon=True)
        #: (operation, started) of the call in progress, to spot a hang while it lasts.
        self.in_flight: tuple[str, float] | None = None

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float) -> bool:
        """False if the current call did not return within ``timeout`` (it hangs)."""
        self._stop.set()
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _loop(self) -> None:
        n = 0
        while not self._stop.is_set():
            n += 1
            operation = "read" if n % 2 else "write"
            phase = self.phase
            started = time.monotonic()
            self.in_flight = (operation, started)
            error: BaseException | None = None
            try:
                if operation == "read":
                    self.persist.fetch_reference("refs/heads/main")
                else:
                    self.persist.store_obj(content_value("probe", 1, uuid.uuid4().bytes))
            except Exception as e:  # recorded: untyped errors are a finding
                error = e
            self.in_flight = None
            described = None if error is None else f"{type(error).__name__}: {error}"[:300]
            typed = error is None or isinstance(error, LochkitError)
            self.results.append(Probe(phase, operation, time.monotonic() - started, described, typed))
            self._stop.wait(self.interval)

    def wait_for_success(self, timeout: float) -> float | None:
        """Seconds until a probe call succeeds (counted from now), or None."""
        started = time.monotonic()
        seen = len(self.results)
        while time.monotonic() - started < timeout:
            if any(p.error is None for p in self.results[seen:]):
                return time.monotonic() - started
            time.sleep(0.05)
        return None


def resumed_text(resumed: float | None) -> str:
    return f"after {resumed:.1f} s" if resumed is not None else "NOT within the bound"


@dataclass
class FaultRunResult:
    kind: str
    faults: int = 0
    seconds: float = 0.0
    probes: list[Probe] = field(default_factory=list)
    #: Seconds until lochkit worked again after each fault ended (None: it did not, in time).
    resumed_after: list[float | None] = field(default_factory=list)
    verdict: RunVerdict | None = None
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def longest_call(self) -> float:
        return max((p.seconds for p in self.probes), default=0.0)

    def errors_by_type(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for p in self.probes:
            if p.error is not None:
                name = p.error.split(":", 1)[0]
                counts[name] = counts.get(name, 0) + 1
        return counts

    def summary(self) -> str:
        ledger = self.verdict.ledger if self.verdict else None
        commits = (
            f"{ledger.acknowledged} acknowledged, {ledger.ambiguous} ambiguous, {len(ledger.lost)} lost"
            if ledger
            else "not verified"
        )
        errors = ", ".join(f"{n} {name}" for name, n in sorted(self.errors_by_type().items())) or "none"
        return (
            f"  {self.kind}: {self.faults} in {self.seconds:.0f} s; longest call {self.longest_call:.1f} s; "
            f"errors while faulty: {errors}; {commits}"
        )

    def check_probes(self, bound: float) -> None:
        for p in self.probes:
            if not p.typed:
                self.problems.append(f"{p.phase}: a {p.operation} raised an undocumented error: {p.error}")
            if p.seconds > bound:
                self.problems.append(
                    f"{p.phase}: a {p.operation} took {p.seconds:.1f} s, above the {bound:.0f} s bound"
                )


@contextlib.contextmanager
def writers_running(
    target: Target, url: str | None, run_dir: Path, branches: tuple[str, ...], seed: int
) -> Iterator[list[BaseProcess]]:
    """Writer process(es) committing through ``url`` until the block ends; two processes of two
    threads where the backend allows several processes, else one of three threads."""
    count, threads = (2, 2) if target.multi_process else (1, 3)
    specs = [
        WriterSpec(
            target.backend,
            url,
            target.options,
            target.repository_id,
            f"f{i}",
            branches,
            str(run_dir),
            threads=threads,
            seed=seed,
            resolve_seconds=300.0,
        )
        for i in range(count)
    ]
    running = [processes.start(writer_process_main, spec, spec.writer) for spec in specs]
    try:
        yield running
    finally:
        stop_file(run_dir).touch()
        for process in running:
            process.join(600)
            if process.is_alive():
                processes.kill(process)


def finish(
    result: FaultRunResult,
    target: Target,
    run_dir: Path,
    branches: tuple[str, ...],
    running: list[BaseProcess],
) -> None:
    for process in running:
        if process.exitcode not in (0, None):
            result.problems.append(f"writer {process.name} exited with {process.exitcode}")
    with target.persist() as persist:
        result.verdict = verify_run(
            persist, run_dir, branches, backend=target.backend, address=target.address
        )
    result.problems += result.verdict.problems()
    for n, resumed in enumerate(result.resumed_after, start=1):
        if resumed is None:
            result.problems.append(f"fault {n}: lochkit did not work again after the fault ended")
