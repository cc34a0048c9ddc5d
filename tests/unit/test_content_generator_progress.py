"""The progress bar: rate and ETA on a terminal, a count when the total is unknown, silence
elsewhere."""

from __future__ import annotations

import io

import pytest

from loadgen.contentgen.progress import Progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_it_draws_count_rate_and_eta_in_place() -> None:
    stream = _Terminal()
    progress = Progress(3, "copy", stream=stream, unit="copies")
    for _ in range(3):
        progress.advance()
    progress.close()
    shown = stream.getvalue()
    assert shown.startswith("\rcopy [")
    assert f"[{'#' * 30}] 3/3 copies " in shown
    assert "/s ETA 0:00" in shown
    assert shown.endswith("\n")  # the summary that follows starts on its own line
    assert shown.count("\n") == 1


def test_without_a_total_it_counts_with_the_rate_and_no_eta() -> None:
    stream = _Terminal()
    progress = Progress(None, "delete", stream=stream, unit="keys")
    progress.advance(5)
    progress.close()
    shown = stream.getvalue()
    assert "\rdelete 5 keys " in shown
    assert "/s" in shown
    assert "ETA" not in shown
    assert "[" not in shown


def test_off_a_terminal_it_writes_nothing() -> None:
    stream = io.StringIO()  # a pipe or a file: isatty() is False
    progress = Progress(10, "generate", stream=stream)
    assert not progress.enabled
    for _ in range(10):
        progress.advance()
    progress.close()
    assert stream.getvalue() == ""


def test_on_a_narrow_terminal_every_redraw_fits_on_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A line longer than the terminal wraps, and ``\\r`` then returns only to the start of its last
    row: every redraw would leave a row behind."""
    monkeypatch.setenv("COLUMNS", "40")
    stream = _Terminal()
    progress = Progress(1000, "generate a long label", stream=stream, unit="commits")
    progress.advance(500)
    progress.close()
    drawn = [part.rstrip("\n") for part in stream.getvalue().split("\r") if part]
    assert drawn
    assert all(len(part) < 40 for part in drawn), drawn
    assert drawn[-1].startswith("generate a long label")
