"""Fail fast: a badly broken adapter ends a conformance run in seconds, not minutes.

Three guards, for conformance suite tests only:

- **a time limit per test phase** (``--lochkit-time-limit SECONDS``, env ``LOCHKIT_TIME_LIMIT``):
  the setup, the body and the teardown of a test each get the limit, so a call that never returns
  (a lock never released, a write never acknowledged, a loop that spins) fails with where it was,
  also when it hangs in a fixture (``persist`` erases a repository, the version-store fixture
  creates ``main``). Obtaining and releasing the backend (starting a server, creating its schema,
  stopping it) is not counted: the plugin wraps it in :func:`not_limited`. Unless given, the limit
  depends on the backend: :data:`EMBEDDED_TIME_LIMIT_SECONDS` for an embedded one, where no correct
  test takes a second, and :data:`SERVER_TIME_LIMIT_SECONDS` for one behind a server, where the
  slowest tests make thousands of round trips;
- **a stop at the first time limit**: a hang is never a one-off in an adapter; every later test
  that makes the same call hangs again and costs the whole limit, so the first test that hits its
  limit stops the run. A thread left stuck in the adapter cannot be joined, so the process then
  exits without waiting for it (after pytest's summary);
- **a stop after the same failure repeats** (``--lochkit-same-failures N``, env
  ``LOCHKIT_SAME_FAILURES``): once N test bodies on one backend failed with the same exception at
  the same place, the remaining ones would mostly repeat it, so the run stops and names the cause.
  ``0`` turns off both stops (every test runs). Only failures of test bodies count here: a backend
  that cannot be set up at all is reported by the plugin itself, which fails every later test at
  once without asking the server again.

Its options are added by :mod:`conformance.plugin`, which checks them in every session and
registers this module as a plugin only when a session runs lochkit tests (see
:mod:`conformance.session`).

PYTEST_DONT_REWRITE: the plugin module imports this one before it is registered as a plugin, so
pytest could not rewrite its asserts anyway and would warn in every run; there are none to rewrite.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Any, Final

import pytest

from conformance.suites.base import ConformanceSuite

#: The limit for a backend without a server: no correct suite test takes a second there (the
#: slowest, the Hypothesis state machine, 0.9 s on a quiet 2-core machine), so this is generous
#: for a loaded CI machine and still ends a hanging adapter's run in seconds.
EMBEDDED_TIME_LIMIT_SECONDS: Final = 15.0
#: The limit for a backend behind a server, where each call is a round trip and the slowest tests
#: (large objects, erasing ten repositories, racing threads) make thousands of them.
SERVER_TIME_LIMIT_SECONDS: Final = 120.0
DEFAULT_SAME_FAILURES: Final = 3
#: After the limit struck, the alarm repeats at this interval, so a test stuck again in its own
#: clean-up (joining a thread that still spins) is interrupted again instead of hanging; it is
#: also the limit of that test's teardown (and the session's, when the run stops there).
_REPEAT_SECONDS: Final = 2.0
#: How long the end of a run waits for threads still running after a time limit struck.
_STUCK_THREAD_GRACE_SECONDS: Final = 2.0

_STATE_KEY = pytest.StashKey["_FailFastState"]()

if TYPE_CHECKING:
    _Failed = BaseException
else:
    _Failed = pytest.fail.Exception  # the public name of the outcome ``pytest.fail`` raises


class TestTimeLimitExceeded(BaseException):
    """Raised in a test phase that ran past ``--lochkit-time-limit``.

    A ``BaseException``, like pytest's own outcomes, so that neither the code under test
    (``except Exception`` in retry loops) nor Hypothesis (which would shrink it) swallows it.
    """

    __test__ = False  # not a test class, despite its name


class FixtureTimeLimitExceeded(TestTimeLimitExceeded, _Failed):
    """The same, raised in a test's setup or teardown: also a pytest outcome, as ``pytest.fail``
    raises, because pytest tears fixtures down and sets them up again only around outcomes and
    ``Exception``. Any other ``BaseException`` leaves its record of set-up fixtures half undone,
    skips the remaining finalizers (a server would keep running) and fails every later setup."""


class _PhaseAlarm:
    """SIGALRM for one phase (setup, body or teardown) of one test, paused while a backend is
    obtained or released."""

    def __init__(self, what: str, limit: float, *, in_fixture: bool, after_hang: bool = False) -> None:
        self.what = what
        self._exceeded = FixtureTimeLimitExceeded if in_fixture else TestTimeLimitExceeded
        self.limit = limit
        #: The teardown of a test that hung: releasing the backend is limited too, since it may
        #: wait for the lock of the call that hung.
        self.after_hang = after_hang
        self._pauses = 0
        self._running = False
        self._previous: Any = None

    def start(self) -> None:
        self._previous = signal.signal(signal.SIGALRM, self._on_alarm)
        self._running = True
        self._arm()

    def stop(self) -> None:
        self._running = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self._previous)

    def pause(self) -> None:
        self._pauses += 1
        signal.setitimer(signal.ITIMER_REAL, 0)

    def restart(self, limit: float) -> None:
        """The whole of ``limit`` from now on."""
        self.limit = limit
        if self._running and not self._pauses:
            self._arm()

    def resume(self, limit: float) -> None:
        """Starts the limit afresh: the time spent obtaining the backend is not the test's."""
        self._pauses -= 1
        if self._pauses == 0 and self._running:
            self.limit = limit
            self._arm()

    def _arm(self) -> None:
        if self.limit:
            signal.setitimer(signal.ITIMER_REAL, self.limit, _REPEAT_SECONDS)

    def _on_alarm(self, signum: int, frame: FrameType | None) -> None:
        __tracebackhide__ = True  # the traceback ends where the test was, not in this handler
        if self._running and not self._pauses:
            raise self._exceeded(
                f"{self.what} did not finish within {self.limit:g} s. A test spins like this when "
                "the adapter never acknowledges a write, never releases a lock, or a call blocks; "
                "the traceback shows where it was. A slow but correct backend can raise the limit "
                "with --lochkit-time-limit SECONDS (0 = none)."
            )


