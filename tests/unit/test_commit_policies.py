"""The commit policies' own logic on the in-memory backend: choosing a policy, the fairness rule,
the lease's pointer layout and ticket order, and group chains. Correctness under contention on real
databases is the conformance suite ``versionstore.policies``."""

from __future__ import annotations

import gc
import threading
import time
from typing import cast

import pytest

from backends.inmemory.adapter import InMemoryAdapter
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.logic.commit_lease import CommitTargetLease, LeaseState, lease_ref_name
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.persist import Persist
from persist_spi.versionstore import CommitMeta, IcebergTable, Put, VersionStore
from persist_spi.versionstore.content import ContentKey
from persist_spi.versionstore.policies import (
    POLICY_NAMES,
    CoordinatedPolicy,
    GroupPolicy,
    NessiePolicy,
    commit_policy,
    shared_policy,
)
from persist_spi.versionstore.policies.base import PerPersist
from persist_spi.versionstore.policies.fair import FairnessGate, FairPolicy
from persist_spi.versionstore.refs import branch

MAIN = branch("main")


def _persist(commit_policy: str = "nessie") -> AdapterPersist:
    persist = AdapterPersist(InMemoryAdapter(), StoreConfig(commit_policy=commit_policy))
    RepositoryLogic(persist).initialize("main")
    return persist


def _put(store: VersionStore, name: str) -> None:
    store.commit(
        MAIN, None, CommitMeta(name), [Put(ContentKey.of(name), IcebergTable(metadata_location=name))]
    )


class _CyclicPersist:
    """Stands in for a Persist that only the cycle collector frees (a cache pointing back at it)."""

    def __init__(self) -> None:
        self.itself = self


def test_a_persist_collected_while_another_registers_does_not_deadlock() -> None:
    """CI once hung here: the collector finished an old Persist while the registry's lock was
    held to register a new one, and the old one's finalizer waited for that same lock."""

    def collect_then_make(_: object) -> dict[str, int]:
        gc.collect()  # what any allocation under the lock may start
        return {}

    values: PerPersist[dict[str, int]] = PerPersist(collect_then_make)
    # Stand-ins: PerPersist only keys on the object.
    old = cast(Persist, _CyclicPersist())
    values(old)
    del old
    new = cast(Persist, _CyclicPersist())
    done = threading.Event()

    def register() -> None:
        values(new)
        done.set()

    registered = threading.Thread(target=register, daemon=True)
    registered.start()
    assert done.wait(10), "registering a Persist deadlocked on the finalizer of a collected one"


def test_every_policy_is_chosen_by_name_and_an_unknown_name_lists_them() -> None:
    assert [commit_policy(n).name for n in POLICY_NAMES] == list(POLICY_NAMES)
    with pytest.raises(ValueError, match="Unknown commit policy 'eager'; known policies: nessie, immediate"):
        commit_policy("eager")


def test_store_config_chooses_the_policy_and_stores_over_one_persist_share_it() -> None:
    persist = _persist(commit_policy="coordinated")
    first, second = VersionStore(persist), VersionStore(persist)
    assert isinstance(first.policy, CoordinatedPolicy)
    assert first.policy is second.policy
    assert VersionStore(_persist()).policy.name == "nessie"
    assert shared_policy(persist, "group") is shared_policy(persist, "group")
    with pytest.raises(ValueError, match="Unknown commit policy"):
        VersionStore(_persist(commit_policy="nope"))


def test_explicit_policy_object_wins_over_the_config() -> None:
    policy = GroupPolicy()
    assert VersionStore(_persist(commit_policy="coordinated"), policy=policy).policy is policy


def test_fairness_gate_lets_the_writer_with_most_lost_races_go_first() -> None:
    gate = FairnessGate()
    gate.enter(1)
    gate.enter(2)
    assert gate.lost(1) is True  # 1 lost once, 2 never: 1 leads
    order: list[str] = []

    def second_writer() -> None:
        gate.wait_turn(2, time.monotonic() + 30)
        order.append("2")

    waiting = threading.Thread(target=second_writer)
    waiting.start()
    time.sleep(0.05)
    assert order == []  # writer 2 waits for writer 1
    gate.wait_turn(1, time.monotonic() + 1)  # the leader never waits
    order.append("1")
    gate.leave(1)
    waiting.join(30)
    assert order == ["1", "2"]


