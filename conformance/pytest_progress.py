"""Progress of provisioning during a pytest run, shown around pytest's output capture.

Servers are installed and started inside a test's setup, where pytest captures output, so a step
line written the ordinary way would only appear in a failing test's report. Lines go through the
terminal reporter with capture suspended for that moment; on a terminal the running step is also
redrawn on the controlling terminal itself, from a background thread that never touches capture.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TextIO

import pytest

from persist_spi import progress


def install(config: pytest.Config) -> None:
    """Route progress steps to this session's terminal until the session's config is cleaned up."""
    plugins = config.pluginmanager
    terminal = plugins.get_plugin("terminalreporter")

    def write_line(text: str) -> None:
        capture = plugins.get_plugin("capturemanager")
        suspended = capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext()
        with suspended:
            if terminal is None:
                sys.stderr.write(text + "\n")
                return
            writer = config.get_terminal_writer()
            if writer.width_of_current_line:  # after a row of progress dots
                writer.line()
            writer.line(text)

    live = _controlling_terminal() if terminal is not None and terminal.isatty else None
    previous = progress.install(progress.Reporter(write_line, live))

    def restore() -> None:
        progress.install(previous)
        if live is not None:
            live.close()

    config.add_cleanup(restore)


def _controlling_terminal() -> TextIO | None:
    try:
        return open("/dev/tty", "w")
    except OSError:
        return None