@dataclass
class _FailFastState:
    #: None: the limit depends on the kind of backend (see the module docs).
    time_limit: float | None
    same_failures: int
    #: (backend, exception type, place) -> test names that failed that way
    seen: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)
    #: Whether the backend obtained last runs without a server (one runs at a time).
    embedded: bool = False
    #: The alarm of the test phase now running, if any.
    alarm: _PhaseAlarm | None = None
    #: A time limit struck: threads of that test may still be stuck in the adapter.
    struck: bool = False
    #: The test that hit its limit last, whose teardown gets a moment only.
    hung: pytest.Item | None = None
    #: Threads alive when the run began, which the run must not wait for or blame.
    threads_before: set[int] = field(default_factory=set)
    exit_status: int = 0

    def limit(self) -> float:
        if self.time_limit is not None:
            return self.time_limit
        return EMBEDDED_TIME_LIMIT_SECONDS if self.embedded else SERVER_TIME_LIMIT_SECONDS


def add_options(group: pytest.OptionGroup) -> None:
    """The options of the guards, in the plugin's group."""
    from_env = os.environ.get("LOCHKIT_TIME_LIMIT")
    group.addoption(
        "--lochkit-time-limit",
        type=float,
        default=float(from_env) if from_env else None,
        metavar="SECONDS",
        help="fail a conformance test whose setup, body or teardown runs longer than this, and "
        "stop the run there (obtaining the backend, such as starting a server, is not counted; "
        f"0 = no limit; default {EMBEDDED_TIME_LIMIT_SECONDS:g} for an embedded backend, "
        f"{SERVER_TIME_LIMIT_SECONDS:g} for one with a server; also $LOCHKIT_TIME_LIMIT)",
    )
    group.addoption(
        "--lochkit-same-failures",
        type=int,
        default=int(os.environ.get("LOCHKIT_SAME_FAILURES", DEFAULT_SAME_FAILURES)),
        metavar="N",
        help="stop the run once N conformance tests on one backend failed with the same exception "
        "at the same place (0 = never, and no stop at the first time limit either: every test "
        f"runs; default {DEFAULT_SAME_FAILURES}, also $LOCHKIT_SAME_FAILURES)",
    )


