"""A commit's first attempt on the branch row its process remembers (``known_heads``): when it is
used, when it is not, and that a stale one costs one extra compare-and-swap and nothing else.
That a stale row never lands or decides an answer, on every real backend, is the conformance
suite's ``versionstore.concurrency``."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from backends.inmemory.adapter import InMemoryAdapter
from conformance.faults import FaultInjectingPersist
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.ids import EMPTY_OBJ_ID
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.references import Reference
from persist_spi.versionstore import CommitMeta, IcebergTable, Put, VersionStore
from persist_spi.versionstore.content import ContentKey
from persist_spi.versionstore.known_heads import QUIET_AFTER_LOST_RACE_NANOS, KnownHeads
from persist_spi.versionstore.refs import branch

MAIN = branch("main")


class _Clock:
    def __init__(self) -> None:
        self.nanos = 0

    def __call__(self) -> int:
        return self.nanos


def _row(name: str = "refs/heads/main", deleted: bool = False) -> Reference:
    return Reference(name, EMPTY_OBJ_ID, deleted)


def test_a_remembered_row_is_served_until_a_race_is_lost_then_not_for_a_while() -> None:
    clock = _Clock()
    heads = KnownHeads(clock)
    assert heads.get("refs/heads/main") is None
    row = _row()
    heads.remember(row)
    assert heads.get("refs/heads/main") is row
    heads.lost_race("refs/heads/main")
    heads.remember(row)  # read again right after the lost race
    assert heads.get("refs/heads/main") is None
    clock.nanos += QUIET_AFTER_LOST_RACE_NANOS - 1
    assert heads.get("refs/heads/main") is None
    clock.nanos += 1
    assert heads.get("refs/heads/main") is row


def test_deleted_and_forgotten_rows_are_not_served() -> None:
    heads = KnownHeads()
    heads.remember(_row())
    heads.forget("refs/heads/main")
    assert heads.get("refs/heads/main") is None
    heads.remember(_row(deleted=True))
    assert heads.get("refs/heads/main") is None


class _CountingPersist(FaultInjectingPersist):
    """Counts branch reads too (the fault injector counts only writes)."""

    def fetch_references_for_update(self, names: Sequence[str | None]) -> list[Reference | None]:
        self.calls["fetch_references_for_update"] = self.calls.get("fetch_references_for_update", 0) + 1
        return super().fetch_references_for_update(names)


def test_the_memory_keeps_the_most_recently_used_rows_up_to_its_capacity() -> None:
    heads = KnownHeads(capacity=2)
    heads.remember(_row("refs/heads/a"))
    heads.remember(_row("refs/heads/b"))
    heads.remember(_row("refs/heads/a"))  # used again: now the newest
    heads.remember(_row("refs/heads/c"))
    assert [n for n in ("refs/heads/a", "refs/heads/b", "refs/heads/c") if heads.get(n)] == [
        "refs/heads/a",
        "refs/heads/c",
    ]


def _put(store: VersionStore, name: str) -> None:
    store.commit(
        MAIN, None, CommitMeta(name), [Put(ContentKey.of(name), IcebergTable(metadata_location=name))]
    )


@pytest.fixture
def persist() -> AdapterPersist:
    persist = AdapterPersist(InMemoryAdapter(), StoreConfig())
    RepositoryLogic(persist).initialize("main")
    return persist


def test_a_sole_writer_does_not_read_its_branch_again(persist: AdapterPersist) -> None:
    counting = _CountingPersist(persist)
    store = VersionStore(counting)
    _put(store, "first")  # nothing remembered yet: reads the branch
    reads = counting.calls["fetch_references_for_update"]
    for i in range(5):
        _put(store, f"more-{i}")
    assert counting.calls["fetch_references_for_update"] == reads
    assert counting.calls["update_reference_pointer"] == 6


def test_a_stale_row_costs_one_more_compare_and_swap_and_no_sleep(persist: AdapterPersist) -> None:
    counting = _CountingPersist(persist)
    mine = VersionStore(counting)
    _put(mine, "mine")
    _put(VersionStore(_CountingPersist(persist)), "theirs")  # another memory
    before = counting.calls["update_reference_pointer"]
    result = mine.commit(
        MAIN, None, CommitMeta("again"), [Put(ContentKey.of("again"), IcebergTable(metadata_location="a"))]
    )
    assert counting.calls["update_reference_pointer"] - before == 2
    assert result.attempts == 1  # the re-read row was used at once, without the retry loop's sleep
    # The race was lost: the branch is read on the next commits, for a while.
    reads = counting.calls["fetch_references_for_update"]
    _put(mine, "next")
    assert counting.calls["fetch_references_for_update"] == reads + 1


def test_a_branch_changed_by_this_store_is_not_built_on_from_memory(persist: AdapterPersist) -> None:
    counting = _CountingPersist(persist)
    store = VersionStore(counting)
    _put(store, "one")
    first = store.reference(MAIN).hash
    _put(store, "two")
    store.assign(MAIN, None, first)
    before = counting.calls["update_reference_pointer"]
    _put(store, "three")
    assert counting.calls["update_reference_pointer"] - before == 1
    assert next(iter(store.get_commits(MAIN))).parent == first


def test_a_commit_after_the_repository_was_rebuilt_elsewhere_lands() -> None:
    """The remembered head commit is gone (the repository was erased and initialised again through
    another Persist): the commit is built on the branch as it is now."""
    adapter = InMemoryAdapter()
    mine = VersionStore(AdapterPersist(adapter, StoreConfig()))
    RepositoryLogic(mine.persist).initialize("main")
    _put(mine, "before")
    elsewhere = AdapterPersist(adapter, StoreConfig())
    elsewhere.erase()
    RepositoryLogic(elsewhere).initialize("main")
    _put(mine, "after")
    assert [e.meta.message for e in mine.get_commits(MAIN)] == ["after"]
