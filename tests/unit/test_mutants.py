"""The catalogue of broken adapters and the self-check's own mechanics (the kill runs themselves are
CI's ``lochkit conformance --self-check`` step)."""

from __future__ import annotations

import inspect
import tempfile
from pathlib import Path

import pytest

from conformance.mutants import CONTROLS, GUARANTEES, MUTANTS, UnknownMutant, factory_for, mutant_named
from conformance.mutants.base import Broken
from conformance.mutants.catalogue import Mutant
from conformance.mutants.kill_table import markdown_table, summary, text_table
from conformance.mutants.self_check import MutantResult, SelfCheckResult, SuiteRun, read_outcomes, run_suite
from persist_spi.adapter import OPTIONAL_METHODS, BackendAdapter

#: Methods with a default that the suites check as well: a store set up again when it is reopened
#: must still hold what was written before (the durability test); storing and swapping in one call
#: must answer as its two-step default does.
CHECKED_DEFAULTS = {"setup_schema", "insert_objs_and_update_ref"}


def test_every_method_of_the_contract_has_a_broken_adapter() -> None:
    contract = set(BackendAdapter.__abstractmethods__) | set(OPTIONAL_METHODS) | CHECKED_DEFAULTS
    assert contract - {m.method for m in MUTANTS} == set()
    assert {m.method for m in MUTANTS} <= contract


def test_every_stated_guarantee_has_a_broken_adapter() -> None:
    assert set(GUARANTEES) == {m.guarantee for m in MUTANTS}


def test_each_broken_adapter_is_named_once_described_and_derived_from_a_control() -> None:
    names = [m.name for m in MUTANTS]
    assert len(names) == len(set(names))
    for mutant in MUTANTS:
        assert mutant.bug, f"{mutant.name} says nothing about its bug"
        assert mutant.base in CONTROLS
        assert set(names).isdisjoint(CONTROLS)


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_each_broken_adapter_overrides_what_it_breaks(mutant: Mutant) -> None:
    """One bug each: the class changes its named method (or, for a declared limit, the schema)."""
    own = set(vars(mutant.adapter_class)) - {"mutant", "guarantee", "method", "racy", "__doc__", "__module__"}
    if mutant.method == "capabilities":
        assert "check" in own
        assert issubclass(mutant.adapter_class.__mro__[1], Broken)
    else:
        assert mutant.method in own
        base_method = getattr(mutant.adapter_class.__mro__[1], mutant.method)
        assert inspect.getsource(getattr(mutant.adapter_class, mutant.method)) != inspect.getsource(
            base_method
        )


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_each_broken_adapter_opens_empty_and_closes(
    mutant: Mutant, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the SQLite ones make a directory
    adapter = factory_for(mutant.name).create()
    try:
        adapter.setup_schema()
        assert list(adapter.scan_objs("repo", None)) == []
    finally:
        adapter.close()


def test_an_unknown_mutant_names_the_known_ones() -> None:
    with pytest.raises(UnknownMutant, match="known: insert-reports-not-created, "):
        mutant_named("no-such-bug")


OUTCOMES = """["TestPersistObjects::test_a", "passed"]
["TestPersistObjects::test_b[x]", "failed"]
["TestPersistSizeLimits::test_c", "skipped"]
["TestCachingPersist::test_d", "passed"]
["TestCachingPersist::test_d", "failed"]
"""


def test_the_outcome_log_gives_failures_in_order_and_counts(tmp_path: Path) -> None:
    """A test whose body passed but whose teardown failed counts as failed."""
    path = tmp_path / "outcomes.jsonl"
    path.write_text(OUTCOMES)
    run = SuiteRun("x", 1, 1.0)
    read_outcomes(path, run)
    assert run.failed == ["TestPersistObjects::test_b[x]", "TestCachingPersist::test_d"]
    assert (run.passed, run.skipped) == (1, 1)
    assert run.caught


def _result(caught_runs: list[bool], every_test: bool, complete: bool = True) -> SelfCheckResult:
    racy = mutant_named("cas-read-then-write")
    runs = [
        SuiteRun(racy.name, 1 if c else 0, 2.5, failed=["TestPersistRaces::test_x"] if c else [])
        for c in caught_runs
    ]
    full = SuiteRun(racy.name, 1, 9.0, failed=["a", "b", "c"], complete=complete) if every_test else None
    control = SuiteRun("inmemory", 0, 5.0, passed=880, skipped=4)
    return SelfCheckResult([control], [MutantResult(racy, runs, full)], 20.0)


def test_a_racy_mutant_counts_as_caught_only_if_every_run_catches_it() -> None:
    assert _result([True, True, True], every_test=False).ok
    missed = _result([True, False, True], every_test=False)
    assert not missed.ok
    assert missed.kill_rate == (0, 1)
    assert "survived: cas-read-then-write" in summary(missed)
    assert "NO (2/3 runs)" in "\n".join(text_table(missed))


def test_the_kill_table_shows_the_number_of_catching_tests_when_counted() -> None:
    counted = markdown_table(_result([True], every_test=True))
    assert counted[0].startswith("| mutant | from | method | guarantee | caught | tests |")
    assert (
        "| `cas-read-then-write` | inmemory | `update_ref` | atomic compare-and-swap | yes | 3 |"
        in counted[2]
    )
    cut = markdown_table(_result([True], every_test=True, complete=False))
    assert "| yes | >= 3 |" in cut[2]
    plain = text_table(_result([True], every_test=False))
    assert "tests" not in plain[0].split()
    assert summary(_result([True], every_test=False))[:2] == [
        "1 of 1 broken adapters caught (100 %)",
        "control inmemory passes: 880 passed, 4 skipped, 0 failed",
    ]


def test_a_kill_run_reports_the_first_failing_test(tmp_path: Path) -> None:
    """The runner end to end, on a broken adapter the adapter-level suite catches at once."""
    run = run_suite("cas-creates-missing", tmp_path, stop_at_first_failure=True)
    assert run.problem == ""
    assert run.caught
    assert run.failed == ["TestPersistAdapter::test_update_ref_compares_every_column_but_history"]
