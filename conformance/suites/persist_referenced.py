"""The ``referenced`` timestamp (when an object was last written), which keeps GC safe."""

from __future__ import annotations

import dataclasses

import pytest

from conformance.samples import VersionedTestObj, all_samples, sample_id
from conformance.suites.base import ConformanceSuite
from persist_spi.clock import DEFAULT_CLOCK
from persist_spi.errors import ObjNotFound
from persist_spi.objs import Obj
from persist_spi.persist import Persist

SAMPLES = all_samples()


def _referenced(persist: Persist, obj: Obj) -> int:
    return persist.fetch_obj(obj.id).referenced


class PersistReferencedSuite(ConformanceSuite):
    area = "persist.referenced"

    # Asks for the gate first: it records the test's backend and area for the report, and an
    # autouse fixture of the class would otherwise run before it (and skip unrecorded).
    @pytest.fixture(autouse=True)
    def _not_through_a_cache(self, _lochkit_gate: None, persist: Persist) -> None:
        if persist.is_caching:
            pytest.skip(
                "a caching Persist serves objects with referenced=0 and does not see the backend's "
                "referenced updates; GC (delete_with_referenced) must read uncached (a scan)"
            )

    @pytest.mark.parametrize("obj", SAMPLES, ids=sample_id)
    def test_every_write_moves_referenced_forward(self, persist: Persist, obj: Obj) -> None:
        before = DEFAULT_CLOCK.micros()
        assert persist.store_obj(obj) is True
        first = _referenced(persist, obj)
        assert first > before
        assert persist.store_obj(obj) is False
        second = _referenced(persist, obj)
        assert second > first
        persist.upsert_obj(obj)
        assert _referenced(persist, obj) > second

    def test_bulk_writes_move_referenced_forward(self, persist: Persist) -> None:
        before = DEFAULT_CLOCK.micros()
        assert persist.store_objs(SAMPLES) == [True] * len(SAMPLES)
        first = [o.referenced for o in persist.fetch_objs([o.id for o in SAMPLES]) if o]
        assert all(r > before for r in first)
        assert persist.store_objs(SAMPLES) == [False] * len(SAMPLES)
        second = [o.referenced for o in persist.fetch_objs([o.id for o in SAMPLES]) if o]
        assert all(b > a for a, b in zip(first, second, strict=True))
        persist.upsert_objs(SAMPLES)
        third = [o.referenced for o in persist.fetch_objs([o.id for o in SAMPLES]) if o]
        assert all(b > a for a, b in zip(second, third, strict=True))

    def test_conditional_update_moves_referenced_forward(self, persist: Persist) -> None:
        v1 = VersionedTestObj(id=SAMPLES[0].id, version_token="1", some_value="one")
        v2 = dataclasses.replace(v1, version_token="2", some_value="two")
        assert persist.store_obj(v1) is True
        first = _referenced(persist, v1)
        assert persist.store_obj(v1) is False
        second = _referenced(persist, v1)
        assert second > first
        assert persist.update_conditional(v1, v2) is True
        fetched = persist.fetch_obj(v1.id)
        assert fetched == v2
        assert fetched.referenced > second

    @pytest.mark.parametrize("obj", SAMPLES, ids=sample_id)
    def test_delete_with_referenced_spares_rewritten_objects(self, persist: Persist, obj: Obj) -> None:
        """A GC that read the object before it was written again must not delete it."""
        persist.store_obj(obj)
        seen_by_gc = persist.fetch_obj(obj.id)
        persist.store_obj(obj)
        rewritten = persist.fetch_obj(obj.id)
        assert rewritten.referenced != seen_by_gc.referenced
        assert persist.delete_with_referenced(seen_by_gc) is False
        assert persist.fetch_obj(obj.id) == obj
        assert persist.delete_with_referenced(rewritten) is True
        with pytest.raises(ObjNotFound):
            persist.fetch_obj(obj.id)

    def test_delete_with_referenced_needs_the_stored_value(self, persist: Persist) -> None:
        obj = SAMPLES[1]
        assert persist.store_obj(obj, ignore_soft_size_restrictions=True) is True
        stored = persist.fetch_obj(obj.id)
        assert stored.referenced > 0
        assert persist.delete_with_referenced(obj) is False  # the caller's copy has referenced=0
        assert persist.delete_with_referenced(obj.with_referenced(2**63 - 1)) is False
        assert persist.delete_with_referenced(stored) is True
        assert persist.delete_with_referenced(stored) is False
        with pytest.raises(ObjNotFound):
            persist.fetch_obj(obj.id)