def check_options(config: pytest.Config) -> tuple[float | None, int]:
    """The time limit and the number of same failures, or a usage error."""
    limit = config.getoption("--lochkit-time-limit")
    same = int(config.getoption("--lochkit-same-failures"))
    if (limit is not None and limit < 0) or same < 0:
        raise pytest.UsageError(
            "--lochkit-time-limit and --lochkit-same-failures take 0 (off) or a positive number, "
            f"got {limit} and {same}"
        )
    return None if limit is None else float(limit), same


def start(config: pytest.Config) -> None:
    """The guards from now on; the module's hooks act once this module is registered as a plugin."""
    state = _FailFastState(*check_options(config))
    state.threads_before = {t.ident for t in threading.enumerate() if t.ident is not None}
    config.stash[_STATE_KEY] = state


@contextmanager
def not_limited(config: pytest.Config) -> Iterator[None]:
    """Obtaining or releasing a backend, which may start or stop a server, is not part of a test's
    time: the alarm of the phase now running waits, and starts afresh afterwards.

    Once a test has hung, a thread may still hold a lock of the adapter for good, and releasing the
    backend may wait for it: then the alarm goes on, with the server limit (enough to start the
    next server when every test runs), or the 2 s of the hung test's own teardown."""
    state = config.stash.get(_STATE_KEY, None)
    alarm = state.alarm if state is not None else None
    if alarm is None or state is None or alarm.after_hang:
        yield
        return
    if state.struck:
        alarm.restart(max(SERVER_TIME_LIMIT_SECONDS, state.limit()))
        try:
            yield
        finally:
            alarm.restart(state.limit())
        return
    alarm.pause()
    try:
        yield
    finally:
        alarm.resume(state.limit())


def note_backend(config: pytest.Config, *, embedded: bool) -> None:
    """Tells the time limit which kind of backend the following tests run against."""
    state = config.stash.get(_STATE_KEY, None)
    if state is not None:
        state.embedded = embedded


def _is_suite_test(item: pytest.Item) -> bool:
    cls = getattr(item, "cls", None)
    return cls is not None and issubclass(cls, ConformanceSuite)


def _can_use_alarm() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _limited(item: pytest.Item, phase: str) -> Generator[None, Any, Any]:
    state = item.config.stash.get(_STATE_KEY, None)
    if state is None or not state.limit() or not _is_suite_test(item) or not _can_use_alarm():
        return (yield)
    what = item.name if phase == "call" else f"the {phase} of {item.name}"
    # After a hang, the test's clean-up gets a moment only: it mostly makes the same call.
    after_hang = phase == "teardown" and state.hung is item
    limit = _REPEAT_SECONDS if after_hang else state.limit()
    alarm = _PhaseAlarm(what, limit, in_fixture=phase != "call", after_hang=after_hang)
    state.alarm = alarm
    alarm.start()
    try:
        return (yield)
    finally:
        alarm.stop()
        state.alarm = None


