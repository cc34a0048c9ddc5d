"""Progress of long steps (downloads, builds, server starts, bulk loads), for the person waiting.

On a terminal the running step is one line, redrawn every second: what is happening, how long it
has taken and how far along it is (``done/total``, or the last line the step's tool printed).
Anywhere else (a CI log, a file) each step writes exactly one line, when it ends, with its
duration, so logs stay short. Code reports a step with :func:`step`; an entry point decides where
steps go by installing a :class:`Reporter` (:func:`install`), e.g. the pytest plugin, which must
write around pytest's output capture.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TextIO

#: Longest note shown after a step on the live line (the rest of the line is for what and time).
_NOTE_WIDTH = 60


@dataclass
class Step:
    """One step in progress; its owner updates ``done`` or ``note`` as it goes."""

    what: str
    total: int | None = None
    unit: str = ""
    done: int = 0
    note: str = ""
    started: float = field(default_factory=time.monotonic)

    def advance(self, amount: int = 1) -> None:
        self.done += amount

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def status(self) -> str:
        """``what``, elapsed time and how far along, as the live line shows it."""
        parts = [f"{self.what} ({self.elapsed():.0f} s"]
        if self.total:
            unit = f" {self.unit}" if self.unit else ""
            parts.append(f", {self.done:,}/{self.total:,}{unit}, {100 * self.done / self.total:.0f} %")
        parts.append(")")
        note = " ".join(self.note.split())
        if note:
            parts.append(f": {note[:_NOTE_WIDTH]}")
        return "".join(parts)


class Reporter:
    """Writes each step that took at least ``min_seconds`` through ``write_line`` when it ends (a
    step over sooner kept nobody waiting; a failed one is explained by its error); with ``live``
    (a terminal), also redraws the running step there every ``interval`` seconds."""

    def __init__(
        self,
        write_line: Callable[[str], None],
        live: TextIO | None = None,
        *,
        interval: float = 1.0,
        min_seconds: float = 1.0,
    ) -> None:
        self._write_line = write_line
        self._live = live
        self._interval = interval
        self._min_seconds = min_seconds
        self._steps: list[Step] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._drawer: threading.Thread | None = None

    @classmethod
    def for_stream(cls, stream: TextIO) -> Reporter:
        """Lines to ``stream``, redrawn live when it is a terminal."""

        def write_line(text: str) -> None:
            stream.write(text + "\n")
            stream.flush()

        return cls(write_line, stream if _is_terminal(stream) else None)

    @property
    def live(self) -> bool:
        return self._live is not None

    @contextlib.contextmanager
    def step(self, what: str, *, total: int | None = None, unit: str = "") -> Iterator[Step]:
        current = Step(what, total, unit)
        with self._lock:
            self._steps.append(current)
        self._start_drawing()
        ok = False
        try:
            yield current
            ok = True
        finally:
            seconds = current.elapsed()
            with self._lock:  # so the live line is not redrawn between clearing it and this line
                self._steps.remove(current)
                self._clear_live()
                if seconds >= self._min_seconds:
                    self._write_line(f"{what}: {'done in' if ok else 'failed after'} {seconds:.1f} s")
            self._wake.set()

    def _start_drawing(self) -> None:
        if self._live is None or (self._drawer is not None and self._drawer.is_alive()):
            return
        self._drawer = threading.Thread(target=self._draw_while_busy, name="lochkit-progress", daemon=True)
        self._drawer.start()

    def _draw_while_busy(self) -> None:
        while True:
            with self._lock:
                if not self._steps:
                    return
                self._draw(" > ".join(s.status() if s is self._steps[-1] else s.what for s in self._steps))
            self._wake.wait(self._interval)
            self._wake.clear()

    def _draw(self, text: str) -> None:
        assert self._live is not None
        with contextlib.suppress(OSError, ValueError):
            self._live.write("\r\x1b[K" + text[: line_width()])
            self._live.flush()

    def _clear_live(self) -> None:
        if self._live is not None:
            with contextlib.suppress(OSError, ValueError):
                self._live.write("\r\x1b[K")
                self._live.flush()


def line_width() -> int:
    """The longest line a redraw in place may write: one that fills the terminal's last column
    wraps, and ``\r`` then returns only to the start of its last row."""
    return shutil.get_terminal_size().columns - 1


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


_reporter: Reporter | None = None


def reporter() -> Reporter:
    """The installed reporter; by default lines on stderr, live when stderr is a terminal."""
    global _reporter
    if _reporter is None:
        _reporter = Reporter.for_stream(sys.stderr)
    return _reporter


def install(new: Reporter | None) -> Reporter | None:
    """Route every later step to ``new`` (None: back to the default); returns the one it replaces."""
    global _reporter
    previous, _reporter = _reporter, new
    return previous


def step(what: str, *, total: int | None = None, unit: str = "") -> contextlib.AbstractContextManager[Step]:
    """Report a long step: ``with step("downloading X") as s: ...`` (update ``s.done``/``s.note``)."""
    return reporter().step(what, total=total, unit=unit)
