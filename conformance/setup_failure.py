"""A backend that cannot be used: one short, stable account of why, for every test that needed it.

A backend can fail before its first test runs in two ways: it cannot be provisioned here (no Docker
engine for CockroachDB, ``--provision external`` without an address), or its server refuses the
adapter (down, wrong password, tables from another lochkit version). The cause is then the same for
every test of that backend, so:

- a backend the user named fails its first test with the whole message, and every later test at
  once with a short line naming the same cause. pytest counts those as "blocked": they fail the
  run, without a section and a summary line each;
- a backend selected only through ``--backend all`` is skipped with the reason, all its tests
  folded into one "SKIPPED [n]" line;
- a lochkit error (the user's to fix) is shown without a traceback; any other exception (a bug in
  an adapter) shows its traceback once, for the adapter's author.

Nothing here keeps a raised exception object: raising the same object again makes Python append to
its traceback on every raise, which made such runs slower and longer with every test.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any, Final, NoReturn

import pytest

from persist_spi.errors import BackendError, LochkitError

#: The category pytest counts a blocked test under (e.g. "1 error, 857 blocked").
BLOCKED: Final = "blocked"
NOT_AVAILABLE: Final = "is not available here"
_HEADLINE_WIDTH: Final = 160
_BLOCKED_KEY = pytest.StashKey[bool]()
_FAILED_HERE_KEY = pytest.StashKey[bool]()


@dataclass(frozen=True)
class SetupFailure:
    """Why ``backend`` cannot be used in this session, as text only."""

    backend: str
    #: NOT_AVAILABLE (no server could be provisioned) or "could not be set up" (it failed).
    state: str
    #: What happened, to what (and the fix, when the error does not carry it apart).
    message: str
    #: How to fix it, when the error carries that apart from the message.
    fix: str | None = None
    #: For an unexpected exception only: its traceback, shown once.
    details: str | None = None

    @classmethod
    def unavailable(cls, backend: str, error: BaseException) -> SetupFailure:
        """No server could be obtained here: under ``--backend all`` its tests are skipped."""
        return cls._of(backend, NOT_AVAILABLE, error)

    @classmethod
    def refused(cls, backend: str, error: BaseException) -> SetupFailure:
        """A server (or the adapter) failed: always a failure."""
        return cls._of(backend, "could not be set up", error)

    @property
    def skippable(self) -> bool:
        return self.state == NOT_AVAILABLE

    @classmethod
    def _of(cls, backend: str, state: str, error: BaseException) -> SetupFailure:
        if isinstance(error, BackendError):
            return cls(backend, state, f"{error.backend} at {error.address}: {error.problem}", error.fix)
        if isinstance(error, LochkitError):
            return cls(backend, state, str(error).removeprefix(f"{backend}: "))
        details = "".join(traceback.format_exception(error)).rstrip()
        return cls(backend, state, f"{type(error).__name__}: {error}", details=details)

    @property
    def first_line(self) -> str:
        """The message's first line (a server's log tail may follow it)."""
        return self.message.strip().splitlines()[0] if self.message.strip() else "(no message)"

    @property
    def headline(self) -> str:
        """The cause, cut to fit a line that is repeated for every blocked test."""
        text = self.first_line
        return text if len(text) <= _HEADLINE_WIDTH else text[: _HEADLINE_WIDTH - 3] + "..."

    @property
    def summary(self) -> str:
        """One line for summaries: backend, state and cause, with the fix a provisioner gave."""
        return f"{self.backend} {self.state}: {self.first_line}"

    def first_report(self) -> str:
        """Everything: state, message, the fix on a line of its own, the traceback of a bug."""
        lines = [f"{self.backend} {self.state}: {self.message}"]
        if self.fix:
            lines.append(f"fix: {self.fix}")
        if self.details:
            lines += ["", self.details]
        return "\n".join(lines)

    def repeat_report(self) -> str:
        first = f"the first error of {self.backend} shows it in full"
        return f"{self.backend} {self.state}: {self.headline} ({first})"


class SetupFailures:
    """Fails or skips the tests of unusable backends, and shapes how pytest reports them. Registered
    as a pytest plugin object by the conformance plugin."""

    def __init__(self) -> None:
        #: Failures that failed tests, with how many, in the order met.
        self.failed: dict[SetupFailure, int] = {}
        #: Skip reasons that hold for every test of a backend or target, and which one.
        self._backend_wide: dict[str, str] = {}

    def fail(self, node: pytest.Item, failure: SetupFailure) -> NoReturn:
        """Fail ``node``'s setup: in full the first time this failure is met, in one line after."""
        node.stash[_FAILED_HERE_KEY] = True
        if failure in self.failed:
            node.stash[_BLOCKED_KEY] = True
            text = failure.repeat_report()
        else:
            text = failure.first_report()
        self.failed[failure] = self.failed.get(failure, 0) + 1
        pytest.fail(text, pytrace=False)

    def skip(self, failure: SetupFailure) -> NoReturn:
        """Skip a test whose backend came only through ``--backend all`` and cannot be used here."""
        self.skip_backend_wide(failure.backend, failure.summary)

    def skip_backend_wide(self, backend: str, reason: str) -> NoReturn:
        """Skip a test for a ``reason`` that holds for every test of ``backend`` (a backend or a
        suite target): pytest then folds all of them into one summary line."""
        self._backend_wide[reason] = backend
        pytest.skip(reason)

    def closing_lines(self) -> list[str]:
        """What went wrong with each backend that failed tests, and its fix: the run's last words."""
        lines: list[str] = []
        for failure, tests in self.failed.items():
            lines += [
                "",
                f"{failure.backend} {failure.state}, so {_tests(tests)} failed without running:",
                f"  {failure.message}",
            ]
            if failure.fix:
                lines.append(f"  fix: {failure.fix}")
        return lines

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        if report.when == "setup":
            if item.stash.get(_BLOCKED_KEY, False) and report.failed:
                report.lochkit_blocked = True
            if item.stash.get(_FAILED_HERE_KEY, False) and report.failed:
                _one_line_in_short_summary(report)
            if report.skipped and isinstance(report.longrepr, tuple):
                reason = str(report.longrepr[2]).removeprefix("Skipped: ")
                backend = self._backend_wide.get(reason)
                if backend is not None:
                    # One "location" for all of them, so that pytest folds them into one line.
                    report.longrepr = (f"backend {backend}", None, f"Skipped: {reason}")
        return report

    def pytest_report_teststatus(self, report: pytest.TestReport) -> tuple[str, str, str] | None:
        if getattr(report, "lochkit_blocked", False) and report.when == "setup":
            return BLOCKED, "E", "BLOCKED"
        return None


def _one_line_in_short_summary(report: pytest.TestReport) -> None:
    """Keep pytest's short summary line to the failure's first line. On CI (the ``CI`` variable
    set) or with ``-vv`` pytest prints the whole message there, which would repeat the full text
    (and any traceback) that the error section above already shows once."""
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None and isinstance(crash.message, str):
        crash.message = crash.message.split("\n", 1)[0]


def _tests(count: int) -> str:
    return "its test" if count == 1 else f"its {count} tests"
