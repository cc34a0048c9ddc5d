"""The lockstep race helper: rounds in order, hooks alone, failures surfaced, turns inside given code."""

from __future__ import annotations

import threading

import pytest

from conformance.lockstep import race_in_lockstep, source_files_of, turns_inside
from conformance.mutants import mutant_named
from persist_spi.adapter import BackendAdapter


def test_rounds_run_in_order_with_every_worker_acting_once_per_round() -> None:
    events: list[tuple[str, int]] = []
    lock = threading.Lock()

    def act(r: int, w: int) -> tuple[int, int]:
        with lock:
            events.append(("act", r))
        return r, w

    results = race_in_lockstep(
        3,
        4,
        act,
        before_round=lambda r: events.append(("before", r)),
        after_round=lambda r: events.append(("after", r)),
    )
    assert results == [[(r, w) for w in range(3)] for r in range(4)]
    expected = [e for r in range(4) for e in [("before", r), *[("act", r)] * 3, ("after", r)]]
    assert events == expected


def test_a_failing_check_is_reported_not_the_broken_barrier() -> None:
    def after(r: int) -> None:
        if r == 1:
            raise AssertionError("round 1 went wrong")

    with pytest.raises(AssertionError, match="round 1 went wrong"):
        race_in_lockstep(4, 5, lambda r, w: None, after_round=after)


def _check_then_act(store: dict[str, int], key: str, value: int) -> bool:
    if key in store:
        return False
    store[key] = value
    return True


def test_turns_inside_the_given_code_expose_a_check_then_act_window() -> None:
    """Two statements apart is enough: with turns taken at every line, several workers pass the
    check before any of them acts. (A yield lets the others run but cannot force the scheduler
    to, so a single round may still go in order, as one did in a busy CI run: the race must be
    won in most rounds, which is what catching a broken adapter on every run needs.)"""
    stores: list[dict[str, int]] = [{} for _ in range(10)]
    results = race_in_lockstep(4, 10, lambda r, w: _check_then_act(stores[r], "k", w), turns_in=[__file__])
    exposed = sum(sum(outcomes) > 1 for outcomes in results)
    assert exposed >= 5, f"only {exposed} of 10 rounds had two workers past the check"


def test_turns_end_with_the_block() -> None:
    with turns_inside([__file__]):
        pass
    assert threading.gettrace() is None


def test_the_source_files_of_an_adapter_are_its_classes_files() -> None:
    adapter = mutant_named("cas-read-then-write").factory().create()
    files = source_files_of(adapter, stop_at=BackendAdapter)
    assert {f.rsplit("/", 2)[-2] + "/" + f.rsplit("/", 1)[-1] for f in files} == {
        "mutants/inmemory_bugs.py",
        "mutants/base.py",
        "inmemory/adapter.py",
    }
