"""The bounded retry loop: attempts, give-up rules and the sleep windows (with a fake clock)."""

from __future__ import annotations

import random

import pytest

from persist_spi.config import StoreConfig
from persist_spi.errors import RetryTimeout, UnknownOperationResult
from persist_spi.logic.retry import RetryClock, RetryNeeded, commit_retry


class FakeTime:
    def __init__(self, attempt_millis: float = 0) -> None:
        self.now: float = 0
        self.sleeps: list[float] = []
        self.attempt_millis = attempt_millis

    def clock(self, rng: random.Random | None = None) -> RetryClock[object]:
        return RetryClock(lambda: int(self.now), self.sleep, rng or random.Random(1))

    def sleep(self, millis: float) -> None:
        self.sleeps.append(millis)
        self.now += millis * 1_000_000

    def spend(self) -> None:
        self.now += self.attempt_millis * 1_000_000


def test_gives_up_after_the_configured_retries() -> None:
    fake = FakeTime()
    calls = []

    def attempt(state: object) -> None:
        calls.append(state)
        raise RetryNeeded(len(calls))

    with pytest.raises(RetryTimeout) as e:
        commit_retry(StoreConfig(commit_retries=3, commit_timeout_millis=10**9), attempt, fake.clock())
    assert len(calls) == 4  # the first try plus three retries
    assert e.value.retries == 3
    assert calls == [None, 1, 2, 3]  # each attempt sees the state the previous one passed on


def test_unknown_outcomes_are_retried_and_keep_the_state() -> None:
    fake = FakeTime()
    outcomes: list[BaseException | None] = [RetryNeeded("s1"), UnknownOperationResult("?"), None]
    seen = []

    def attempt(state: object) -> str:
        seen.append(state)
        outcome = outcomes.pop(0)
        if outcome is not None:
            raise outcome
        return "done"

    assert commit_retry(StoreConfig(), attempt, fake.clock()) == "done"
    assert seen == [None, "s1", "s1"]


def test_other_errors_are_not_retried() -> None:
    calls = []

    def attempt(_: object) -> None:
        calls.append(1)
        raise ValueError("conflict")

    with pytest.raises(ValueError, match="conflict"):
        commit_retry(StoreConfig(), attempt, FakeTime().clock())
    assert calls == [1]


def test_sleep_windows_double_up_to_the_cap() -> None:
    fake = FakeTime()

    def attempt(_: object) -> None:
        raise RetryNeeded()

    config = StoreConfig(
        commit_retries=8,
        commit_timeout_millis=10**9,
        retry_initial_sleep_millis_lower=5,
        retry_initial_sleep_millis_upper=25,
        retry_max_sleep_millis=250,
    )
    with pytest.raises(RetryTimeout):
        commit_retry(config, attempt, fake.clock())
    windows = [(5, 25), (10, 50), (20, 100), (40, 200), (40, 250), (40, 250), (40, 250), (40, 250)]
    assert len(fake.sleeps) == len(windows)
    for slept, (lower, upper) in zip(fake.sleeps, windows, strict=True):
        assert lower <= slept <= upper


def test_the_attempts_own_duration_is_subtracted_from_the_sleep() -> None:
    """A 20 ms attempt with a fixed 100 ms window leaves an 80 ms sleep (Nessie would sleep 120 ms)."""
    fake = FakeTime(attempt_millis=20)
    calls = []

    def attempt(_: object) -> str:
        fake.spend()
        calls.append(1)
        if len(calls) == 1:
            raise RetryNeeded()
        return "ok"

    config = StoreConfig(
        retry_initial_sleep_millis_lower=100, retry_initial_sleep_millis_upper=100, retry_max_sleep_millis=100
    )
    assert commit_retry(config, attempt, fake.clock()) == "ok"
    assert fake.sleeps == [80]


def test_sleep_is_at_least_one_millisecond_and_capped_by_the_time_left() -> None:
    fake = FakeTime(attempt_millis=500)

    def attempt(_: object) -> None:
        fake.spend()
        raise RetryNeeded()

    config = StoreConfig(
        commit_timeout_millis=1200, retry_initial_sleep_millis_lower=5, retry_initial_sleep_millis_upper=25
    )
    with pytest.raises(RetryTimeout) as e:
        commit_retry(config, attempt, fake.clock())
    assert fake.sleeps[0] == 1  # the attempt took longer than the window
    assert e.value.elapsed_nanos > 1200 * 1_000_000


def test_stops_once_the_commit_timeout_has_passed() -> None:
    fake = FakeTime(attempt_millis=100)
    calls = []

    def attempt(_: object) -> None:
        fake.spend()
        calls.append(1)
        raise RetryNeeded()

    with pytest.raises(RetryTimeout):
        commit_retry(StoreConfig(commit_timeout_millis=1000), attempt, fake.clock())
    assert 5 <= len(calls) <= 11
