"""Named references through the reference logic: create/delete/assign/list, internal references,
and recovery of creates and deletes that stopped half-way (injected on a real backend)."""

from __future__ import annotations

import random
import threading
import time

import pytest

from conformance.faults import FaultInjectingPersist
from conformance.suites.base import ConformanceSuite
from persist_spi.errors import ObjNotFound, RefAlreadyExists, RefConditionFailed, RefNotFound
from persist_spi.ids import EMPTY_OBJ_ID, ObjId, random_obj_id
from persist_spi.keys import key
from persist_spi.logic.commit_logic import CommitLogic
from persist_spi.logic.create_commit import Add, CreateCommit
from persist_spi.logic.internal_refs import REF_REFS, REF_REPO, ref_key
from persist_spi.logic.reference_logic import ReferenceLogic
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.objs import CommitObj, CommitType, content_value
from persist_spi.persist import Persist
from persist_spi.references import Reference


def _half_deleted(persist: Persist, refs: ReferenceLogic, name: str, stopped_after: str) -> Reference:
    """A reference whose delete stopped after marking the row, or after also committing the removal
    to int/refs; returns the marked row."""
    deleted = persist.mark_reference_as_deleted(refs.create_reference(name, EMPTY_OBJ_ID))
    if stopped_after == "int-refs-commit":
        refs.commit_delete_reference(deleted, None)
    return deleted


def _chain(persist: Persist, n: int) -> list[CommitObj]:
    logic = CommitLogic(persist)
    head, out = EMPTY_OBJ_ID, []
    for i in range(n):
        create = CreateCommit(head, f"c{i}", adds=(Add(key(f"k{i}"), 1, content_value(f"c{i}", 1, b"x").id),))
        commit = logic.do_commit(create)
        assert commit is not None
        out.append(commit)
        head = commit.id
    return out