def test_fairness_gate_wait_ends_at_the_deadline() -> None:
    gate = FairnessGate()
    gate.enter(1)
    gate.enter(2)
    gate.lost(1)
    started = time.monotonic()
    gate.wait_turn(2, started + 0.05)
    assert time.monotonic() - started >= 0.05


def test_a_lone_writer_that_lost_keeps_the_backoff() -> None:
    gate = FairnessGate()
    gate.enter(1)
    assert gate.lost(1) is False  # nobody here waits for it: racing other processes, it sleeps


def test_lease_pointer_layout_round_trips_and_cannot_be_an_object_id() -> None:
    pointer = LeaseState(7, 5).encode()
    assert len(pointer) == 20
    assert bytes(pointer[:4]) == b"lkl1"
    assert LeaseState.decode(pointer) == LeaseState(7, 5)
    assert LeaseState.decode(pointer).waiting == 2
    with pytest.raises(ValueError, match="is not a lochkit commit-target lease"):
        LeaseState.decode(b"\x00" * 32)


def test_lease_serves_tickets_in_order_and_release_can_hand_the_next_one_over() -> None:
    persist = _persist()
    lease = CommitTargetLease(persist, 1000)
    first, row = lease.take_ticket(MAIN.full_name)
    second, _ = lease.take_ticket(MAIN.full_name)
    assert (first, second) == (0, 1)
    hold = lease.wait(MAIN.full_name, first, row, time.monotonic() + 1)
    assert hold is not None
    # The second ticket is not served while the first is held; its wait gives up at the deadline.
    assert lease.wait(MAIN.full_name, second, row, time.monotonic() + 0.01) is None
    taken = lease.release(hold, take_next=True)
    assert taken is not None
    assert taken[0] == 2
    assert lease.state(MAIN.full_name) == LeaseState(3, 1)
    assert persist.fetch_reference(lease_ref_name(MAIN.full_name)) is not None


def test_coordinated_serialises_threads_of_a_process_in_arrival_order() -> None:
    persist = _persist()
    store = VersionStore(persist, policy=CoordinatedPolicy(lease=False))
    inside = 0
    most = 0
    lock = threading.Lock()

    def validator(_: object) -> None:
        nonlocal inside, most
        with lock:
            inside += 1
            most = max(most, inside)
        time.sleep(0.002)
        with lock:
            inside -= 1

    def writer(w: int) -> None:
        for n in range(5):
            name = f"w{w}-{n}"
            store.commit(
                MAIN,
                None,
                CommitMeta(name),
                [Put(ContentKey.of(name), IcebergTable(metadata_location=name))],
                validator,
            )

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert most == 1
    assert len(list(store.get_commits(MAIN))) == 20
    assert persist.fetch_reference(lease_ref_name(MAIN.full_name)) is None  # lease=False: no lease ref


def test_nessie_policy_is_the_default_and_fair_is_chosen_by_name() -> None:
    store = VersionStore(_persist())
    assert isinstance(store.policy, NessiePolicy)
    _put(store, "a")
    assert [e.meta.message for e in store.get_commits(MAIN)] == ["a"]
    store = VersionStore(_persist(commit_policy="fair"))
    assert isinstance(store.policy, FairPolicy)
    _put(store, "a")
    assert [e.meta.message for e in store.get_commits(MAIN)] == ["a"]


def test_per_persist_forgets_a_collected_persist_while_it_makes_another() -> None:
    """A collection under PerPersist's lock runs the finalizer of a collected Persist, which takes
    the same lock in the same thread: it must not wait for itself."""

    class Cyclic:  # collected only by the garbage collector, like a Persist in a reference cycle
        def __init__(self) -> None:
            self.me = self

    def make(_: object) -> object:
        gc.collect()
        return object()

    values = PerPersist(make)
    old = cast(Persist, Cyclic())  # a stand-in: PerPersist only keys on the object
    values(old)
    del old
    worker = threading.Thread(target=values, args=(Cyclic(),), daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "PerPersist deadlocked on its own lock"
    assert len(values._values) == 1  # the collected one was forgotten
