"""Fail fast: a badly broken adapter ends a conformance run in seconds, not minutes.

Two guards, for conformance suite tests only:

- **a time limit per test** (``--lochkit-time-limit SECONDS``, env ``LOCHKIT_TIME_LIMIT``): a test
  that spins (a loop waiting for a write the adapter never acknowledges, a lock it never releases)
  fails with where it was, instead of hanging the run. It covers the test body, not fixture setup,
  which may legitimately spend minutes starting a server;
- **a stop after the same failure repeats** (``--lochkit-same-failures N``, env
  ``LOCHKIT_SAME_FAILURES``): once N tests on one backend failed with the same exception at the same
  place, the remaining ones would mostly repeat it, so the run stops and names the cause. Time-limit
  failures count as one kind wherever they struck. ``0`` turns the stop off. Only failures of test
  bodies count: a backend that cannot be set up at all is reported by the plugin itself, which
  fails every later test at once without asking the server again.

Registered by :mod:`conformance.plugin` (``pytest_plugins``), so it is active wherever the plugin is.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Generator
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import pytest

from conformance.suites.base import ConformanceSuite

DEFAULT_TIME_LIMIT_SECONDS = 120.0
DEFAULT_SAME_FAILURES = 3
#: After the limit struck, the alarm repeats at this interval, so a test stuck again in its own
#: clean-up (joining a thread that still spins) is interrupted again instead of hanging.
_REPEAT_SECONDS = 2.0

_STATE_KEY = pytest.StashKey["_FailFastState"]()


class TestTimeLimitExceeded(BaseException):
    """Raised in a test that ran past ``--lochkit-time-limit``.

    A ``BaseException``, like pytest's own outcomes, so that neither the code under test
    (``except Exception`` in retry loops) nor Hypothesis (which would shrink it) swallows it.
    """

    __test__ = False  # not a test class, despite its name


@dataclass
class _FailFastState:
    time_limit: float
    same_failures: int
    #: (backend, exception type, place) -> test names that failed that way
    seen: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("lochkit", "lochkit conformance")
    group.addoption(
        "--lochkit-time-limit",
        type=float,
        default=float(os.environ.get("LOCHKIT_TIME_LIMIT", DEFAULT_TIME_LIMIT_SECONDS)),
        metavar="SECONDS",
        help="fail a conformance test whose body runs longer than this (fixture setup, such as "
        f"starting a server, is not counted; 0 = no limit; default {DEFAULT_TIME_LIMIT_SECONDS:g}, "
        "also $LOCHKIT_TIME_LIMIT)",
    )
    group.addoption(
        "--lochkit-same-failures",
        type=int,
        default=int(os.environ.get("LOCHKIT_SAME_FAILURES", DEFAULT_SAME_FAILURES)),
        metavar="N",
        help="stop the run once N conformance tests on one backend failed with the same exception "
        f"at the same place (0 = never; default {DEFAULT_SAME_FAILURES}, also $LOCHKIT_SAME_FAILURES)",
    )


def pytest_configure(config: pytest.Config) -> None:
    limit = float(config.getoption("--lochkit-time-limit"))
    same = int(config.getoption("--lochkit-same-failures"))
    if limit < 0 or same < 0:
        raise pytest.UsageError(
            "--lochkit-time-limit and --lochkit-same-failures take 0 (off) or a positive number, "
            f"got {limit:g} and {same}"
        )
    config.stash[_STATE_KEY] = _FailFastState(limit, same)


def _is_suite_test(item: pytest.Item) -> bool:
    cls = getattr(item, "cls", None)
    return cls is not None and issubclass(cls, ConformanceSuite)


def _can_use_alarm() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    state = item.config.stash.get(_STATE_KEY, None)
    if state is None or not state.time_limit or not _is_suite_test(item) or not _can_use_alarm():
        return (yield)
    armed = True
    limit = state.time_limit

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        __tracebackhide__ = True  # the traceback ends where the test was, not in this handler
        if armed:
            raise TestTimeLimitExceeded(
                f"{item.name} did not finish within {limit:g} s. A test spins like this when the "
                "adapter never acknowledges a write, never releases a lock, or a call blocks; the "
                "traceback shows where it was. A slow but correct backend can raise the limit with "
                "--lochkit-time-limit SECONDS (0 = none)."
            )

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit, _REPEAT_SECONDS)
    try:
        return (yield)
    finally:
        armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report: pytest.TestReport = yield
    state = item.config.stash.get(_STATE_KEY, None)
    if (
        state is None
        or not state.same_failures
        or report.when != "call"  # a backend that cannot be set up is the plugin's to report
        or not report.failed
        or call.excinfo is None
        or not _is_suite_test(item)
    ):
        return report
    kind = _failure_kind(item, call.excinfo)
    names = state.seen.setdefault(kind, [])
    names.append(item.name)
    if len(names) >= state.same_failures and not item.session.shouldfail:
        backend, error, place = kind
        where = f" at {place}" if place else ""
        on = f" on {backend}" if backend else ""
        item.session.shouldfail = (
            f"lochkit: {len(names)} tests failed the same way{on} ({error}{where}): "
            f"{', '.join(names)}. The remaining tests would most likely repeat it, so the run stops "
            "here; fix this first, or pass --lochkit-same-failures 0 to run every test."
        )
    return report


def _failure_kind(item: pytest.Item, excinfo: pytest.ExceptionInfo[BaseException]) -> tuple[str, str, str]:
    callspec = getattr(item, "callspec", None)
    backend = str(callspec.params.get("lochkit_backend_name", "")) if callspec is not None else ""
    if excinfo.errisinstance(TestTimeLimitExceeded):
        return backend, excinfo.typename, ""  # wherever it struck, it is the same trouble
    entry = excinfo.traceback[-1]
    place = f"{_relative(str(entry.path))}:{entry.lineno + 1}"
    return backend, excinfo.typename, place


def _relative(path: str) -> str:
    for anchor in ("conformance", "persist_spi", "backends"):
        marker = f"{os.sep}{anchor}{os.sep}"
        if marker in path:
            return anchor + os.sep + path.rsplit(marker, 1)[1]
    return os.path.basename(path)
