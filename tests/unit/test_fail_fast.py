"""Fail fast: a test that spins is stopped at its time limit, and a run stops once the same failure
repeats, so a badly broken adapter ends a run in seconds."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

SUITE = """
import time

import pytest
from conformance.suites.base import ConformanceSuite


class TestProbe(ConformanceSuite):
    area = "probe.area"

    def test_spins_forever(self, persist):
        while True:
            try:
                time.sleep(0.01)
            except Exception:  # code under test that swallows errors must not swallow the limit
                pass

    def test_runs_after_the_spinning_one(self, persist):
        assert persist.fetch_reference("x") is None

    @pytest.mark.parametrize("n", range(5))
    def test_fails_at_one_place(self, persist, n):
        assert persist.fetch_reference("x") is not None

    def test_fails_elsewhere(self, persist):
        assert n_is_not_defined  # noqa: F821


def test_not_a_suite_test_is_not_limited():
    time.sleep(1.5)
"""


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_probe=SUITE)
    return pytester.runpytest("-p", "no:cacheprovider", "-rf", *args)


def test_a_spinning_test_fails_at_its_time_limit_and_stops_the_run(pytester: pytest.Pytester) -> None:
    """A hang is never a one-off in an adapter: the first test to hit its limit ends the run, not
    the third (which, at one limit each, made a hanging adapter's run take minutes)."""
    result = _run(pytester, "--lochkit-time-limit", "1", "-k", "spins or after")
    result.assert_outcomes(failed=1)  # the test after it never ran
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    stopped = (
        "*lochkit: test_spins_forever[[]inmemory[]] on inmemory hit its time limit. An adapter "
        "call that hangs hangs again in every later test*"
    )
    result.stdout.fnmatch_lines(
        ["*TestTimeLimitExceeded: test_spins_forever* did not finish within 1 s*", stopped]
    )


def test_zero_same_failures_lets_the_run_go_on_after_a_time_limit(pytester: pytest.Pytester) -> None:
    result = _run(
        pytester, "--lochkit-time-limit", "1", "--lochkit-same-failures", "0", "-k", "spins or after"
    )
    result.assert_outcomes(failed=1, passed=1)


def test_after_a_hang_the_tests_that_still_run_keep_their_whole_limit(pytester: pytest.Pytester) -> None:
    """Only the hung test's own clean-up gets a moment (2 s); with every test running, a slow test
    after it still has the whole limit (3 s of work under a 4 s limit)."""
    pytester.makepyfile(
        test_probe="""
import time

from conformance.suites.base import ConformanceSuite


class TestProbe(ConformanceSuite):
    def test_a_spins(self, persist):
        while True:
            time.sleep(0.01)

    def test_b_is_slow(self, persist):
        time.sleep(3)
"""
    )
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--lochkit-time-limit", "4", "--lochkit-same-failures", "0"
    )
    result.assert_outcomes(failed=1, passed=1)


def test_not_a_suite_test_is_not_limited(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "--lochkit-time-limit", "0.5", "-k", "not_a_suite")
    result.assert_outcomes(passed=1)


def test_the_same_failure_repeated_stops_the_run(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "--lochkit-same-failures", "3", "-k", "fails_at_one_place or not_a_suite")
    result.assert_outcomes(failed=3)  # two more of the same kind and the plain test never ran
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    stopped = (
        "*lochkit: 3 tests failed the same way on inmemory (AssertionError at test_probe.py:*): "
        "test_fails_at_one_place[[]inmemory-0[]], test_fails_at_one_place[[]inmemory-1[]], "
        "test_fails_at_one_place[[]inmemory-2[]]*--lochkit-same-failures 0 to run every test*"
    )
    result.stdout.fnmatch_lines([stopped])


def test_failures_at_different_places_do_not_stop_the_run(pytester: pytest.Pytester) -> None:
    result = _run(
        pytester, "--lochkit-same-failures", "2", "-k", "fails_elsewhere or after or (one_place and 0)"
    )
    result.assert_outcomes(failed=2, passed=1)


def test_zero_turns_the_stop_off(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "--lochkit-same-failures", "0", "-k", "fails_at_one_place")
    result.assert_outcomes(failed=5)