class LogicReferencesSuite(ConformanceSuite):
    area = "logic.references"

    @pytest.fixture
    def refs(self, persist: Persist) -> ReferenceLogic:
        RepositoryLogic(persist).initialize("main")
        return ReferenceLogic(persist)

    def test_create_and_delete_a_reference(self, persist: Persist, refs: ReferenceLogic) -> None:
        ext = random_obj_id()
        pointer = _chain(persist, 1)[0].id
        created = refs.create_reference("refs/heads/feature", pointer, ext)
        assert (created.pointer, created.deleted, created.extended_info_obj) == (pointer, False, ext)
        assert created.created_at_micros > 0
        with pytest.raises(RefAlreadyExists) as e:
            refs.create_reference("refs/heads/feature", pointer)
        assert e.value.reference == created
        assert refs.get_references(["refs/heads/feature"]) == [created]
        refs.delete_reference("refs/heads/feature", pointer)
        assert refs.get_references(["refs/heads/feature"]) == [None]
        assert persist.fetch_reference("refs/heads/feature") is None
        internal_commits = list(
            CommitLogic(persist).commit_log(persist.fetch_existing_reference(REF_REFS).pointer)
        )
        assert all(c.commit_type is CommitType.INTERNAL for c in internal_commits)
        assert [c.message.split(" ")[0] for c in internal_commits[:2]] == ["Drop", "Create"]

    def test_assign_moves_a_reference_and_records_history(
        self, persist: Persist, refs: ReferenceLogic
    ) -> None:
        a, b = _chain(persist, 2)
        ref = refs.create_reference("refs/heads/x", a.id)
        moved = refs.assign_reference(ref, b.id)
        assert moved.pointer == b.id
        assert (moved.created_at_micros, moved.extended_info_obj) == (
            ref.created_at_micros,
            ref.extended_info_obj,
        )
        assert [p.pointer for p in moved.previous_pointers] == [a.id]
        with pytest.raises(RefNotFound):
            refs.assign_reference(Reference("refs/heads/unknown", a.id), b.id)
        with pytest.raises(RefConditionFailed):
            refs.assign_reference(ref, a.id)  # stale expectation

    def test_unknown_references(self, refs: ReferenceLogic) -> None:
        with pytest.raises(RefNotFound):
            refs.delete_reference("refs/heads/nope", EMPTY_OBJ_ID)
        with pytest.raises(RefNotFound, match="Reference refs/heads/not_there does not exist") as e:
            refs.get_reference("refs/heads/not_there")
        assert e.value.reference is None

    def test_deleting_with_a_stale_pointer_is_refused(self, persist: Persist, refs: ReferenceLogic) -> None:
        a, b = _chain(persist, 2)
        refs.create_reference("refs/heads/x", a.id)
        with pytest.raises(RefConditionFailed):
            refs.delete_reference("refs/heads/x", b.id)
        assert refs.get_reference("refs/heads/x").pointer == a.id

    def test_internal_references_are_invisible_and_unmanageable(
        self, persist: Persist, refs: ReferenceLogic
    ) -> None:
        assert persist.fetch_reference(REF_REPO) is not None
        assert persist.fetch_reference(REF_REFS) is not None
        assert refs.get_references([REF_REPO, REF_REFS]) == [None, None]
        before = persist.fetch_reference(REF_REPO)
        for attempt in (
            lambda: refs.create_reference("int/something", EMPTY_OBJ_ID),
            lambda: refs.delete_reference(REF_REPO, EMPTY_OBJ_ID),
            lambda: refs.assign_reference(persist.fetch_existing_reference(REF_REPO), EMPTY_OBJ_ID),
        ):
            with pytest.raises(ValueError, match="internal references"):
                attempt()
        assert persist.fetch_reference(REF_REPO) == before

    @pytest.mark.parametrize("count", [0, 1, 3, 10, 99, 100, 101, 305])
    def test_listing_returns_every_reference_in_name_order(self, refs: ReferenceLogic, count: int) -> None:
        names = [f"ref-{i:04}" for i in range(count)]
        for name in reversed(names):
            refs.create_reference(name, EMPTY_OBJ_ID)
        listed = [r.name for r in refs.query_references("ref-")]
        assert listed == names
        if count:
            token = names[count // 2]
            assert [r.name for r in refs.query_references("ref-", token)] == names[count // 2 :]

    def test_listing_by_prefix_and_paging_token(self, refs: ReferenceLogic) -> None:
        letters = "ABCDE"
        for a in letters:
            for b in letters:
                refs.create_reference(f"{a}/{b}", EMPTY_OBJ_ID)
        assert len(list(refs.query_references("A"))) == 5
        assert [r.name for r in refs.query_references("A", "A/C")] == ["A/C", "A/D", "A/E"]
        assert list(refs.query_references("A", "Z")) == []
        assert len(list(refs.query_references("refs/"))) == 1  # only main

    def test_listing_is_exact_byte_order_without_collation(self, refs: ReferenceLogic) -> None:
        names = [
            "a-  1",
            "a-   1",
            "a- 1",
            "a-1",
            "a-10",
            "a-2",
            "ä-1",
            "ä-10",
            "b",
            "B",
            "a-\u00a0",
            "日本-1",
        ]
        for name in names:
            refs.create_reference(name, EMPTY_OBJ_ID)
        listed = [r.name for r in refs.query_references() if not r.name.startswith("refs/")]
        assert listed == sorted(names, key=lambda n: n.encode("utf-8"))
        assert [r.name for r in refs.query_references("a-  ")] == ["a-   1", "a-  1"]
        assert [r.name for r in refs.query_references("ä-")] == ["ä-1", "ä-10"]
        for name in names:
            assert refs.get_reference(name).name == name

    def test_a_lost_race_on_int_refs_is_retried(self, persist: Persist) -> None:
        RepositoryLogic(persist).initialize("main")
        raced = {"done": False}

        def race(ref: Reference, _new: ObjId) -> None:
            if ref.name == REF_REFS and not raced["done"]:
                raced["done"] = True
                ReferenceLogic(persist).create_reference("refs/heads/other", EMPTY_OBJ_ID)

        faulty = FaultInjectingPersist(persist, before_pointer_update=race)
        refs = ReferenceLogic(faulty)
        refs.create_reference("refs/heads/mine", EMPTY_OBJ_ID)
        assert raced["done"]
        assert [r.name for r in refs.query_references("refs/heads/")] == [
            "refs/heads/main",
            "refs/heads/mine",
            "refs/heads/other",
        ]

    # --- recovery --------------------------------------------------------------------------------

    def test_half_done_create_is_finished_by_readers(self, persist: Persist, refs: ReferenceLogic) -> None:
        """The process died after registering the name in int/refs but before adding the row."""
        pointer = _chain(persist, 1)[0].id
        refs.commit_create_reference("refs/heads/half", pointer, None, 1234)
        assert persist.fetch_reference("refs/heads/half") is None
        recovered = refs.get_references(["refs/heads/half"])[0]
        assert recovered == Reference("refs/heads/half", pointer, False, 1234)
        assert persist.fetch_reference("refs/heads/half") == recovered

    def test_half_done_create_is_finished_by_listing(self, persist: Persist, refs: ReferenceLogic) -> None:
        refs.commit_create_reference("refs/heads/half", EMPTY_OBJ_ID, None, 99)
        assert "refs/heads/half" in [r.name for r in refs.query_references()]
        assert persist.fetch_reference("refs/heads/half") is not None

    @pytest.mark.parametrize("same_pointer", [True, False])
    def test_creating_over_a_half_done_create_repairs_it_and_reports_existing(
        self, persist: Persist, refs: ReferenceLogic, same_pointer: bool
    ) -> None:
        a, b = _chain(persist, 2)
        refs.commit_create_reference("refs/heads/half", a.id, None, 77)
        with pytest.raises(RefAlreadyExists) as e:
            refs.create_reference("refs/heads/half", a.id if same_pointer else b.id)
        assert e.value.reference == Reference("refs/heads/half", a.id, False, 77)
        assert persist.fetch_reference("refs/heads/half") == e.value.reference

    def test_deleting_a_half_created_reference(self, persist: Persist, refs: ReferenceLogic) -> None:
        a, b = _chain(persist, 2)
        refs.commit_create_reference("refs/heads/one", a.id, None, 1)
        refs.commit_create_reference("refs/heads/two", a.id, None, 2)
        with pytest.raises(RefConditionFailed):
            refs.delete_reference("refs/heads/two", b.id)
        refs.delete_reference("refs/heads/one", a.id)
        assert refs.get_references(["refs/heads/one"]) == [None]

    @pytest.mark.parametrize("stopped_after", ["mark-deleted", "int-refs-commit"])
    def test_half_done_delete_is_finished_by_readers(
        self, persist: Persist, refs: ReferenceLogic, stopped_after: str
    ) -> None:
        _half_deleted(persist, refs, "refs/heads/doomed", stopped_after)
        assert refs.get_references(["refs/heads/doomed"]) == [None]
        assert persist.fetch_reference("refs/heads/doomed") is None  # purged by the read
        assert [r.name for r in refs.query_references()] == ["refs/heads/main"]

    @pytest.mark.parametrize("stopped_after", ["mark-deleted", "int-refs-commit"])
    def test_half_done_delete_is_finished_by_listing(
        self, persist: Persist, refs: ReferenceLogic, stopped_after: str
    ) -> None:
        _half_deleted(persist, refs, "refs/heads/doomed", stopped_after)
        assert [r.name for r in refs.query_references()] == ["refs/heads/main"]
        assert persist.fetch_reference("refs/heads/doomed") is None

    @staticmethod
    def _listed_in_int_refs(persist: Persist, name: str) -> bool:
        logic = CommitLogic(persist)
        head = logic.fetch_commit(persist.fetch_existing_reference(REF_REFS).pointer)
        assert head is not None
        element = logic.indexes.build_complete_index(head).get(ref_key(name))
        return element is not None and element.op.exists

    @pytest.mark.parametrize("same_pointer", [True, False])
    def test_recreating_after_a_half_done_delete(
        self, persist: Persist, refs: ReferenceLogic, same_pointer: bool
    ) -> None:
        """Only marked deleted: the create finishes the delete, then succeeds (row and int/refs
        entry both back)."""
        _half_deleted(persist, refs, "refs/heads/again", "mark-deleted")
        pointer = EMPTY_OBJ_ID if same_pointer else _chain(persist, 1)[0].id
        created = refs.create_reference("refs/heads/again", pointer)
        assert refs.get_reference("refs/heads/again") == created
        assert created.pointer == pointer
        assert not created.deleted
        assert persist.fetch_reference("refs/heads/again") == created
        assert self._listed_in_int_refs(persist, "refs/heads/again")

    @pytest.mark.parametrize("same_pointer", [True, False])
    def test_recreating_after_the_int_refs_delete_commit_reports_the_deleted_row(
        self, persist: Persist, refs: ReferenceLogic, same_pointer: bool
    ) -> None:
        """The removal is committed to int/refs but the row is still there, flagged deleted: the create
        registers the name again and then finds that row, which it reports as the existing one."""
        deleted = _half_deleted(persist, refs, "refs/heads/again", "int-refs-commit")
        assert not self._listed_in_int_refs(persist, "refs/heads/again")
        pointer = EMPTY_OBJ_ID if same_pointer else _chain(persist, 1)[0].id
        with pytest.raises(RefAlreadyExists) as e:
            refs.create_reference("refs/heads/again", pointer)
        assert e.value.reference == deleted
        assert e.value.reference is not None
        assert e.value.reference.deleted
        assert self._listed_in_int_refs(persist, "refs/heads/again")

    @pytest.mark.parametrize("stopped_after", ["mark-deleted", "int-refs-commit"])
    @pytest.mark.parametrize("same_pointer", [True, False])
    def test_deleting_again_after_a_half_done_delete_reports_not_found(
        self, persist: Persist, refs: ReferenceLogic, same_pointer: bool, stopped_after: str
    ) -> None:
        _half_deleted(persist, refs, "refs/heads/gone", stopped_after)
        with pytest.raises(RefNotFound):
            refs.delete_reference("refs/heads/gone", EMPTY_OBJ_ID if same_pointer else random_obj_id())
        assert persist.fetch_reference("refs/heads/gone") is None
        assert not self._listed_in_int_refs(persist, "refs/heads/gone")

    # --- history rewrite -------------------------------------------------------------------------

    @pytest.mark.parametrize(("commits", "keep"), [(1, 1), (5, 1), (5, 3), (12, 10)])
    def test_rewrite_commit_log_squashes_older_history(
        self, persist: Persist, refs: ReferenceLogic, commits: int, keep: int
    ) -> None:
        chain = _chain(persist, commits)
        ref = refs.create_reference("refs/heads/long", chain[-1].id)
        seen: list[int] = []

        def cutoff(n: int, commit: CommitObj) -> bool:
            seen.append(n)
            return n == keep

        rewritten = refs.rewrite_commit_log(ref, cutoff)
        logic = CommitLogic(persist)
        if commits == 1:
            assert rewritten == ref
            return
        log = list(logic.commit_log(rewritten.pointer))
        assert len(log) == keep
        assert log[-1].direct_parent == EMPTY_OBJ_ID
        assert [c.seq for c in log] == list(range(keep, 0, -1))
        root_ops = logic.indexes.commit_operations(log[-1])
        assert len(root_ops) == commits - keep + 1
        full = {e.key for e in logic.indexes.build_complete_index(log[0]) if e.op.exists}
        assert full == {key(f"k{i}") for i in range(commits)}

    def test_rewrite_without_cutoff_keeps_the_reference(self, persist: Persist, refs: ReferenceLogic) -> None:
        chain = _chain(persist, 4)
        ref = refs.create_reference("refs/heads/r", chain[-1].id)
        assert refs.rewrite_commit_log(ref, lambda n, c: False) is ref

    # --- scale and concurrency -------------------------------------------------------------------

    @pytest.mark.store_config(max_incremental_index_size=1024, max_serialized_index_size=8192)
    def test_a_corrupted_int_refs_is_reported_and_recovers_after_repointing(
        self, persist: Persist, refs: ReferenceLogic
    ) -> None:
        """int/refs losing its newest reference index, then its head commit: listing fails with a
        message naming what is missing; pointing int/refs back at the intact parent brings back every
        reference but the one the lost head created, and creating that one re-indexes it."""
        logic = CommitLogic(persist)

        def head() -> CommitObj:
            found = logic.fetch_commit(persist.fetch_existing_reference(REF_REFS).pointer)
            assert found is not None
            return found

        def segments(commit: CommitObj) -> set[ObjId]:
            return {s.segment for s in commit.reference_index_stripes}

        names: list[str] = []

        def create_one() -> None:
            names.append(f"refs/heads/{'long-branch-name-' * 8}{len(names):04}")
            refs.create_reference(names[-1], EMPTY_OBJ_ID)

        while not head().has_reference_index:
            create_one()
        first_spill = segments(head())
        while segments(head()) == first_spill:
            create_one()
        broken, parent = head(), head().direct_parent
        lost = names[-1]
        assert segments(broken), "int/refs is expected to keep its few stripes in the commit"

        parent_commit = logic.fetch_commit(parent)
        assert parent_commit is not None
        persist.delete_objs(list(segments(broken) - segments(parent_commit)))
        with pytest.raises(RuntimeError, match="does not exist"):
            list(refs.query_references())
        persist.delete_obj(broken.id)
        with pytest.raises(ObjNotFound, match=f"Object with ID {broken.id} not found"):
            list(refs.query_references())

        persist.update_reference_pointer(persist.fetch_existing_reference(REF_REFS), parent)
        listed = [r.name for r in refs.query_references() if r.name != "refs/heads/main"]
        assert listed == sorted(set(names) - {lost})
        with pytest.raises(RefAlreadyExists):
            refs.create_reference(lost, EMPTY_OBJ_ID)
        assert [r.name for r in refs.query_references() if r.name != "refs/heads/main"] == sorted(names)

    @pytest.mark.store_config(max_incremental_index_size=2048, max_serialized_index_size=8192)
    def test_many_references_spill_int_refs_into_a_striped_index(
        self, persist: Persist, refs: ReferenceLogic
    ) -> None:
        names = [f"refs/heads/branch-with-a-rather-long-name-{i:04}" for i in range(100)]
        for name in names:
            refs.create_reference(name, EMPTY_OBJ_ID)
        head = CommitLogic(persist).fetch_commit(persist.fetch_existing_reference(REF_REFS).pointer)
        assert head is not None
        assert head.has_reference_index
        assert [r.name for r in refs.query_references("refs/heads/")] == sorted(["refs/heads/main", *names])
        for name in names:
            refs.delete_reference(name, EMPTY_OBJ_ID)
        assert [r.name for r in refs.query_references()] == ["refs/heads/main"]

    def test_listing_while_references_are_created_and_deleted(
        self, persist: Persist, refs: ReferenceLogic
    ) -> None:
        """A reader listing in a loop never fails and never sees a half-done reference."""
        stop = threading.Event()
        errors: list[BaseException] = []

        def reader() -> None:
            while not stop.is_set():
                try:
                    for ref in ReferenceLogic(persist).query_references("refs/heads/"):
                        assert not ref.deleted
                except BaseException as e:
                    errors.append(e)
                    return
                time.sleep(0.001)

        thread = threading.Thread(target=reader)
        thread.start()
        try:
            rng = random.Random(1)
            for _round in range(3):
                names = [f"refs/heads/branch-{i}-{i & 7}" for i in range(10)]
                for name in names:
                    refs.create_reference(name, EMPTY_OBJ_ID)
                rng.shuffle(names)
                for name in names:
                    refs.delete_reference(name, EMPTY_OBJ_ID)
        finally:
            stop.set()
            thread.join(30)
        assert errors == []
        assert [r.name for r in refs.query_references()] == ["refs/heads/main"]
