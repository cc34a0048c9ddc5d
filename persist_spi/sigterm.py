"""SIGTERM (a job cancelled, ``timeout``, ``kill``) ends a command the way Ctrl-C does: as a
KeyboardInterrupt, so the ``finally`` blocks and context managers of what it started (database
servers, Toxiproxy, work directories) stop them, instead of leaving them running after it."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """Within the block, SIGTERM raises KeyboardInterrupt in the main thread. Where someone else
    already decided what SIGTERM does (or off the main thread, where no handler can be set), the
    block runs unchanged."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) not in (
        signal.SIG_DFL,
        None,
    ):
        yield
        return
    signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum} (SIGTERM)")