@pytest.mark.parametrize("option", ["--lochkit-time-limit=-1", "--lochkit-same-failures=-2"])
def test_negative_settings_are_a_usage_error(pytester: pytest.Pytester, option: str) -> None:
    result = _run(pytester, option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*take 0 (off) or a positive number*"])


def test_an_adapter_that_never_reports_a_new_object_ends_the_run_early(pytester: pytest.Pytester) -> None:
    """The whole suite against the catalogue's "not created" adapter, default settings: it stops at
    the third failure of one kind instead of running (and retrying) every test."""
    pytester.makeconftest(
        """
import pytest
from conformance.mutants import factory_for

@pytest.fixture(scope="session")
def lochkit_backend_factory():
    return factory_for("insert-reports-not-created")
"""
    )
    pytester.makepyfile(test_never_new_adapter="from conformance.all import *  # noqa: F403\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*lochkit: 3 tests failed the same way*"])
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] + outcomes.get("passed", 0) < 100  # of about 890


HANGING_ADAPTER = """
import threading

import pytest
from backends.inmemory import InMemoryBackendFactory
from backends.inmemory.adapter import InMemoryAdapter
from conformance.suites.base import ConformanceSuite

NEVER = threading.Event()


class Adapter(InMemoryAdapter):
    name = "hangs"

    def {method}(self, *args):
        NEVER.wait()  # a lock or a reply that never comes


class Factory(InMemoryBackendFactory):
    name = "hangs"

    def create(self, url=None, options=None):
        return Adapter("hangs")


@pytest.fixture(scope="session")
def lochkit_backend_factory():
    return Factory()
"""


def test_a_hang_in_a_fixture_is_limited_too(pytester: pytest.Pytester) -> None:
    """Every ``persist`` erases its repository in setup and teardown: an adapter whose erase never
    returns used to hang the run for good there, where no time limit applied."""
    pytester.makeconftest(HANGING_ADAPTER.format(method="erase_repositories"))
    pytester.makepyfile(
        test_probe="""
from conformance.suites.base import ConformanceSuite


class TestProbe(ConformanceSuite):
    def test_first(self, persist):
        pass

    def test_second(self, persist):
        pass
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--lochkit-time-limit", "0.5")
    result.assert_outcomes(errors=2)  # its teardown erases too, and gets a moment only
    result.stdout.fnmatch_lines(
        [
            "*FixtureTimeLimitExceeded: the setup of test_first* did not finish within 0.5 s*",
            "*FixtureTimeLimitExceeded: the teardown of test_first* did not finish within 2 s*",
            "*lochkit: test_first* hit its time limit (in its setup)*",
        ]
    )
    assert "test_second" not in result.stdout.str()


def test_a_hang_in_a_teardown_leaves_the_following_tests_intact(pytester: pytest.Pytester) -> None:
    """The limit strikes in a fixture as a pytest outcome, so pytest finishes tearing down and sets
    up the next test normally (any other BaseException left its fixture stack half undone, and every
    later setup failed at once with an AssertionError)."""
    pytester.makepyfile(
        test_probe="""
import threading

import pytest
from conformance.suites.base import ConformanceSuite


@pytest.fixture
def hangs_in_teardown():
    yield
    threading.Event().wait()


class TestFirst(ConformanceSuite):
    def test_a(self, persist, hangs_in_teardown):
        pass


class TestSecond(ConformanceSuite):  # another class: pytest must have torn TestFirst down
    def test_b(self, persist):
        assert persist.fetch_reference("x") is None
"""
    )
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--lochkit-time-limit", "1", "--lochkit-same-failures", "0"
    )
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*the teardown of test_a* did not finish within 1 s*"])


def test_obtaining_the_backend_is_not_counted(pytester: pytest.Pytester) -> None:
    """Starting a server may take minutes; it is no test's time (here: an adapter that takes
    longer to open than the whole limit)."""
    pytester.makeconftest(
        """
import time

import pytest
from backends.inmemory import InMemoryBackendFactory


class SlowToOpen(InMemoryBackendFactory):
    name = "slow-to-open"

    def create(self, url=None, options=None):
        time.sleep(1.5)
        return super().create(url, options)


