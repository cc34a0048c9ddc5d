"""The campaign's lease-crash part: what its figures say about each kill, what it reports as a
problem, and real runs on RocksDB (one writer process, killed while it holds the lease and started
again), one of them with a lease that never expires, which the run must report."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from reliability.campaign import PROFILES, run_campaign
from reliability.figures import markdown
from reliability.lease_crash import (
    RESTART_SLACK_SECONDS,
    SLOW_STALL_SLACK_SECONDS,
    STALL_SLACK_SECONDS,
    JournalTail,
    Kill,
    LeaseCrashResult,
    default_slack,
    judge,
    lease_crashes,
    measure,
)
from reliability.lease_watch import LeaseEvents
from reliability.target import Target

LEASE = "int/commit-lease/refs/heads/leased"
S = 1_000_000_000  # ns


def _result(*kills: Kill) -> LeaseCrashResult:
    return LeaseCrashResult(writers=3, lease_seconds=1.0, stall_bound=3.0, kills=list(kills))


def _events(*records: tuple[str, str, int, int]) -> LeaseEvents:
    events = LeaseEvents()
    events.merge({"e": e, "w": w, "lease": LEASE, "ticket": ticket, "t": t} for e, w, ticket, t in records)
    return events


def _ack(t: int) -> dict[str, object]:
    return {"e": "ack", "w": "l1", "tok": "l1:0", "t": t}


def test_a_kill_of_a_holder_whose_lease_expired_after_it_is_proved() -> None:
    result = _result(Kill("l0", (LEASE, 7), 10 * S), Kill("l1", (LEASE, 9), 20 * S))
    events = _events(("hold", "l0", 7, 9 * S), ("skip", "l2", 7, 11 * S), ("hold", "l1", 9, 19 * S))
    events.merge([{"e": "skip", "w": "l2", "lease": LEASE, "ticket": 9, "t": 21 * S}])
    measure(result, events, [_ack(11 * S + S // 5), _ack(12 * S), _ack(21 * S), _ack(30 * S)])
    first, second = result.kills
    assert (first.holding, first.expired, first.commits_after) == (True, True, 2)
    assert first.stall == pytest.approx(1.2)
    assert (second.holding, second.expired, second.commits_after, second.stall) == (True, True, 2, 1.0)
    assert (result.kills_holding, result.expired, result.fewest_commits_after_a_kill) == (2, 2, 2)
    assert judge(result) == []


def test_a_victim_that_had_started_to_release_or_was_already_taken_over_did_not_hold_it() -> None:
    released = Kill("l0", (LEASE, 1), 10 * S)
    taken_over = Kill("l1", (LEASE, 2), 20 * S)
    result = _result(released, taken_over)
    events = _events(("releasing", "l0", 1, 10 * S - 5), ("skip", "l2", 2, 19 * S))
    measure(result, events, [_ack(11 * S), _ack(21 * S)])
    assert not released.holding
    assert not taken_over.holding
    assert judge(result) == ["none of the 2 kills found the victim holding the lease"]


def test_a_branch_that_stood_still_past_the_expiry_is_reported() -> None:
    result = _result(Kill("l0", (LEASE, 3), 10 * S))
    measure(result, _events(("skip", "l1", 3, 13 * S)), [_ack(14 * S)])
    assert result.longest_stall == 4.0
    assert judge(result) == [
        (
            "writer l0 killed holding lease ticket 3: "
            "the branch stood still 4.0 s (lease expiry 1 s, allowed 3 s)"
        )
    ]


def test_a_dead_holders_lease_nobody_took_over_and_a_branch_that_never_moved_are_reported() -> None:
    result = _result(Kill("l0", (LEASE, 3), 10 * S))
    measure(result, _events(), [_ack(9 * S)])
    assert judge(result) == [
        "writer l0 killed holding lease ticket 3: the branch never moved again",
        "writer l0 killed holding lease ticket 3: no writer took the dead holder's lease over",
    ]
    assert judge(_result()) == ["no writer was killed while holding the lease (0 looks found none)"]


def test_slow_compare_and_swaps_and_a_restarted_single_process_get_more_slack() -> None:
    assert default_slack(slow_commits=False, one_process=False) == STALL_SLACK_SECONDS
    assert default_slack(slow_commits=True, one_process=False) == SLOW_STALL_SLACK_SECONDS
    assert (
        default_slack(slow_commits=True, one_process=True) == SLOW_STALL_SLACK_SECONDS + RESTART_SLACK_SECONDS
    )


def test_the_journal_tail_reads_each_complete_line_once(tmp_path: Path) -> None:
    tail = JournalTail(tmp_path, "lease-*.jsonl")
    path = tmp_path / "lease-a.jsonl"
    path.write_text('{"n": 1}\n{"n": 2')
    assert tail.new_records() == [{"n": 1}]
    with path.open("a") as f:
        f.write("}\n")
    assert tail.new_records() == [{"n": 2}]
    assert tail.new_records() == []


def _rocksdb(tmp_path: Path) -> Target:
    return Target.open("rocksdb", f"rocksdb://{tmp_path / 'db'}", repository_id="lease")


def test_a_holder_killed_on_rocksdb_loses_its_lease_at_expiry_and_nothing_is_lost(tmp_path: Path) -> None:
    result = lease_crashes(
        _rocksdb(tmp_path),
        tmp_path / "run",
        writers=3,
        seconds=2,
        kill_every=(0.2, 0.4),
        seed=3,
        lease_millis=300,
        log=lambda _: None,
    )
    assert result.problems == []
    assert result.writers == 1  # one process per RocksDB directory
    assert result.kills
    assert result.kills_holding == result.expired >= 1
    assert (
        0.3 <= result.longest_stall <= result.stall_bound == 0.3 + STALL_SLACK_SECONDS + RESTART_SLACK_SECONDS
    )
    assert result.verdict is not None
    assert result.verdict.ledger.acknowledged > 0


def test_a_lease_that_never_expires_fails_the_run_with_the_stall(tmp_path: Path) -> None:
    result = lease_crashes(
        _rocksdb(tmp_path),
        tmp_path / "run",
        writers=1,
        seconds=0.1,
        kill_every=(0.2, 0.3),
        seed=3,
        lease_millis=300,
        stall_slack=0.5,  # allowed 0.8 s: writers give up waiting after 2.4 s
        writer_config={"commit_lease_millis": 3_600_000},  # what the run expects: 300 ms
        log=lambda _: None,
    )
    assert result.kills_holding == 1
    assert result.expired == 0
    stalls = [p for p in result.problems if "the branch stood still" in p]
    assert stalls, result.problems
    assert any("no writer took the dead holder's lease over" in p for p in result.problems)
    assert result.verdict is not None
    assert result.verdict.ledger.lost == []


def test_the_campaign_runs_the_part_and_tables_its_figures(tmp_path: Path) -> None:
    profile = dataclasses.replace(PROFILES["ci"], lease_seconds=1, lease_kill_every=(0.2, 0.3))
    report = run_campaign(
        ["inmemory", "rocksdb"], profile, parts=["lease-crash"], work=tmp_path, log=lambda _: None
    )
    memory, rocks = report.backends
    assert memory.not_applicable["lease crash"] == "not durable: the data dies with the process"
    assert rocks.lease is not None
    assert rocks.lease.kills_holding >= 1
    assert rocks.problems == []
    table = markdown(report)
    assert "| backend | `coordinated` writers | lease holders killed |" in table
    assert "| `inmemory` | n/a | n/a | n/a | n/a | n/a |" in table
    row = next(line for line in table.splitlines() if line.startswith("| `rocksdb` | 1 process |"))
    assert f"{rocks.lease.kills_holding} of {rocks.lease.kills} kills" in row
