"""References: insert-if-absent, and compare-and-swap for every change (mark deleted, purge,
pointer update), with the exact failure types and the current row in each failure."""

from __future__ import annotations

import random

import pytest

from conformance.harness import PersistFactory
from conformance.suites.base import ConformanceSuite
from persist_spi.errors import RefAlreadyExists, RefConditionFailed, RefNotFound
from persist_spi.ids import EMPTY_OBJ_ID, random_obj_id
from persist_spi.persist import Persist
from persist_spi.references import PreviousPointer, Reference


def _ref(name: str = "refs/heads/main", created: int = 1234) -> Reference:
    return Reference(name=name, pointer=random_obj_id(), created_at_micros=created)


class PersistReferencesSuite(ConformanceSuite):
    area = "persist.references"

    def test_reference_create_mark_deleted_purge(self, persist: Persist) -> None:
        ref = _ref()
        assert persist.add_reference(ref) == ref
        with pytest.raises(RefAlreadyExists) as exists:
            persist.add_reference(ref)
        assert exists.value.reference == ref
        assert persist.fetch_reference(ref.name) == ref
        assert persist.fetch_references([ref.name]) == [ref]

        deleted = persist.mark_reference_as_deleted(ref)
        assert deleted == ref.with_deleted(True)
        assert persist.fetch_reference(ref.name) == deleted

        other_pointer = Reference(ref.name, random_obj_id(), False, ref.created_at_micros)
        for attempt in (ref, other_pointer, other_pointer.with_deleted(True), deleted):
            with pytest.raises(RefConditionFailed) as failed:
                persist.mark_reference_as_deleted(attempt)
            assert failed.value.reference == deleted

        with pytest.raises(RefAlreadyExists) as exists:
            persist.add_reference(ref)
        assert exists.value.reference == deleted

        with pytest.raises(RefConditionFailed) as failed:
            persist.purge_reference(other_pointer.with_deleted(True))
        assert failed.value.reference == deleted
        persist.purge_reference(deleted)
        with pytest.raises(RefNotFound):
            persist.purge_reference(deleted)
        with pytest.raises(RefNotFound):
            persist.mark_reference_as_deleted(ref)
        assert persist.fetch_reference(ref.name) is None
        assert persist.fetch_references([ref.name]) == [None]

    def test_purge_requires_the_row_to_be_marked_deleted(self, persist: Persist) -> None:
        ref = persist.add_reference(_ref())
        with pytest.raises(RefConditionFailed) as failed:
            persist.purge_reference(ref)
        assert failed.value.reference == ref
        assert persist.fetch_reference(ref.name) == ref

    def test_adding_a_deleted_reference_is_an_argument_error(self, persist: Persist) -> None:
        with pytest.raises(ValueError, match="deleted"):
            persist.add_reference(_ref().with_deleted(True))
        assert persist.fetch_reference("refs/heads/main") is None

    def test_update_reference_pointer_is_compare_and_swap(self, persist: Persist) -> None:
        ref = persist.add_reference(Reference("refs/heads/b", random_obj_id(), False, 42, random_obj_id()))
        p0 = ref.pointer
        for stale in (
            Reference(ref.name, random_obj_id(), False, 42, ref.extended_info_obj),
            Reference(ref.name, p0, False, 43, ref.extended_info_obj),
            Reference(ref.name, p0, False, 42, random_obj_id()),
            Reference(ref.name, p0, False, 42, None),
        ):
            with pytest.raises(RefConditionFailed) as failed:
                persist.update_reference_pointer(stale, random_obj_id())
            assert failed.value.reference == ref
            assert persist.fetch_reference(ref.name) == ref

        p1, p2 = random_obj_id(), random_obj_id()
        r1 = persist.update_reference_pointer(ref, p1)
        assert r1.pointer == p1
        assert [p.pointer for p in r1.previous_pointers] == [p0]
        r2 = persist.update_reference_pointer(r1, p2)
        assert [p.pointer for p in r2.previous_pointers] == [p1, p0]
        stored = persist.fetch_reference(ref.name)
        assert stored == r2
        assert stored is not None
        assert stored.previous_pointers == r2.previous_pointers

        same = persist.update_reference_pointer(r2, p2)
        assert same == r2
        assert [p.pointer for p in same.previous_pointers] == [p1, p0]

        with pytest.raises(RefConditionFailed):
            persist.update_reference_pointer(r1, random_obj_id())

        deleted = persist.mark_reference_as_deleted(r2)
        fetched = persist.fetch_reference(ref.name)
        assert fetched == deleted
        assert fetched is not None
        assert [p.pointer for p in fetched.previous_pointers] == [p1, p0]
        with pytest.raises(RefConditionFailed) as failed:
            persist.update_reference_pointer(r2, random_obj_id())
        assert failed.value.reference == deleted

    def test_update_of_unknown_reference_never_creates_it(self, persist: Persist) -> None:
        ghost = _ref("refs/heads/ghost")
        with pytest.raises(RefNotFound):
            persist.update_reference_pointer(ghost, random_obj_id())
        assert persist.fetch_reference(ghost.name) is None

    def test_previous_pointers_are_not_part_of_the_condition(self, persist: Persist) -> None:
        ref = persist.add_reference(_ref())
        decorated = Reference(
            ref.name,
            ref.pointer,
            False,
            ref.created_at_micros,
            previous_pointers=(PreviousPointer(random_obj_id(), 1),),
        )
        assert decorated == ref
        updated = persist.update_reference_pointer(decorated, EMPTY_OBJ_ID)
        assert updated.pointer == EMPTY_OBJ_ID

    def test_previous_pointers_respect_the_configured_count(self, persist_factory: PersistFactory) -> None:
        persist = persist_factory(ref_previous_head_count=3)
        ref = persist.add_reference(_ref())
        pointers = [ref.pointer]
        for _ in range(6):
            ref = persist.update_reference_pointer(ref, random_obj_id())
            pointers.append(ref.pointer)
        stored = persist.fetch_reference(ref.name)
        assert stored is not None
        assert [p.pointer for p in stored.previous_pointers] == pointers[-2:-5:-1]

    def test_fetch_305_references_in_request_order(self, persist: Persist) -> None:
        rng = random.Random(305)
        refs = [
            Reference(f"refs/heads/branch-{i:03}", random_obj_id(), False, rng.randrange(1, 2**62))
            for i in range(305)
        ]
        for ref in refs:
            persist.add_reference(ref)
        shuffled = refs[:]
        rng.shuffle(shuffled)
        assert persist.fetch_references([r.name for r in shuffled]) == shuffled

    def test_fetch_references_is_positional_with_gaps(self, persist: Persist) -> None:
        refs = [persist.add_reference(_ref(f"refs/heads/r{i}")) for i in range(5)]
        names: list[str | None] = [None, refs[0].name, "refs/heads/unknown", None, refs[3].name, refs[4].name]
        assert persist.fetch_references(names) == [None, refs[0], None, None, refs[3], refs[4]]
        assert persist.fetch_references([None] * 205) == [None] * 205
        assert persist.fetch_references([]) == []

    def test_reference_names_are_exact_and_case_sensitive(self, persist: Persist) -> None:
        names = [
            "refs/heads/Foo",
            "refs/heads/foo",
            "refs/heads/foo ",
            "refs/heads/ä",
            "refs/heads/a",
            "refs/heads/日本",
            "refs/heads/a  b",
            "refs/heads/a b",
            "int/refs",
        ]
        refs = {n: persist.add_reference(_ref(n)) for n in names}
        assert persist.fetch_references(names) == [refs[n] for n in names]
        assert len({r.pointer for r in refs.values()}) == len(names)

    def test_zero_created_at_and_no_extended_info_round_trip(self, persist: Persist) -> None:
        ref = Reference("refs/heads/plain", EMPTY_OBJ_ID)
        persist.add_reference(ref)
        assert persist.fetch_reference(ref.name) == ref
        moved = persist.update_reference_pointer(ref, random_obj_id())
        persist.purge_reference(persist.mark_reference_as_deleted(moved))
        assert persist.fetch_reference(ref.name) is None