@pytest.fixture(scope="session")
def lochkit_backend_factory():
    return SlowToOpen()
"""
    )
    pytester.makepyfile(
        test_probe="""
from conformance.suites.base import ConformanceSuite


class TestProbe(ConformanceSuite):
    def test_opens(self, persist):
        assert persist.fetch_reference("x") is None
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--lochkit-time-limit", "0.5")
    result.assert_outcomes(passed=1)


def test_the_default_limit_depends_on_the_kind_of_backend(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Embedded backends get the short limit, a backend reached at an address the long one (the
    two made small here, so the test does not wait for the real ones)."""
    from conformance import fail_fast

    monkeypatch.delenv("LOCHKIT_TIME_LIMIT", raising=False)
    monkeypatch.setattr(fail_fast, "EMBEDDED_TIME_LIMIT_SECONDS", 0.5)
    monkeypatch.setattr(fail_fast, "SERVER_TIME_LIMIT_SECONDS", 1.5)
    pytester.makeconftest(
        """
import os

import pytest
from backends.inmemory import InMemoryBackendFactory


class AtAnAddress(InMemoryBackendFactory):
    name = "at-an-address"
    default_url = "inmemory://at-an-address"


@pytest.fixture(scope="session")
def lochkit_backend_factory():
    return AtAnAddress() if os.environ.get("PROBE_AT_AN_ADDRESS") else InMemoryBackendFactory()
"""
    )
    pytester.makepyfile(
        test_probe="""
import time

from conformance.suites.base import ConformanceSuite


class TestProbe(ConformanceSuite):
    def test_spins(self, persist):
        while True:
            time.sleep(0.01)
"""
    )
    embedded = pytester.runpytest("-p", "no:cacheprovider")
    embedded.stdout.fnmatch_lines(["*test_spins* did not finish within 0.5 s*"])
    monkeypatch.setenv("PROBE_AT_AN_ADDRESS", "1")
    server = pytester.runpytest("-p", "no:cacheprovider")
    server.stdout.fnmatch_lines(["*test_spins* did not finish within 1.5 s*"])


def test_a_thread_stuck_in_the_adapter_does_not_keep_the_run_alive(pytester: pytest.Pytester) -> None:
    """Worker threads that wait forever in the adapter cannot be joined; Python would wait for them
    at exit. The run ends after its summary instead (in a process of its own: it exits hard). The
    one the test was joining when the limit struck counts as stopped (Python marks a thread whose
    join was interrupted so), the two others are still stuck."""
    pytester.makeconftest(HANGING_ADAPTER.format(method="fetch_refs"))
    pytester.makepyfile(
        test_probe="""
from concurrent.futures import ThreadPoolExecutor

from conformance.suites.base import ConformanceSuite


class TestProbe(ConformanceSuite):
    def test_reads_in_threads(self, lochkit_backend):
        with ThreadPoolExecutor(3) as pool:
            calls = [pool.submit(lochkit_backend.adapter.fetch_refs, "repo", ["main"]) for _ in range(3)]
            for call in calls:
                call.result()
"""
    )
    # The timeout only bounds a regression; a run that waits for the thread never ends at all.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--lochkit-time-limit", "1", timeout=60)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*1 failed*"])
    result.stderr.fnmatch_lines(["*lochkit: 2 thread(s) still stuck where the time limit found them*"])


def test_an_adapter_that_deadlocks_ends_the_run_at_its_first_time_limit(pytester: pytest.Pytester) -> None:
    """The whole suite against the catalogue's deadlocking adapter, default settings: one test
    waits out the embedded limit and the run stops there (it used to take three limits of 120 s,
    or never end when the hang struck in a fixture)."""
    pytester.makeconftest(
        """
import pytest
from conformance.mutants import factory_for

@pytest.fixture(scope="session")
def lochkit_backend_factory():
    return factory_for("fetch-refs-deadlocks")
"""
    )
    pytester.makepyfile(test_deadlocking_adapter="from conformance.all import *  # noqa: F403\n")
    # A process of its own: the suite's sample types register once per process.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*did not finish within 15 s*", "*hit its time limit*"])
    assert result.parseoutcomes()["failed"] == 1
