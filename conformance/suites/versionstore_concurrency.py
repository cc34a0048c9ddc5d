"""Version-store concurrency semantics: many writers on one branch, lost compare-and-swap races,
retry limits, and writes whose outcome the database did not report.

A commit is built on the head it read and then compare-and-swaps the branch. Losing the race to a
commit on other keys is invisible to the caller: the attempt is redone on the new head. Losing it
to a commit on the same keys is a conflict. Retries stop at ``commit_retries`` or
``commit_timeout_millis``. An "unknown outcome" (e.g. a timeout) of a write is resolved by
re-reading or retrying, so the commit lands exactly once.

Races are injected with :class:`~conformance.faults.FaultInjectingPersist`, which wraps the real
backend: every write still reaches it.
"""

from __future__ import annotations

import itertools
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from conformance.faults import Fault, FaultInjectingPersist
from conformance.suites.versionstore_base import MAIN, VersionStoreSuite, key, table
from persist_spi.ids import ObjId
from persist_spi.persist import Persist
from persist_spi.references import Reference
from persist_spi.versionstore import (
    CommitMeta,
    ContentKey,
    Put,
    ReferenceConflictError,
    ReferenceRetryFailureError,
    VersionStore,
)
from persist_spi.versionstore.refs import NamedRef, branch

USERS = 3
ROUNDS = 20


