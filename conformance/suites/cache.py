"""The object cache in front of a real backend: a :class:`~persist_spi.cache.CachingPersist` over the
backend's Persist, with a counting spy in between to tell which calls reached the backend.

Also home of the two test helpers the cache's unit tests share: :class:`CountingPersist` (a spy
that forwards every call to a real Persist and counts it) and :class:`ManualClock`.
"""

from __future__ import annotations

import dataclasses
import os
import uuid
from collections import Counter
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest

from conformance.harness import PersistFactory
from conformance.samples import VersionedTestObj, all_samples, sample_id
from conformance.suites.base import ConformanceSuite
from persist_spi.cache import CacheConfig, CachingPersist, ObjectCache
from persist_spi.errors import ObjNotFound, ObjTooLarge, RefConditionFailed
from persist_spi.forwarding import ForwardingPersist
from persist_spi.ids import EMPTY_OBJ_ID, ObjId, random_obj_id
from persist_spi.objs import CommitObj, Obj, TagObj, tag_obj
from persist_spi.objtypes import ObjType, register_obj_type
from persist_spi.persist import Persist
from persist_spi.references import Reference

T = TypeVar("T")
SAMPLES = all_samples(seed=2024)
HOUR = 3600.0


@register_obj_type(
    "LOCHKIT_TEST_NEGATIVE_CACHED",
    "lt-negcached",
    negative_cache_expires_at=lambda now: now + 60_000_000,
)
@dataclass(frozen=True, slots=True, kw_only=True)
class NegativeCachedTestObj(Obj):
    """A custom type that opts in to negative caching for one minute."""

    text: str = ""


class ManualClock:
    """A clock that moves only when told to (µs since the epoch)."""

    def __init__(self, start_micros: int = 1_700_000_000_000_000) -> None:
        self.now = start_micros

    def micros(self) -> int:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += int(seconds * 1_000_000)


#: Methods whose first argument is a batch (ids, objects, names): the spy keeps a copy of it.
_BATCHES = frozenset(
    {
        "fetch_typed_objs_if_exist",
        "store_objs",
        "upsert_objs",
        "delete_objs",
        "fetch_references",
        "fetch_references_for_update",
    }
)


class CountingPersist(ForwardingPersist):
    """Forwards every call to ``delegate`` (a real Persist) and counts it, with its arguments."""

    def __init__(self, delegate: Persist) -> None:
        super().__init__(delegate)
        self.calls: Counter[str] = Counter()
        self.log: list[tuple[str, tuple[Any, ...]]] = []

    def _count(self, name: str, *args: Any) -> None:
        self.calls[name] += 1
        self.log.append((name, args))

    def _call(self, method: str, call: Callable[..., T], *args: Any) -> T:
        recorded = (list(args[0]), *args[1:]) if method in _BATCHES else args
        if method == "store_objs":
            recorded = recorded[:1]  # which objects went down, not the size-limit switch
        self._count(method, *recorded)
        return call(*args)

    def reset(self) -> None:
        self.calls.clear()
        self.log.clear()

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    def args_of(self, name: str) -> list[tuple[Any, ...]]:
        return [args for n, args in self.log if n == name]

    def fetch_obj_type(self, obj_id: ObjId) -> ObjType:
        # Forwarded as it is: a cache above asks the delegate for the type alone.
        return self._call("fetch_obj_type", self.delegate.fetch_obj_type, obj_id)


def skip_if_references_cached(persist: Persist, why: str) -> None:
    """For suite tests that change references behind the Persist's back (through the adapter or
    from other processes): a reference cache is only valid when every writer goes through it."""
    if getattr(persist, "caches_references", False):
        pytest.skip(f"{why}, bypassing the reference cache (ref caching is single-writer only)")


def cached(
    persist: Persist, cache: ObjectCache | None = None, **config: Any
) -> tuple[CachingPersist, CountingPersist]:
    """``persist`` behind a spy behind a CachingPersist with its own cache (unless one is given)."""
    spy = CountingPersist(persist)
    return CachingPersist(spy, cache if cache is not None else ObjectCache(CacheConfig(**config))), spy


