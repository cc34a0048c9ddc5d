"""The lease journal of the campaign's lease-crash writers: a writer's ticket, when it holds the
lease, when it starts to give it up, and when it skips a dead holder's ticket, read from the rows
the ``coordinated`` policy reads and swaps (on the in-memory backend)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from backends.inmemory.adapter import InMemoryAdapter
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.logic.commit_lease import CommitTargetLease, lease_ref_name
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.versionstore import CommitMeta, IcebergTable, Put, VersionStore
from persist_spi.versionstore.content import ContentKey
from persist_spi.versionstore.refs import branch
from reliability.journal import Journal, read_journal
from reliability.lease_watch import LeaseEvents, LeaseWatch

MAIN = branch("main")
LEASE = lease_ref_name(MAIN.full_name)


def _persist(adapter: InMemoryAdapter, lease_millis: int = 1000) -> AdapterPersist:
    config = StoreConfig(commit_policy="coordinated", commit_lease_millis=lease_millis)
    return AdapterPersist(adapter, config)


def _watch(persist: AdapterPersist, tmp_path: Path, writer: str, **kw: Any) -> LeaseWatch:
    return LeaseWatch(persist, Journal(tmp_path / f"lease-{writer}.jsonl"), writer, **kw)


def _events(tmp_path: Path, writer: str) -> list[tuple[str, int]]:
    return [(r["e"], r["ticket"]) for r in read_journal(tmp_path / f"lease-{writer}.jsonl")]


def test_each_coordinated_commit_holds_its_ticket_then_releases_it(tmp_path: Path) -> None:
    adapter = InMemoryAdapter()
    persist = _persist(adapter)
    RepositoryLogic(persist).initialize("main")
    pauses: list[float] = []
    store = VersionStore(_watch(persist, tmp_path, "a", pause=(0.01, 0.02), sleep=pauses.append))
    for n in range(3):
        key = ContentKey.of(f"t{n}")
        store.commit(MAIN, None, CommitMeta(f"c{n}"), [Put(key, IcebergTable(metadata_location=f"m{n}"))])
    assert _events(tmp_path, "a") == [
        ("hold", 0),
        ("releasing", 0),
        ("hold", 1),
        ("releasing", 1),
        ("hold", 2),
        ("releasing", 2),
    ]
    assert len(pauses) == 3
    assert all(0.01 <= p <= 0.02 for p in pauses)
    events = LeaseEvents()
    events.merge(read_journal(tmp_path / "lease-a.jsonl"))
    assert events.holding("a") is None  # released its last ticket


def test_a_dead_holders_ticket_is_journaled_held_and_skipped_by_the_waiter(tmp_path: Path) -> None:
    adapter = InMemoryAdapter()
    dead = CommitTargetLease(_watch(_persist(adapter, 30), tmp_path, "dead"), 30)
    assert dead.acquire(MAIN.full_name, deadline=float("inf")) is not None  # and never released
    waiter = CommitTargetLease(_watch(_persist(adapter, 30), tmp_path, "waiter"), 30)
    hold = waiter.acquire(MAIN.full_name, deadline=float("inf"))
    assert hold is not None
    assert hold.ticket == 1
    assert _events(tmp_path, "dead") == [("hold", 0)]
    assert _events(tmp_path, "waiter") == [("skip", 0), ("hold", 1)]
    events = LeaseEvents()
    for writer in ("dead", "waiter"):
        events.merge(read_journal(tmp_path / f"lease-{writer}.jsonl"))
    assert events.holding("dead") == (LEASE, 0)
    assert events.holding("waiter") == (LEASE, 1)
    assert set(events.skipped) == {(LEASE, 0)}


def test_a_ticket_that_is_not_served_yet_is_not_held(tmp_path: Path) -> None:
    adapter = InMemoryAdapter()
    first = CommitTargetLease(_watch(_persist(adapter), tmp_path, "first"), 1000)
    assert first.acquire(MAIN.full_name, deadline=float("inf")) is not None
    second = CommitTargetLease(_watch(_persist(adapter), tmp_path, "second"), 1000)
    second.take_ticket(MAIN.full_name)  # ticket 1, waiting behind ticket 0
    assert _events(tmp_path, "second") == []
    assert second.state(MAIN.full_name) is not None
    assert _events(tmp_path, "second") == []  # reading the row while ticket 0 is served


def test_a_release_that_lost_its_race_is_journaled_before_each_try_and_holds_nothing_after(
    tmp_path: Path,
) -> None:
    adapter = InMemoryAdapter()
    holder = CommitTargetLease(_watch(_persist(adapter), tmp_path, "h"), 1000)
    hold = holder.acquire(MAIN.full_name, deadline=float("inf"))
    assert hold is not None
    other = CommitTargetLease(_persist(adapter), 1000)
    other.take_ticket(MAIN.full_name)  # moves the row under the holder: its release retries
    holder.release(hold)
    assert _events(tmp_path, "h") == [("hold", 0), ("releasing", 0), ("releasing", 0)]
    events = LeaseEvents()
    events.merge(read_journal(tmp_path / "lease-h.jsonl"))
    assert events.holding("h") is None