class VersionStoreConcurrencySuite(VersionStoreSuite):
    area = "versionstore.concurrency"

    # --- simulated users -------------------------------------------------------------------------

    @pytest.mark.parametrize("shared_table", [False, True], ids=["distinct-tables", "single-table"])
    def test_single_branch_many_users(self, vs: VersionStore, shared_table: bool) -> None:
        """Three users take turns for 20 rounds, each committing with the last hash *they* know (so
        usually a stale one). On distinct tables every commit succeeds as is. On one shared table a
        stale hash is a conflict; the user re-reads the head and retries. Either way the log holds
        all 60 commits in order, each on top of the previous one."""
        b = branch("singleBranchManyUsers")
        created = vs.create_reference(b).hash
        known = [created] * USERS
        parent = created
        expected: list[tuple[str, ObjId, ObjId]] = []
        conflicts = 0
        for round_ in range(ROUNDS):
            for user in range(USERS):
                k = key("single-table" if shared_table else f"user-table-{user}")
                message = f"user {user:03d}/commit {round_:03d}"
                data = f"data_file_{user:03d}_{round_:03d}"
                try:
                    head = _user_commit(vs, b, known[user], k, message, data)
                except ReferenceConflictError:
                    assert shared_table, "commits on distinct tables must never conflict"
                    conflicts += 1
                    head = _user_commit(vs, b, vs.hash_on_reference(b, None), k, message, data)
                assert head != known[user]
                expected.append((message, head, parent))
                parent = known[user] = head
        if shared_table:
            assert conflicts > 0
        log = [(e.meta.message, e.hash, e.parent) for e in vs.get_commits(b)]
        assert log == expected[::-1]

    @pytest.mark.store_config(commit_timeout_millis=60_000)
    def test_threads_committing_to_one_branch_all_land_once(self, vs: VersionStore) -> None:
        """Four threads commit five times each to distinct keys of one branch at the same moment:
        lost races are retried (with a generous commit timeout, for slow databases), every commit
        succeeds and appears exactly once in a linear log."""
        threads, commits = 4, 5
        barrier = threading.Barrier(threads)

        def writer(n: int) -> list[ObjId]:
            barrier.wait(timeout=60)
            return [
                vs.commit(MAIN, None, CommitMeta(f"w{n}-{i}"), [Put(key(f"w{n}-{i}"), table(str(i)))]).hash
                for i in range(commits)
            ]

        with ThreadPoolExecutor(threads) as pool:
            heads = [h for result in pool.map(writer, range(threads)) for h in result]
        log = list(vs.get_commits(MAIN))
        assert sorted(e.hash for e in log) == sorted(heads)
        assert len({e.meta.message for e in log}) == threads * commits
        for newer, older in itertools.pairwise(log):
            assert newer.parent == older.hash
        assert len(list(vs.get_entries(MAIN))) == threads * commits

    # --- injected races --------------------------------------------------------------------------

    @pytest.mark.lochkit_requires("injected_faults")
    def test_commit_retries_after_losing_one_race(self, vs: VersionStore, persist: Persist) -> None:
        """Right before the first pointer update another commit (on another key) moves the branch;
        the compare-and-swap fails, the commit is rebuilt on the new head and lands."""
        b = branch("branch1")
        start = vs.create_reference(b).hash
        injected: list[ObjId] = []

        def concurrent_commit(ref: Reference, new_pointer: ObjId) -> None:
            if not injected:
                injected.append(self.commit(vs, b, Put(key("other-key"), table("meta")), expected=start))

        faulty = FaultInjectingPersist(persist, before_pointer_update=concurrent_commit)
        result = VersionStore(faulty).commit(
            b, start, CommitMeta("commit foo"), [Put(key("some-key"), table("m"))]
        )
        assert faulty.calls["update_reference_pointer"] == 2
        assert result.parent == injected[0]
        assert [(e.hash, e.meta.message) for e in vs.get_commits(b)] == [
            (result.hash, "commit foo"),
            (injected[0], "commit"),
        ]
        assert self.values(vs, b, ["some-key", "other-key"]) == {
            "some-key": table("m"),
            "other-key": table("meta"),
        }

    @pytest.mark.lochkit_requires("injected_faults")
    def test_lost_race_to_a_change_of_the_same_key_is_a_conflict(
        self, vs: VersionStore, persist: Persist
    ) -> None:
        """If the commit that won the race changed a key this commit touches, the retry on the new
        head finds the conflict and reports it instead of overwriting the winner."""
        b = branch("branch1")
        vs.create_reference(b)
        start = self.commit(vs, b, Put(key("shared"), table("v1")))
        cid = self.content_id(vs, b, "shared")
        winner: list[ObjId] = []

        def concurrent_commit(ref: Reference, new_pointer: ObjId) -> None:
            if not winner:
                winner.append(self.commit(vs, b, Put(key("shared"), table("winner", cid))))

        faulty = FaultInjectingPersist(persist, before_pointer_update=concurrent_commit)
        with pytest.raises(ReferenceConflictError) as e:
            VersionStore(faulty).commit(
                b, start, CommitMeta("loser"), [Put(key("shared"), table("loser", cid))]
            )
        assert [str(c.key) for c in e.value.conflicts] == ["shared"]
        assert self.head(vs, b) == winner[0]
        assert self.values(vs, b, ["shared"]) == {"shared": table("winner")}

    @pytest.mark.lochkit_requires("injected_faults")
    @pytest.mark.store_config(commit_retries=3, commit_timeout_millis=999_999_999)
    def test_commit_gives_up_after_the_configured_retries(self, vs: VersionStore, persist: Persist) -> None:
        """Another commit wins before every pointer update: after 3 retries the commit fails with
        ReferenceRetryFailureError; the branch holds the 4 concurrent commits and not this one."""
        b = branch("branch1")
        start = vs.create_reference(b).hash
        injected: list[ObjId] = []

        def concurrent_commit(ref: Reference, new_pointer: ObjId) -> None:
            injected.append(self.commit(vs, b, Put(key(f"other-key-{len(injected)}"), table("meta"))))

        faulty = FaultInjectingPersist(persist, before_pointer_update=concurrent_commit)
        with pytest.raises(
            ReferenceRetryFailureError,
            match=r"^The commit operation could not be performed after 3 retries within the configured "
            r"commit timeout after ",
        ):
            VersionStore(faulty).commit(
                b, start, CommitMeta("commit foo"), [Put(key("some-key"), table("m"))]
            )
        assert len(injected) == 4
        assert [e.hash for e in vs.get_commits(b)] == injected[::-1]
        assert vs.get_value(b, key("some-key")) is None

    @pytest.mark.lochkit_requires("injected_faults")
    def test_merge_retries_after_losing_a_race(self, vs: VersionStore, persist: Persist) -> None:
        """Merges compare-and-swap the target like commits: a lost race to a commit on other keys is
        retried and the merge lands on top of it."""
        base = self.commit(vs, MAIN, Put(key("base"), table("base")))
        source = branch("source")
        vs.create_reference(source, base)
        self.commit(vs, source, Put(key("from-source"), table("s")))
        injected: list[ObjId] = []

        def concurrent_commit(ref: Reference, new_pointer: ObjId) -> None:
            if not injected:
                injected.append(self.commit(vs, MAIN, Put(key("concurrent"), table("c"))))

        result = VersionStore(FaultInjectingPersist(persist, before_pointer_update=concurrent_commit)).merge(
            source, MAIN
        )
        assert result.applied
        assert result.effective_target_hash == injected[0]
        assert [e.hash for e in vs.get_commits(MAIN)][:2] == [result.resultant_target_hash, injected[0]]
        assert self.values(vs, MAIN, ["base", "from-source", "concurrent"]) == {
            "base": table("base"),
            "from-source": table("s"),
            "concurrent": table("c"),
        }

    # --- remembered branch rows ------------------------------------------------------------------
    # A store builds a commit's first attempt on the branch row its process last saw, without
    # reading it. Another writer (here: a store over another Persist object, which remembers
    # nothing of this one) makes that row stale; the compare-and-swap must catch it, and no
    # answer may be decided on the stale row.

    @pytest.mark.lochkit_requires("injected_faults")
    def test_a_commit_after_another_writer_moved_the_branch_lands_on_the_new_head(
        self, vs: VersionStore, persist: Persist
    ) -> None:
        b = branch("remembered")
        vs.create_reference(b)
        self.commit(vs, b, Put(key("mine-1"), table("1")))  # vs now remembers this head
        other = VersionStore(FaultInjectingPersist(persist))
        theirs = other.commit(b, None, CommitMeta("theirs"), [Put(key("theirs"), table("t"))]).hash
        mine = vs.commit(b, None, CommitMeta("mine 2"), [Put(key("mine-2"), table("2"))])
        assert mine.parent == theirs
        assert self.messages(vs, b)[:2] == ["mine 2", "theirs"]
        assert self.values(vs, b, ["mine-1", "theirs", "mine-2"]) == {
            "mine-1": table("1"),
            "theirs": table("t"),
            "mine-2": table("2"),
        }

    @pytest.mark.lochkit_requires("injected_faults")
    def test_a_stale_remembered_row_decides_no_error(self, vs: VersionStore, persist: Persist) -> None:
        """The expected hash is the head another writer made, which the remembered row's history
        does not hold: the commit succeeds. Creating a key that other writer created is a
        conflict, reported with the key's current content."""
        b = branch("remembered")
        vs.create_reference(b)
        self.commit(vs, b, Put(key("mine"), table("1")))
        other = VersionStore(FaultInjectingPersist(persist))
        theirs = other.commit(b, None, CommitMeta("theirs"), [Put(key("taken"), table("t"))]).hash
        landed = vs.commit(b, theirs, CommitMeta("on theirs"), [Put(key("next"), table("n"))])
        assert landed.parent == theirs
        other.commit(b, None, CommitMeta("theirs 2"), [Put(key("taken-2"), table("t2"))])
        with pytest.raises(ReferenceConflictError) as e:
            vs.commit(b, None, CommitMeta("mine"), [Put(key("taken-2"), table("mine"))])
        assert [str(c.key) for c in e.value.conflicts] == ["taken-2"]
        assert self.values(vs, b, ["taken-2"]) == {"taken-2": table("t2")}

    @pytest.mark.lochkit_requires("injected_faults")
    def test_a_branch_recreated_by_another_writer_at_the_remembered_head(
        self, vs: VersionStore, persist: Persist
    ) -> None:
        """Deleted and created again at the very commit this store remembers: same pointer, new
        row. The commit lands on the new branch, and the old row is never written back."""
        b = branch("remembered")
        vs.create_reference(b)
        head = self.commit(vs, b, Put(key("k"), table("1")))
        other = VersionStore(FaultInjectingPersist(persist))
        other.delete_reference(b, head)
        assert other.create_reference(b, head).hash == head
        recreated = persist.fetch_reference(b.full_name)
        assert recreated is not None
        mine = vs.commit(b, None, CommitMeta("after"), [Put(key("k2"), table("2"))])
        assert mine.parent == head
        row = persist.fetch_reference(b.full_name)
        assert row is not None
        assert (row.pointer, row.deleted, row.created_at_micros) == (
            mine.hash,
            False,
            recreated.created_at_micros,
        )

    # --- unknown outcomes ------------------------------------------------------------------------

    @pytest.mark.lochkit_requires("injected_faults")
    @pytest.mark.parametrize("after_write", [False, True], ids=["instead-of-write", "after-write"])
    @pytest.mark.parametrize(
        "method",
        ["update_reference_pointer", "store_obj", "store_objs", "store_objs_and_update_reference"],
    )
    def test_commit_survives_one_unknown_write_outcome(
        self, vs: VersionStore, persist: Persist, method: str, after_write: bool
    ) -> None:
        """The first ``method`` call (claiming the content id is a single-object store, the commit
        with its value a multi-object store, storing those and moving the branch the backend's one
        call) reports an unknown outcome, either instead of or after really writing. The commit
        still succeeds, exactly once, with its content readable."""
        b = branch("branch1")
        start = vs.create_reference(b).hash
        faulty = FaultInjectingPersist(persist, [Fault(method, after_write=after_write)])
        result = VersionStore(faulty).commit(
            b, start, CommitMeta("commit foo"), [Put(key("some-key"), table("m"))]
        )
        assert faulty.faults[0].times == 0, f"the {method} fault was never injected"
        assert [(e.hash, e.meta.message) for e in vs.get_commits(b)] == [(result.hash, "commit foo")]
        assert self.values(vs, b, ["some-key"]) == {"some-key": table("m")}
        (cid,) = result.added_content_ids.values()
        assert self.content_id(vs, b, "some-key") == cid

    @pytest.mark.lochkit_requires("injected_faults")
    @pytest.mark.store_config(commit_retries=3)
    @pytest.mark.parametrize("after_write", [False, True], ids=["instead-of-write", "after-write"])
    def test_unknown_outcome_of_every_pointer_update(
        self, vs: VersionStore, persist: Persist, after_write: bool
    ) -> None:
        """If the pointer update never reports success, retries run out (here after 3) and the commit
        fails with ReferenceRetryFailureError and nothing lands - unless the write did happen, which
        the re-read after the first unknown outcome notices, and then the commit succeeds once."""
        b = branch("branch1")
        start = vs.create_reference(b).hash
        faulty = FaultInjectingPersist(persist, [Fault("update_reference_pointer", after_write, times=100)])
        store = VersionStore(faulty)
        if after_write:
            store.commit(b, start, CommitMeta("landed"), [Put(key("k"), table("v"))])
            assert self.messages(vs, b) == ["landed"]
        else:
            with pytest.raises(
                ReferenceRetryFailureError, match=r"^The commit operation could not be performed after 3 "
            ):
                store.commit(b, start, CommitMeta("lost"), [Put(key("k"), table("v"))])
            assert self.messages(vs, b) == []
        assert faulty.calls["update_reference_pointer"] == (1 if after_write else 4)


def _user_commit(vs: VersionStore, b: NamedRef, base: ObjId, k: ContentKey, message: str, data: str) -> ObjId:
    """One simulated user's commit: update ``k`` as seen at ``base`` (or create it)."""
    existing = vs.get_value(vs.hash_on_reference(b, base), k)
    content = table(data, existing.id if existing is not None else None)
    return vs.commit(b, base, CommitMeta(message), [Put(k, content)]).hash
