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


def test_a_spinning_test_fails_at_its_time_limit_and_the_run_goes_on(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "--lochkit-time-limit", "1", "-k", "spins or after or not_a_suite")
    result.assert_outcomes(failed=1, passed=2)
    result.stdout.fnmatch_lines(["*TestTimeLimitExceeded: test_spins_forever* did not finish within 1 s*"])


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


def test_time_limits_count_as_one_kind_wherever_they_strike(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_probe="""
import time
import pytest
from conformance.suites.base import ConformanceSuite


class TestProbe(ConformanceSuite):
    def test_spins_here(self, persist):
        while True:
            time.sleep(0.01)

    def test_spins_there(self, persist):
        while True:
            time.sleep(0.01)

    def test_never_reached(self, persist):
        pass
"""
    )
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--lochkit-time-limit", "0.5", "--lochkit-same-failures", "2"
    )
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*2 tests failed the same way on inmemory (TestTimeLimitExceeded)*"])


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
