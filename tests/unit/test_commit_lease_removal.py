"""Deleting a branch removes its commit-target lease (``int/commit-lease/<branch>``) when nobody
holds or waits for it, and only then: holders and waiters finish against the lease they queued on,
and a re-created branch of the same name starts a new one."""

from __future__ import annotations

import threading
import time
from typing import Any, cast

from backends.inmemory.adapter import InMemoryAdapter
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.ids import ObjId
from persist_spi.logic.commit_lease import (
    CommitTargetLease,
    LeaseState,
    lease_ref_name,
    remove_free_lease,
)
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.persist import Persist
from persist_spi.references import Reference
from persist_spi.versionstore import CommitMeta, IcebergTable, Put, VersionStore
from persist_spi.versionstore.content import ContentKey
from persist_spi.versionstore.policies import CoordinatedPolicy
from persist_spi.versionstore.refs import branch, tag

MAIN = branch("main")
DEV = branch("dev")
LEASE = lease_ref_name(DEV.full_name)


def _store() -> VersionStore:
    persist = AdapterPersist(InMemoryAdapter(), StoreConfig())
    RepositoryLogic(persist).initialize("main")
    return VersionStore(persist, policy=CoordinatedPolicy())


def _commit(store: VersionStore, name: str) -> ObjId:
    put = Put(ContentKey.of(name), IcebergTable(metadata_location=name))
    return store.commit(DEV, None, CommitMeta(name), [put]).hash


def _create_dev(store: VersionStore) -> ObjId:
    return store.create_reference(DEV, store.reference(MAIN).hash).hash


def _lease(store: VersionStore) -> LeaseState | None:
    return CommitTargetLease(store.persist, 1000).state(DEV.full_name)


def test_deleting_a_branch_removes_its_free_lease_and_a_re_created_branch_starts_a_new_one() -> None:
    store = _store()
    _create_dev(store)
    head = _commit(store, "a")
    head = _commit(store, "b")
    assert _lease(store) == LeaseState(2, 2)  # the coordinated policy's lease, free again
    store.delete_reference(DEV, head)
    assert store.persist.fetch_reference(LEASE) is None

    _create_dev(store)
    _commit(store, "c")
    assert _lease(store) == LeaseState(1, 1)
    assert [e.meta.message for e in store.get_commits(DEV)] == ["c"]


def test_a_lease_in_use_stays_when_its_branch_is_deleted_and_its_holder_and_waiter_finish_on_it() -> None:
    store = _store()
    head = _create_dev(store)
    lease = CommitTargetLease(store.persist, 1000)
    holding = lease.acquire(DEV.full_name, time.monotonic() + 1)
    assert holding is not None
    waiting, row = lease.take_ticket(DEV.full_name)
    store.delete_reference(DEV, head)
    assert _lease(store) == LeaseState(2, 0)  # held and waited for: not removed

    lease.release(holding)
    assert _lease(store) == LeaseState(2, 1)  # the release moved the same lease on
    hold = lease.wait(DEV.full_name, waiting, row, time.monotonic() + 1)
    assert hold is not None
    lease.release(hold)
    assert _lease(store) == LeaseState(2, 2)
    # A re-created branch carries on with it; its next delete finds it free and removes it.
    head = _create_dev(store)
    head = _commit(store, "a")
    assert _lease(store) == LeaseState(3, 3)
    store.delete_reference(DEV, head)
    assert store.persist.fetch_reference(LEASE) is None


class _TicketTakenWhileDeleting:
    """A Persist through which another writer takes a ticket just before the removal's
    compare-and-swap marks the lease deleted."""

    def __init__(self, persist: Persist) -> None:
        self.persist = persist

    def __getattr__(self, name: str) -> Any:
        return getattr(self.persist, name)

    def mark_reference_as_deleted(self, ref: Reference) -> Reference:
        CommitTargetLease(self.persist, 1000).take_ticket(DEV.full_name)
        return self.persist.mark_reference_as_deleted(ref)


def test_a_ticket_taken_while_the_branch_is_deleted_keeps_the_lease() -> None:
    store = _store()
    _create_dev(store)
    _commit(store, "a")
    assert not remove_free_lease(cast(Persist, _TicketTakenWhileDeleting(store.persist)), DEV.full_name)
    assert _lease(store) == LeaseState(2, 1)


def test_only_a_free_lease_state_is_removed() -> None:
    store = _store()
    persist = store.persist
    assert not remove_free_lease(persist, DEV.full_name)  # none
    persist.add_reference(Reference(LEASE, LeaseState(3, 2).encode()))
    assert not remove_free_lease(persist, DEV.full_name)  # in use
    row = persist.fetch_existing_reference(LEASE)
    persist.update_reference_pointer(row, ObjId(b"\x01" * 32))
    assert not remove_free_lease(persist, DEV.full_name)  # not a lease: left for `lochkit check`
    assert persist.fetch_reference(LEASE) is not None
    # Tags have no lease: deleting one looks for none.
    v1 = store.create_reference(tag("v1"), store.reference(MAIN).hash)
    store.delete_reference(tag("v1"), v1.hash)


def test_a_removal_stopped_between_mark_and_purge_is_finished_by_the_next_writer() -> None:
    store = _store()
    persist = store.persist
    marked = persist.mark_reference_as_deleted(
        persist.add_reference(Reference(LEASE, LeaseState(4, 4).encode()))
    )
    taken: list[int] = []
    # Compare-and-swap cannot move a row marked deleted: without finishing the removal, taking a
    # ticket would spin on it for ever (hence the thread and the bounded join).
    writer = threading.Thread(
        target=lambda: taken.append(CommitTargetLease(persist, 1000).take_ticket(DEV.full_name)[0]),
        daemon=True,
    )
    writer.start()
    writer.join(10)
    assert taken == [0]  # a new lease
    row = persist.fetch_existing_reference(LEASE)
    assert not row.deleted
    assert row != marked
    assert LeaseState.decode(row.pointer) == LeaseState(1, 0)


def test_a_delete_finishes_a_lease_removal_stopped_between_mark_and_purge() -> None:
    store = _store()
    head = _create_dev(store)
    persist = store.persist
    persist.mark_reference_as_deleted(persist.add_reference(Reference(LEASE, LeaseState(4, 4).encode())))
    store.delete_reference(DEV, head)
    assert persist.fetch_reference(LEASE) is None