def _versions() -> list[VersionedTestObj]:
    v1 = VersionedTestObj(id=random_obj_id(), version_token="1", some_value="one")
    return [dataclasses.replace(v1, version_token=str(i), some_value=f"v{i}") for i in range(1, 5)]


class CachingPersistSuite(ConformanceSuite):
    area = "cache"

    # --- objects ---------------------------------------------------------------------------------

    @pytest.mark.parametrize("obj", SAMPLES, ids=sample_id)
    def test_reads_after_writes_return_equal_objects(self, persist: Persist, obj: Obj) -> None:
        """A stored object is cached: every read form answers it, unreferenced, without the backend."""
        cp, spy = cached(persist)
        assert cp.is_caching
        assert cp.store_obj(obj) is True
        spy.reset()
        reads = [
            cp.fetch_obj(obj.id),
            cp.fetch_typed_obj(obj.id, obj.obj_type),
            *cp.fetch_objs([obj.id]),
            *cp.fetch_objs_if_exist([obj.id]),
            cp.get_immediate(obj.id),
        ]
        assert reads == [obj] * len(reads)
        assert all(r is not None and r.referenced == 0 for r in reads)
        assert cp.fetch_obj_type(obj.id) == obj.obj_type
        assert spy.total == 0
        assert persist.fetch_obj(obj.id) == obj  # really written to the backend

    def test_second_read_is_served_without_the_backend(self, persist: Persist) -> None:
        assert all(persist.store_objs(SAMPLES))
        cp, spy = cached(persist)
        ids = [o.id for o in SAMPLES]
        assert cp.get_immediate(ids[0]) is None
        assert cp.fetch_objs(ids) == SAMPLES
        assert spy.calls == Counter({"fetch_typed_objs_if_exist": 1})
        spy.reset()
        assert cp.fetch_objs(ids) == SAMPLES
        assert cp.fetch_objs_if_exist(ids) == SAMPLES
        assert [cp.get_immediate(i) for i in ids] == SAMPLES
        assert spy.total == 0
        stats = cp.cache.stats()
        assert (stats.misses, stats.hits) == (len(ids) + 1, 3 * len(ids))

    def test_bulk_read_sends_all_misses_in_one_call(self, persist: Persist) -> None:
        assert all(persist.store_objs(SAMPLES))
        cp, spy = cached(persist)
        warm, cold = SAMPLES[::2], SAMPLES[1::2]
        cp.fetch_objs([o.id for o in warm])
        spy.reset()
        missing = [random_obj_id(), random_obj_id()]
        ids: list[ObjId | None] = [*(o.id for o in SAMPLES), *missing, None, EMPTY_OBJ_ID]
        assert cp.fetch_objs_if_exist(ids) == [*SAMPLES, None, None, None, None]
        assert spy.calls == Counter({"fetch_typed_objs_if_exist": 1})
        [(sent, _)] = spy.args_of("fetch_typed_objs_if_exist")
        assert set(sent) == {o.id for o in cold} | set(missing)
        with pytest.raises(ObjNotFound) as e:
            cp.fetch_objs(ids)
        assert set(e.value.obj_ids) == {*missing, EMPTY_OBJ_ID}

    def test_typed_reads_answer_from_the_cache(self, persist: Persist) -> None:
        commit = CommitObj(id=random_obj_id(), seq=1, tail=(EMPTY_OBJ_ID,), message="typed")
        cp, spy = cached(persist)
        cp.store_obj(commit)
        spy.reset()
        assert cp.fetch_typed_objs_if_exist([commit.id], TagObj.TYPE) == [None]
        with pytest.raises(ObjNotFound):
            cp.fetch_as(commit.id, TagObj)
        assert cp.fetch_as(commit.id, CommitObj) == commit
        assert spy.total == 0

    def test_store_caches_only_new_objects(self, persist: Persist) -> None:
        old, new = tag_obj("stored before"), tag_obj("stored through the cache")
        persist.store_obj(old)
        cp, spy = cached(persist)
        assert cp.store_objs([old, None, new]) == [False, False, True]
        assert cp.get_immediate(old.id) is None
        assert cp.get_immediate(new.id) == new
        spy.reset()
        assert cp.fetch_objs([old.id, new.id]) == [old, new]
        [(sent, _)] = spy.args_of("fetch_typed_objs_if_exist")
        assert sent == [old.id]

    def test_upsert_and_delete_evict(self, persist_factory: PersistFactory) -> None:
        persist = persist_factory(max_incremental_index_size=1024)
        commit = CommitObj(id=random_obj_id(), seq=1, tail=(EMPTY_OBJ_ID,), message="v1")
        cp, spy = cached(persist)
        cp.store_obj(commit)
        replaced = dataclasses.replace(commit, message="v2")
        cp.upsert_obj(replaced)
        spy.reset()
        assert cp.fetch_obj(commit.id) == replaced
        assert spy.calls["fetch_typed_objs_if_exist"] == 1
        # Behind the cache's back: the cache keeps serving what it has...
        persist.upsert_obj(dataclasses.replace(commit, message="v3"))
        assert cp.fetch_obj(commit.id) == replaced
        # ...until a write through it, even one that fails, evicts the id.
        too_large = dataclasses.replace(commit, incremental_index=os.urandom(2048))
        with pytest.raises(ObjTooLarge):
            cp.upsert_objs([too_large])
        assert cp.get_immediate(commit.id) is None
        assert cp.fetch_obj(commit.id).message == "v3"  # type: ignore[attr-defined]
        cp.delete_obj(commit.id)
        assert cp.get_immediate(commit.id) is None
        spy.reset()
        with pytest.raises(ObjNotFound):
            cp.fetch_obj(commit.id)
        assert spy.calls["fetch_typed_objs_if_exist"] == 1
        with pytest.raises(ObjNotFound):
            persist.fetch_obj(commit.id)

    def test_delete_with_referenced_evicts(self, persist: Persist) -> None:
        obj = tag_obj("gc")
        cp, _ = cached(persist)
        cp.store_obj(obj)
        assert cp.get_immediate(obj.id) == obj
        assert cp.delete_with_referenced(obj) is False  # the caller's copy has referenced=0
        assert cp.get_immediate(obj.id) is None
        with closing(persist.scan_all_objects()) as scan:
            [scanned] = [o for o in scan if o.id == obj.id]
        assert cp.delete_with_referenced(scanned) is True
        with pytest.raises(ObjNotFound):
            cp.fetch_obj(obj.id)

    def test_conditional_update_caches_the_new_value_and_failure_evicts(self, persist: Persist) -> None:
        v1, v2, v3, v4 = _versions()
        cp, spy = cached(persist)
        assert cp.store_obj(v1) is True
        assert cp.update_conditional(v1, v2) is True
        spy.reset()
        assert cp.fetch_obj(v1.id) == v2
        assert spy.total == 0
        assert persist.update_conditional(v2, v3) is True  # behind the cache's back
        assert cp.fetch_obj(v1.id) == v2
        assert cp.update_conditional(v2, v4) is False
        assert cp.get_immediate(v1.id) is None
        assert cp.fetch_obj(v1.id) == v3
        assert cp.delete_conditional(v2) is False
        assert cp.get_immediate(v1.id) is None
        assert cp.fetch_obj(v1.id) == v3
        assert cp.delete_conditional(v3) is True
        with pytest.raises(ObjNotFound):
            cp.fetch_obj(v1.id)

    def test_negative_caching_only_for_types_that_opt_in(self, persist: Persist) -> None:
        clock = ManualClock()
        cp, spy = cached(persist, clock=clock)
        opted, plain = NegativeCachedTestObj(id=random_obj_id(), text="x"), tag_obj("plain")
        for _ in range(2):
            assert cp.fetch_objs_if_exist([opted.id, plain.id]) == [None, None]
            assert cp.fetch_all_if_exist_as([opted.id], NegativeCachedTestObj) == [None]
            assert cp.fetch_all_if_exist_as([plain.id], TagObj) == [None]
        # Untyped reads always ask; typed reads of the opted-in type once; of a standard type always.
        asked = Counter(t for _, t in spy.args_of("fetch_typed_objs_if_exist"))
        assert asked == Counter({None: 2, NegativeCachedTestObj.TYPE: 1, TagObj.TYPE: 2})
        persist.store_obj(opted)  # behind the cache's back: hidden from typed reads until expiry
        assert cp.fetch_all_if_exist_as([opted.id], NegativeCachedTestObj) == [None]
        with pytest.raises(ObjNotFound):
            cp.fetch_as(opted.id, NegativeCachedTestObj)
        clock.advance(61)
        assert cp.fetch_as(opted.id, NegativeCachedTestObj) == opted

    def test_a_negative_entry_gives_way_to_the_object(self, persist: Persist) -> None:
        cp, spy = cached(persist)
        behind, through, untyped = (NegativeCachedTestObj(id=random_obj_id(), text=t) for t in "abc")
        ids = [behind.id, through.id, untyped.id]
        assert cp.fetch_all_if_exist_as(ids, NegativeCachedTestObj) == [None] * 3
        persist.store_objs([behind, untyped])
        assert cp.store_objs([behind, through]) == [False, True]  # an existing id drops the entry
        assert cp.fetch_obj(untyped.id) == untyped  # untyped reads do not trust a typed entry
        spy.reset()
        assert cp.fetch_all_if_exist_as(ids, NegativeCachedTestObj) == [behind, through, untyped]
        [(sent, _)] = spy.args_of("fetch_typed_objs_if_exist")
        assert sent == [behind.id]

    def test_scans_are_never_cached(self, persist: Persist) -> None:
        cp, spy = cached(persist)
        cp.store_objs(SAMPLES[:5])
        for _ in range(2):
            with closing(cp.scan_all_objects()) as scan:
                assert {o.id for o in scan} == {o.id for o in SAMPLES[:5]}
        assert spy.calls["scan_all_objects"] == 2

    def test_erase_clears_only_this_repository(self, persist_factory: PersistFactory) -> None:
        cache = ObjectCache()
        first, spy1 = cached(persist_factory(), cache)
        second, spy2 = cached(persist_factory(), cache)
        first.store_objs(SAMPLES[:5])
        second.store_objs(SAMPLES[:5])
        first.erase()
        assert [first.get_immediate(o.id) for o in SAMPLES[:5]] == [None] * 5
        spy2.reset()
        assert second.fetch_objs([o.id for o in SAMPLES[:5]]) == SAMPLES[:5]
        assert spy2.total == 0
        assert first.fetch_objs_if_exist([o.id for o in SAMPLES[:5]]) == [None] * 5
        assert spy1.calls["fetch_typed_objs_if_exist"] == 1

    # --- several caches, several writers ----------------------------------------------------------

    def test_two_caches_on_one_repository_see_the_same_data(self, persist_factory: PersistFactory) -> None:
        repo = f"shared-{uuid.uuid4().hex[:8]}"
        a, _ = cached(persist_factory(repo))
        b, _ = cached(persist_factory(repo))
        assert a.store_objs(SAMPLES) == [True] * len(SAMPLES)
        assert b.fetch_objs([o.id for o in SAMPLES]) == SAMPLES
        extra = tag_obj("written through b")
        assert b.store_obj(extra) is True
        assert a.store_obj(extra) is False
        assert a.fetch_obj(extra.id) == extra
        ref = a.add_reference(Reference("refs/heads/main", random_obj_id(), False, 1))
        assert b.fetch_reference(ref.name) == ref
        moved = a.update_reference_pointer(ref, random_obj_id())
        assert b.fetch_reference(ref.name) == moved
        gone = b.mark_reference_as_deleted(moved)
        assert a.fetch_reference(ref.name) == gone
        b.purge_reference(gone)
        assert a.fetch_reference(ref.name) is None

    # --- references ------------------------------------------------------------------------------

    def test_reference_caching_is_off_by_default(self, persist: Persist) -> None:
        cp, spy = cached(persist)
        assert not cp.caches_references
        ref = persist.add_reference(Reference("refs/heads/main", random_obj_id()))
        assert cp.fetch_reference(ref.name) == ref
        moved = persist.update_reference_pointer(ref, random_obj_id())
        assert cp.fetch_reference(ref.name) == moved
        assert cp.fetch_references([ref.name]) == [moved]
        assert spy.calls["fetch_references"] == 3
        assert cp.cache.stats().entries == 0

    def test_for_update_never_serves_a_stale_row(self, persist: Persist) -> None:
        cp, spy = cached(persist, reference_ttl_seconds=HOUR, reference_negative_ttl_seconds=HOUR)
        ref = persist.add_reference(Reference("refs/heads/main", random_obj_id()))
        assert cp.fetch_reference(ref.name) == ref
        moved = persist.update_reference_pointer(ref, random_obj_id())
        assert cp.fetch_reference(ref.name) == ref  # cached: another writer's change is not seen
        spy.reset()
        assert cp.fetch_reference_for_update(ref.name) == moved
        assert cp.fetch_references_for_update([None, ref.name, ref.name]) == [None, moved, moved]
        assert spy.calls["fetch_references_for_update"] == 2
        assert cp.fetch_reference(ref.name) == moved  # refreshed
        persist.purge_reference(persist.mark_reference_as_deleted(moved))
        assert cp.fetch_reference(ref.name) == moved
        assert cp.fetch_reference_for_update(ref.name) is None
        assert cp.fetch_reference(ref.name) is None
        spy.reset()
        assert cp.fetch_references([ref.name]) == [None]  # negatively cached
        assert spy.total == 0

    def test_a_failed_reference_change_evicts_the_stale_row(self, persist: Persist) -> None:
        cp, spy = cached(persist, reference_ttl_seconds=HOUR)
        ref = cp.add_reference(Reference("refs/heads/main", random_obj_id()))
        spy.reset()
        assert cp.fetch_reference(ref.name) == ref
        assert spy.total == 0
        moved = cp.update_reference_pointer(ref, random_obj_id())
        assert cp.fetch_reference(ref.name) == moved
        assert spy.total == 1  # just the update
        behind = persist.update_reference_pointer(moved, random_obj_id())
        stale = cp.fetch_reference(ref.name)
        assert stale == moved
        assert stale is not None
        with pytest.raises(RefConditionFailed) as e:
            cp.update_reference_pointer(stale, random_obj_id())
        assert e.value.reference == behind
        assert cp.fetch_reference(ref.name) == behind
        deleted = cp.mark_reference_as_deleted(behind)
        spy.reset()
        assert cp.fetch_reference(ref.name) == deleted
        assert spy.total == 0
        cp.purge_reference(deleted)
        assert cp.fetch_reference(ref.name) is None
        assert spy.calls["fetch_references_for_update"] == 1

    def test_cached_reference_is_served_until_its_ttl_expires(self, persist: Persist) -> None:
        clock = ManualClock()
        cp, spy = cached(persist, clock=clock, reference_ttl_seconds=10.0, reference_negative_ttl_seconds=5.0)
        name = "refs/heads/ttl"
        assert cp.fetch_reference(name) is None
        ref = persist.add_reference(Reference(name, random_obj_id()))
        clock.advance(4.9)
        assert cp.fetch_reference(name) is None  # negative entry still live
        clock.advance(0.2)
        assert cp.fetch_reference(name) == ref
        moved = persist.update_reference_pointer(ref, random_obj_id())
        clock.advance(9.9)
        assert cp.fetch_reference(name) == ref
        clock.advance(0.2)
        assert cp.fetch_reference(name) == moved
        assert spy.calls["fetch_references_for_update"] == 3
        assert cp.cache.stats().expirations == 2