# The limits wrap the phase itself, inside the other plugins' wrappers (output capture, logging):
# this module is registered late, when a session turns out to run lochkit tests, and would
# otherwise be the outermost wrapper.
@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, Any, Any]:
    return (yield from _limited(item, "setup"))


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    return (yield from _limited(item, "call"))


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, Any]:
    return (yield from _limited(item, "teardown"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report: pytest.TestReport = yield
    state = item.config.stash.get(_STATE_KEY, None)
    if state is None or not report.failed or call.excinfo is None or not _is_suite_test(item):
        return report
    if call.excinfo.errisinstance(TestTimeLimitExceeded):
        state.struck = True
        state.hung = item
        if state.same_failures and not item.session.shouldfail:
            item.session.shouldfail = _time_limit_stop(item, report.when or "call")
        return report
    if not state.same_failures or report.when != "call":  # a backend that cannot be set up is
        return report  # the plugin's to report
    kind = _failure_kind(item, call.excinfo)
    names = state.seen.setdefault(kind, [])
    names.append(item.name)
    if len(names) >= state.same_failures and not item.session.shouldfail:
        backend, error, place = kind
        where = f" at {place}" if place else ""
        item.session.shouldfail = (
            f"lochkit: {len(names)} tests failed the same way{_on(backend)} ({error}{where}): "
            f"{', '.join(names)}. The remaining tests would most likely repeat it, so the run stops "
            "here; fix this first, or pass --lochkit-same-failures 0 to run every test."
        )
    return report


def _time_limit_stop(item: pytest.Item, phase: str) -> str:
    where = "" if phase == "call" else f" (in its {phase})"
    return (
        f"lochkit: {item.name}{_on(_backend_of(item))} hit its time limit{where}. An adapter call "
        "that hangs hangs again in every later test that makes it, each costing the whole limit, "
        "so the run stops here; fix the hang first, raise --lochkit-time-limit if the backend is "
        "only slow, or pass --lochkit-same-failures 0 to run every test."
    )


def _on(backend: str) -> str:
    return f" on {backend}" if backend else ""


def _backend_of(item: pytest.Item) -> str:
    callspec = getattr(item, "callspec", None)
    return str(callspec.params.get("lochkit_backend_name", "")) if callspec is not None else ""


def _failure_kind(item: pytest.Item, excinfo: pytest.ExceptionInfo[BaseException]) -> tuple[str, str, str]:
    entry = excinfo.traceback[-1]
    place = f"{_relative(str(entry.path))}:{entry.lineno + 1}"
    return _backend_of(item), excinfo.typename, place


def _relative(path: str) -> str:
    for anchor in ("conformance", "persist_spi", "backends"):
        marker = f"{os.sep}{anchor}{os.sep}"
        if marker in path:
            return anchor + os.sep + path.rsplit(marker, 1)[1]
    return os.path.basename(path)


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> Generator[None, Any, Any]:
    """Fixtures still set up when a run is interrupted (Ctrl-C, SIGTERM) are torn down here, outside
    any test phase. After a hang their clean-up may wait for the stuck call's lock, so it gets 2 s,
    and the run ends anyway when it is cut short. Only the clean-up: the terminal summary, which
    the terminal reporter's own wrapper writes, is outside the limit."""
    state = session.config.stash.get(_STATE_KEY, None)
    if state is None:
        return (yield)
    state.exit_status = int(exitstatus)
    if not state.struck or not _can_use_alarm():
        return (yield)
    alarm = _PhaseAlarm(
        "the clean-up at the end of the run", _REPEAT_SECONDS, in_fixture=True, after_hang=True
    )
    state.alarm = alarm
    alarm.start()
    try:
        return (yield)
    except BaseException as e:
        if not _is_time_limit(e):
            raise
        print(f"lochkit: the clean-up at the end of the run was cut short: {e}", file=sys.stderr)
        return None
    finally:
        alarm.stop()
        state.alarm = None


def _is_time_limit(error: BaseException) -> bool:
    if isinstance(error, BaseExceptionGroup):
        return error.subgroup(TestTimeLimitExceeded) is not None
    return isinstance(error, TestTimeLimitExceeded)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """After a time limit struck, a thread of that test may be stuck in the adapter for good (a
    lock it waits for is never released). Python joins such threads at exit, so the process would
    never end; it exits without them instead, once pytest has reported everything."""
    state = config.stash.get(_STATE_KEY, None)
    if state is None or not state.struck:
        return
    stuck = [
        t
        for t in threading.enumerate()
        if t.ident not in state.threads_before and not t.daemon and t is not threading.current_thread()
    ]
    for thread in stuck:
        thread.join(_STUCK_THREAD_GRACE_SECONDS / len(stuck))
    stuck = [t for t in stuck if t.is_alive()]
    if not stuck:
        return
    names = ", ".join(t.name for t in stuck)
    print(
        f"lochkit: {len(stuck)} thread(s) still stuck where the time limit found them ({names}); "
        "the run exits without waiting for them.",
        file=sys.stderr,
    )
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(state.exit_status)
