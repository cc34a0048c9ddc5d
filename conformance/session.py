"""What the plugin sets up once a pytest session runs lochkit tests, and not before.

The plugin (:mod:`conformance.plugin`) is loaded into every pytest session of every project where
lochkit is installed. Until a session runs lochkit tests it only adds and checks its options. The
session becomes active (:func:`activate`) when it collects a conformance suite test or a test whose
fixtures include the plugin's, or when one of the plugin's fixtures is set up (a test may ask for
one through ``request.getfixturevalue``). Only then does the plugin:

- register :class:`LochkitSession` (the per-backend, per-area report and its terminal summary), the
  setup failures (:mod:`conformance.setup_failure`) and the time limits (:mod:`conformance.fail_fast`)
  as plugin objects;
- show provisioning progress through the terminal (:mod:`conformance.pytest_progress`);
- end the run like Ctrl-C on SIGTERM, so the servers it starts are stopped.

Each of these is undone when the session's configuration is cleaned up.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from conformance import fail_fast, pytest_progress
from conformance.report import ConformanceReport
from conformance.setup_failure import SetupFailures

_SESSION_KEY = pytest.StashKey["LochkitSession"]()


class LochkitSession:
    """The state of an active session, and the hooks that report it (a pytest plugin object)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.report = ConformanceReport()
        self.failures = SetupFailures()
        #: Node id -> (backend, area) of every test the report counts.
        self.test_info: dict[str, tuple[str, str]] = {}
        #: Nessie servers given by address, checked for data once per run: URL -> what they held.
        self.nessie_checked: dict[str, str] = {}
        #: What went wrong with backends on other pytest-xdist workers (see conformance.parallel).
        self.extra_closing_lines: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        info = self.test_info.get(report.nodeid)
        if info is None:
            return
        outcome = _outcome(report)
        if outcome is None:
            return
        reason = None
        if hasattr(report, "wasxfail"):
            reason = str(report.wasxfail)
        elif report.skipped and isinstance(report.longrepr, tuple):
            reason = str(report.longrepr[2])
        backend, area = info
        test_id = report.nodeid.split("::", 1)[-1]
        blocked = bool(getattr(report, "lochkit_blocked", False))
        self.report.record(backend, area, outcome, test_id, reason, blocked=blocked)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(
        self, terminalreporter: Any, exitstatus: int, config: pytest.Config
    ) -> Generator[None, None, None]:
        """After pytest's own summaries (so a failing backend's cause is the last thing on screen)."""
        yield
        if not self.report.areas:
            return
        terminalreporter.section("lochkit conformance summary")
        for line in self.report.lines():
            terminalreporter.write_line(line)
        path = config.getoption("--lochkit-report")
        if path:
            self.report.write(Path(path))
            terminalreporter.write_line(f"report written to {path}")
        for line in self.failures.closing_lines() + self.extra_closing_lines:
            terminalreporter.write_line(line)


def active(config: pytest.Config) -> LochkitSession | None:
    """The session's lochkit state if it was activated, without activating it."""
    return config.stash.get(_SESSION_KEY, None)


def activate(config: pytest.Config) -> LochkitSession:
    """The session's lochkit state, set up the first time it is asked for (see the module docs)."""
    session = config.stash.get(_SESSION_KEY, None)
    if session is not None:
        return session
    session = LochkitSession(config)
    config.stash[_SESSION_KEY] = session
    plugins = config.pluginmanager
    fail_fast.start(config)
    for plugin, name in (
        (fail_fast, "lochkit-fail-fast"),
        (session.failures, "lochkit-setup-failures"),
        (session, "lochkit-session"),
    ):
        plugins.register(plugin, name)
    pytest_progress.install(config)
    interrupt_on_sigterm(config)
    return session


def interrupt_on_sigterm(config: pytest.Config) -> None:
    """SIGTERM (a CI job cancelled, ``timeout``) ends the run like Ctrl-C: fixtures are torn down,
    so the servers it started stop and their work directories go, instead of outliving it."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return  # someone else decided what SIGTERM does

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum} (SIGTERM)")

    def restore() -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    signal.signal(signal.SIGTERM, interrupt)
    config.add_cleanup(restore)


def _outcome(report: pytest.TestReport) -> str | None:
    """One outcome per test: from the call phase, or from setup/teardown when those went wrong."""
    xfail = hasattr(report, "wasxfail")
    if report.when == "setup":
        if report.failed:
            return "error"
        if report.skipped:
            return "xfailed" if xfail else "skipped"
        return None
    if report.when == "call":
        if xfail:
            return "xfailed" if report.skipped else "xpassed"
        return str(report.outcome)
    return "error" if report.failed else None
