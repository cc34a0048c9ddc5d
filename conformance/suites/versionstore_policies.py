"""Commit policies under contention: whichever policy lands the commits, no acknowledged commit is
lost, none is duplicated, and each commit keeps exactly its own operations.

Writers with different commit sizes (1 and 5 puts) race on one branch: as threads sharing one
store (every backend), and as separate processes, each with its own connection (backends that
declare ``multi_process``). Then the branch's log must hold exactly the acknowledged commits, in one
linear chain, each with its message and its puts. Policy-specific guarantees follow: a ``group``
chain lands with one compare-and-swap and a conflicting request fails alone; the ``coordinated``
lease is left free, stays internal, is taken over from a stalled holder, and is never needed for
correctness (a commit whose lease was taken over mid-commit, or that gave up waiting, still lands
exactly once).
"""

from __future__ import annotations

import itertools
import multiprocessing
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest

from conformance.faults import FaultInjectingPersist
from conformance.harness import BackendUnderTest
from conformance.suites.versionstore_base import MAIN, VersionStoreSuite, key, table
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.ids import ObjId
from persist_spi.logic.commit_lease import CommitTargetLease, LeaseState, lease_ref_name
from persist_spi.persist import Persist
from persist_spi.references import Reference
from persist_spi.registry import BackendFactory
from persist_spi.versionstore import CommitMeta, IcebergTable, Put, ReferenceConflictError, VersionStore
from persist_spi.versionstore.errors import ConflictType, ReferenceRetryFailureError
from persist_spi.versionstore.policies import POLICY_NAMES, GroupPolicy, commit_policy
from persist_spi.versionstore.refs import NamedRef, branch

#: Puts per commit of each writer: short and long commits race.
PUTS = (1, 5)
THREAD_WRITERS = 4
THREAD_COMMITS = 6
PROCESSES = 2
PROCESS_WRITERS = 2
PROCESS_COMMITS = 4
#: Generous: slow databases under contention must not turn a correctness test into a timeout.
BUDGET_MILLIS = 120_000


@dataclass(frozen=True)
class Acknowledged:
    """A commit a writer was told landed: its id, message and the metadata location per key."""

    hash: ObjId
    message: str
    puts: dict[str, str]


def write(vs: VersionStore, b: NamedRef, writer: str, puts: int, commits: int) -> list[Acknowledged]:
    """``commits`` commits of ``puts`` new tables each; those that fail with a retry timeout are
    simply not acknowledged (none should, with the generous budget)."""
    done = []
    for n in range(commits):
        message = f"{writer} commit {n}"
        locations = {f"{writer}-c{n}-t{p}": f"{writer}/{n}/{p}" for p in range(puts)}
        ops = [Put(key(k), table(loc)) for k, loc in locations.items()]
        try:
            result = vs.commit(b, None, CommitMeta(message), ops)
        except ReferenceRetryFailureError:
            continue
        done.append(Acknowledged(result.hash, message, locations))
    return done


def check_log(vs: VersionStore, b: NamedRef, acknowledged: list[Acknowledged]) -> None:
    """The branch holds exactly the acknowledged commits, once each, in one chain, each with its
    own message and puts."""
    log = list(vs.get_commits(b, with_operations=True))
    hashes = [e.hash for e in log]
    assert len(hashes) == len(set(hashes)), "a commit appears twice in the log"
    by_hash = {a.hash: a for a in acknowledged}
    assert len(by_hash) == len(acknowledged), "two acknowledged commits got the same id"
    missing = set(by_hash) - set(hashes)
    assert not missing, f"{len(missing)} acknowledged commits are not on the branch: lost"
    unknown = set(hashes) - set(by_hash)
    assert not unknown, f"{len(unknown)} commits on the branch were never acknowledged"
    for newer, older in itertools.pairwise(log):
        assert newer.parent == older.hash, "the log is not one linear chain"
    for entry in log:
        expected = by_hash[entry.hash]
        assert entry.meta.message == expected.message
        assert entry.operations is not None
        got = {}
        for op in entry.operations:
            assert isinstance(op, Put), f"{expected.message}: unexpected operation {op}"
            assert isinstance(op.content, IcebergTable)
            got[str(op.key)] = op.content.metadata_location
        assert got == expected.puts, f"{expected.message}: its operations changed"


def _process_writer(
    args: tuple[BackendFactory, str | None, dict[str, str], str, str, str, int, Any],
) -> list[tuple[bytes, str, dict[str, str]]]:
    factory, url, options, repo, policy, branch_name, index, start = args
    adapter = factory.create(url, options)
    try:
        config = StoreConfig(repository_id=repo, commit_policy=policy, commit_timeout_millis=BUDGET_MILLIS)
        vs = VersionStore(AdapterPersist(adapter, config))  # threads share it, hence its policy
        b = branch(branch_name)
        start.wait(timeout=120)
        with ThreadPoolExecutor(PROCESS_WRITERS) as pool:
            results = pool.map(
                lambda w: write(vs, b, f"p{index}w{w}", PUTS[w % len(PUTS)], PROCESS_COMMITS),
                range(PROCESS_WRITERS),
            )
            return [(bytes(a.hash), a.message, a.puts) for r in results for a in r]
    finally:
        adapter.close()


