"""A progress bar with rate and ETA on a terminal, fitted to its width; nothing otherwise (the
command's own lines report each step there). Without a known total (a delete or refresh of
whatever keys a listing holds, a scan of a whole repository) it counts with the rate and the time
taken, and no ETA."""

from __future__ import annotations

import sys
import time
from typing import Final, TextIO

from persist_spi.progress import line_width

_BAR_WIDTH: Final = 30
#: Narrower than this, a bar says too little to be worth its room.
_MIN_BAR_WIDTH: Final = 10


class Progress:
    def __init__(
        self,
        total: int | None,
        label: str,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        unit: str = "",
    ) -> None:
        self.total = max(total, 1) if total is not None else None
        self.label = label
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.done = 0
        self._start = time.monotonic()
        self._last_draw = 0.0

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        finished = self.total is not None and self.done >= self.total
        if self.enabled and (now - self._last_draw >= 0.2 or finished):
            self._last_draw = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        elapsed = max(now - self._start, 1e-9)
        rate = self.done / elapsed
        unit = f" {self.unit}" if self.unit else ""
        room = line_width() - 2  # the two spaces that blank out the end of a longer earlier line
        if self.total is None:
            line = f"{self.label} {self.done:,}{unit} {rate:,.1f}/s {_clock(now - self._start)}"
        else:
            left = (self.total - self.done) / rate if rate > 0 else 0.0
            counts = f"{self.done}/{self.total}{unit} {rate:,.1f}/s ETA {_clock(left)}"
            # On a narrow terminal the bar shrinks, then goes, before the figures are cut.
            width = min(_BAR_WIDTH, room - len(self.label) - len(counts) - 4)
            filled = int(width * min(self.done, self.total) / self.total) if width > 0 else 0
            bar = f" [{'#' * filled}{'-' * (width - filled)}]" if width >= _MIN_BAR_WIDTH else ""
            line = f"{self.label}{bar} {counts}"
        self.stream.write(f"\r{line[:room]}  ")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self._draw(time.monotonic())
            self.stream.write("\n")
            self.stream.flush()


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return (
        f"{seconds // 3600}:{seconds // 60 % 60:02}:{seconds % 60:02}"
        if seconds >= 3600
        else (f"{seconds // 60}:{seconds % 60:02}")
    )
