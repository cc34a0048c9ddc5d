"""Races that hit their window: workers released together, round after round, and made to take
turns inside the adapter's own code.

A check-then-act adapter (read, then write in a second step) is wrong only when another writer
slips in between. Threads that merely start together drift apart after a few calls and rarely meet
in that window again; and when the adapter runs in this process, the window between its read and
its write may be a few bytecodes, far shorter than a thread switch. So:

- every round starts at a barrier: all workers make the same call at the same moment;
- while a worker runs a line of the adapter's own source files, it hands the interpreter to the
  other workers first (a trace function that yields at every line). Every point between two
  statements of the adapter, such as between its read and its write, becomes a place where
  the others run. Only the adapter's files are traced, so database drivers run at full speed;
- Python is asked to switch threads as often as it can.

With that, a check-then-act adapter loses rounds on every run (the self-check measures it) and a
correct one never does: a trace function changes timing, not semantics.
"""

from __future__ import annotations

import inspect
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from types import FrameType
from typing import Any

#: The shortest thread switch interval Python accepts in practice; the default is 5 ms.
_SWITCH_INTERVAL_SECONDS = 1e-6
_BARRIER_TIMEOUT_SECONDS = 60.0


@contextmanager
def frequent_thread_switches() -> Iterator[None]:
    """Ask the interpreter to switch threads after every few instructions, then restore it."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(_SWITCH_INTERVAL_SECONDS)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


def source_files_of(obj: object, *, stop_at: type) -> frozenset[str]:
    """The source files of ``obj``'s class and its bases up to (not including) ``stop_at``."""
    files = set()
    for cls in type(obj).__mro__:
        if cls is stop_at or not issubclass(cls, stop_at):
            continue
        try:
            files.add(inspect.getfile(cls))
        except (TypeError, OSError):  # a class without a Python source file (a C extension)
            continue
    return frozenset(files)


@contextmanager
def turns_inside(files: Collection[str]) -> Iterator[None]:
    """Threads started in this block yield to the others before every line they run in ``files``."""
    wanted = frozenset(files)

    def at_line(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            time.sleep(0)  # releases the interpreter: another worker runs now
        return at_line

    def on_call(frame: FrameType, event: str, arg: Any) -> Any:
        return at_line if frame.f_code.co_filename in wanted else None

    previous = threading.gettrace()
    threading.settrace(on_call)
    try:
        yield
    finally:
        threading.settrace(previous)


def race_in_lockstep(
    workers: int,
    rounds: int,
    act: Callable[[int, int], Any],
    *,
    before_round: Callable[[int], None] | None = None,
    read: Callable[[int, int], None] | None = None,
    after_round: Callable[[int], None] | None = None,
    turns_in: Collection[str] = (),
) -> list[list[Any]]:
    """Runs ``rounds`` rounds; in each, ``workers`` threads call ``act(round, worker)`` together.

    ``before_round(round)`` and ``after_round(round)`` run alone, while no worker acts (to set up
    what the workers race for, and to check what the round left behind). ``read(round, worker)``
    runs in every worker before the round's shared start, so each worker can read the state it then
    acts on, and all of them read the same state. Workers take turns at every line of the source
    files ``turns_in`` (the adapter's, see :func:`source_files_of`). Returns the results per round,
    in worker order.
    """
    finished = [-1]  # the last round every worker has finished

    def between_rounds() -> None:  # run by one thread while all wait at the barrier
        if finished[0] >= 0 and after_round is not None:
            after_round(finished[0])
        finished[0] += 1
        if finished[0] < rounds and before_round is not None:
            before_round(finished[0])

    settled = threading.Barrier(workers, action=between_rounds)
    start = threading.Barrier(workers)
    results: list[list[Any]] = [[None] * workers for _ in range(rounds)]

    def worker(index: int) -> None:
        settled.wait(_BARRIER_TIMEOUT_SECONDS)
        for r in range(rounds):
            if read is not None:
                read(r, index)
            start.wait(_BARRIER_TIMEOUT_SECONDS)  # every worker has read; now all act at once
            results[r][index] = act(r, index)
            settled.wait(_BARRIER_TIMEOUT_SECONDS)  # after_round(r), then before_round(r + 1)

    with frequent_thread_switches(), turns_inside(turns_in), ThreadPoolExecutor(workers) as pool:
        futures = [pool.submit(worker, i) for i in range(workers)]
        errors = [e for e in (f.exception() for f in futures) if e is not None]
    # A failing worker breaks the barriers for the others: report the failure, not the breakage.
    errors.sort(key=lambda e: isinstance(e, threading.BrokenBarrierError))
    if errors:
        raise errors[0]
    return results