@pytest.mark.store_config(commit_timeout_millis=BUDGET_MILLIS)
class VersionStorePoliciesSuite(VersionStoreSuite):
    area = "versionstore.policies"

    @pytest.mark.parametrize("policy", POLICY_NAMES)
    def test_threads_racing_on_one_branch_land_every_acknowledged_commit_once(
        self, vs: VersionStore, persist: Persist, policy: str
    ) -> None:
        """Four threads (1 and 5 puts per commit) share a store with the policy and commit at the
        same moment."""
        b = branch(f"race-{policy}")
        vs.create_reference(b)
        store = VersionStore(persist, policy=commit_policy(policy))
        barrier = threading.Barrier(THREAD_WRITERS)

        def writer(w: int) -> list[Acknowledged]:
            barrier.wait(timeout=60)
            return write(store, b, f"w{w}", PUTS[w % len(PUTS)], THREAD_COMMITS)

        with ThreadPoolExecutor(THREAD_WRITERS) as pool:
            acknowledged = [a for done in pool.map(writer, range(THREAD_WRITERS)) for a in done]
        assert len(acknowledged) == THREAD_WRITERS * THREAD_COMMITS
        check_log(vs, b, acknowledged)

    @pytest.mark.lochkit_requires("multi_process")
    @pytest.mark.parametrize("policy", POLICY_NAMES)
    def test_processes_racing_on_one_branch_land_every_acknowledged_commit_once(
        self, vs: VersionStore, persist: Persist, lochkit_backend: BackendUnderTest, policy: str
    ) -> None:
        """Two processes with two writer threads each, every process with its own connection and
        store (the realistic case: several servers on one database)."""
        b = branch(f"processes-{policy}")
        vs.create_reference(b)
        context = multiprocessing.get_context("spawn")
        manager = context.Manager()
        try:
            start = manager.Barrier(PROCESSES)
            provisioned = lochkit_backend.provisioned
            args = [
                (
                    lochkit_backend.factory,
                    provisioned.url,
                    dict(provisioned.options),
                    persist.repository_id,
                    policy,
                    b.name,
                    i,
                    start,
                )
                for i in range(PROCESSES)
            ]
            with context.Pool(PROCESSES) as pool:
                results = pool.map(_process_writer, args)
        finally:
            manager.shutdown()
        acknowledged = [Acknowledged(ObjId(h), m, p) for r in results for (h, m, p) in r]
        assert len(acknowledged) == PROCESSES * PROCESS_WRITERS * PROCESS_COMMITS
        check_log(vs, b, acknowledged)

    # --- group ---------------------------------------------------------------------------------

    @pytest.mark.store_config(max_incremental_index_size=2048, commit_timeout_millis=BUDGET_MILLIS)
    @pytest.mark.lochkit_requires("storage_access")
    def test_group_chains_that_must_spill_their_index_land_intact(
        self, vs: VersionStore, persist: Persist
    ) -> None:
        """With a 2 KiB incremental index, chains of queued commits cross the spill limit: the
        chain is then stored commit by commit, spilling as needed, and still lands intact."""
        b = branch("group-spilling")
        vs.create_reference(b)
        store = VersionStore(persist, policy=commit_policy("group"))
        barrier = threading.Barrier(THREAD_WRITERS)

        def writer(w: int) -> list[Acknowledged]:
            barrier.wait(timeout=60)
            return write(store, b, f"w{w}", 3, THREAD_COMMITS)

        with ThreadPoolExecutor(THREAD_WRITERS) as pool:
            acknowledged = [a for done in pool.map(writer, range(THREAD_WRITERS)) for a in done]
        check_log(vs, b, acknowledged)
        # The head commit is read from storage: over REST, ``vs`` is a client without it.
        head = store.commits.fetch_commit(store.reference(b).hash)
        assert head is not None
        assert head.has_reference_index, "the chains never spilled: the test does not test spilling"

    def test_group_lands_queued_commits_with_one_swap_and_a_conflict_fails_alone(
        self, vs: VersionStore, persist: Persist
    ) -> None:
        """While a first commit holds the branch, three more queue: two create the same new key
        (the second of them conflicts with the first), one another key. They land as a chain of
        separate commits with one compare-and-swap; each caller gets its own commit id, and only
        the conflicting one fails."""
        policy = GroupPolicy()
        holding = threading.Event()
        release = threading.Event()

        def hold_first_swap(ref: Reference, new_pointer: ObjId) -> None:
            if not holding.is_set():
                holding.set()
                assert release.wait(60)

        faulty = FaultInjectingPersist(persist, before_pointer_update=hold_first_swap)
        store = VersionStore(faulty, policy=policy)
        outcomes: dict[str, Any] = {}

        def commit(name: str, k: str) -> None:
            try:
                outcomes[name] = store.commit(MAIN, None, CommitMeta(name), [Put(key(k), table(name))])
            except ReferenceConflictError as e:
                outcomes[name] = e

        threads = [threading.Thread(target=commit, args=("first", "a"))]
        threads[0].start()
        assert holding.wait(60)
        for name, k in (("x", "dup"), ("y", "dup"), ("z", "other")):
            threads.append(threading.Thread(target=commit, args=(name, k)))
            threads[-1].start()
            deadline = time.monotonic() + 60
            while policy.queued(faulty, MAIN.full_name) < len(threads) - 1:
                assert time.monotonic() < deadline, "the commit never queued"
                time.sleep(0.001)
        release.set()
        for t in threads:
            t.join(60)
        assert faulty.calls["update_reference_pointer"] == 2
        assert not isinstance(outcomes["first"], Exception)
        assert not isinstance(outcomes["x"], Exception), "the first of two creations of a key lands"
        conflict = outcomes["y"]
        assert isinstance(conflict, ReferenceConflictError)
        assert [(c.conflict_type, str(c.key)) for c in conflict.conflicts] == [
            (ConflictType.KEY_EXISTS, "dup")
        ]
        assert not isinstance(outcomes["z"], Exception)
        log = [(e.hash, e.meta.message) for e in vs.get_commits(MAIN)]
        assert log == [(outcomes[n].hash, n) for n in ("z", "x", "first")]
        assert outcomes["z"].parent == outcomes["x"].hash
        assert outcomes["x"].attempts == 1
        assert self.values(vs, MAIN, ["a", "dup", "other"]) == {
            "a": table("first"),
            "dup": table("x"),
            "other": table("z"),
        }

    # --- coordinated ------------------------------------------------------------------------------

    def test_coordinated_leaves_the_lease_free_and_internal(self, vs: VersionStore, persist: Persist) -> None:
        store = VersionStore(persist, policy=commit_policy("coordinated"))
        for n in range(3):
            self.commit(store, MAIN, Put(key(f"t{n}"), table(str(n))))
        state = CommitTargetLease(persist, 1000).state(MAIN.full_name)
        assert state == LeaseState(3, 3)
        assert [r.named_ref for r in vs.list_references()] == [MAIN]

    @pytest.mark.store_config(commit_lease_millis=100)
    def test_coordinated_takes_the_lease_over_from_a_stalled_holder(
        self, vs: VersionStore, persist: Persist
    ) -> None:
        """A holder took ticket 0 and never released it (a crashed process): the next writer
        skips it after commit-lease-millis without progress, commits, and releases."""
        persist.add_reference(Reference(lease_ref_name(MAIN.full_name), LeaseState(1, 0).encode()))
        store = VersionStore(persist, policy=commit_policy("coordinated"))
        landed = self.commit(store, MAIN, Put(key("t"), table("v")))
        assert self.head(vs, MAIN) == landed
        assert CommitTargetLease(persist, 100).state(MAIN.full_name) == LeaseState(2, 2)

    @pytest.mark.store_config(commit_lease_millis=60_000, commit_timeout_millis=300)
    def test_coordinated_commits_without_the_lease_after_waiting_its_budget(
        self, vs: VersionStore, persist: Persist
    ) -> None:
        """The lease is held and does not expire within the commit's budget: the writer stops
        waiting and commits like an optimistic writer; it lands."""
        persist.add_reference(Reference(lease_ref_name(MAIN.full_name), LeaseState(1, 0).encode()))
        store = VersionStore(persist, policy=commit_policy("coordinated"))
        landed = self.commit(store, MAIN, Put(key("t"), table("v")))
        assert self.messages(vs, MAIN) == ["commit"]
        assert self.head(vs, MAIN) == landed
        assert CommitTargetLease(persist, 100).state(MAIN.full_name) == LeaseState(2, 0)

    def test_coordinated_commit_lands_once_when_its_lease_is_taken_over_mid_commit(
        self, vs: VersionStore, persist: Persist
    ) -> None:
        """Right before the holder moves the branch, another process takes the lease over (as
        from a stalled holder) and commits first. The holder's swap loses, it retries and lands;
        its release finds the lease no longer its own and leaves it alone."""
        other: list[ObjId] = []

        def take_over_and_commit(ref: Reference, new_pointer: ObjId) -> None:
            if other or not ref.name.startswith("refs/heads/"):
                return
            row = persist.fetch_reference(lease_ref_name(MAIN.full_name))
            assert row is not None
            state = LeaseState.decode(row.pointer)
            persist.update_reference_pointer(row, LeaseState(state.next_ticket, state.serving + 1).encode())
            other.append(self.commit(vs, MAIN, Put(key("other"), table("o")), message="other"))

        faulty = FaultInjectingPersist(persist, before_pointer_update=take_over_and_commit)
        result = VersionStore(faulty, policy=commit_policy("coordinated")).commit(
            MAIN, None, CommitMeta("holder"), [Put(key("mine"), table("m"))]
        )
        assert result.attempts == 2
        assert [(e.hash, e.meta.message) for e in vs.get_commits(MAIN)] == [
            (result.hash, "holder"),
            (other[0], "other"),
        ]
        assert self.values(vs, MAIN, ["mine", "other"]) == {"mine": table("m"), "other": table("o")}
        assert CommitTargetLease(persist, 1000).state(MAIN.full_name) == LeaseState(1, 1)
