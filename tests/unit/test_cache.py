"""The object cache (bounds, admission, LRU, expiry, negative entries, threads) and CachingPersist's
behaviour table, against the real in-memory backend with a counting spy in front of it."""

from __future__ import annotations

import contextlib
import dataclasses
import random
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from backends.inmemory import InMemoryBackendFactory
from conformance.samples import SimpleTestObj, VersionedTestObj, all_samples
from conformance.suites.cache import CountingPersist, ManualClock, NegativeCachedTestObj
from persist_spi import cache_weight
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.cache import (
    DEFAULT_CAPACITY_BYTES,
    CacheConfig,
    CachingPersist,
    ObjectCache,
    configure_shared_object_cache,
    shared_object_cache,
)
from persist_spi.cache_store import ENTRY_OVERHEAD, MISSING_REFERENCE, MissingObj
from persist_spi.cache_weight import MUTABLE, frozen_size
from persist_spi.codec import DEFAULT_CODEC
from persist_spi.config import StoreConfig
from persist_spi.errors import (
    ObjNotFound,
    ObjTooLarge,
    RefAlreadyExists,
    RefConditionFailed,
    RefNotFound,
    UnknownOperationResult,
)
from persist_spi.headers import CommitHeaders
from persist_spi.ids import EMPTY_OBJ_ID, ObjId, random_obj_id
from persist_spi.keys import key
from persist_spi.objs import (
    CommitObj,
    CommitType,
    ContentValueObj,
    IndexObj,
    IndexStripe,
    Obj,
    TagObj,
    index_obj,
    tag_obj,
)
from persist_spi.objtypes import NOT_CACHED, register_obj_type
from persist_spi.persist import Persist
from persist_spi.references import Reference

REPO = "repo"
SAMPLES = all_samples(seed=77)


@register_obj_type(
    "LOCHKIT_TEST_EXPIRING", "lt-expiring", cached_object_expires_at=lambda obj, now: now + 10_000_000
)
@dataclass(frozen=True, slots=True, kw_only=True)
class ExpiringTestObj(Obj):
    """Cached for ten seconds."""

    text: str = ""


@register_obj_type(
    "LOCHKIT_TEST_UNCACHED", "lt-uncached", cached_object_expires_at=lambda obj, now: NOT_CACHED
)
@dataclass(frozen=True, slots=True, kw_only=True)
class UncachedTestObj(Obj):
    """Never cached."""

    text: str = ""


def _index(size: int, seed: int = 0) -> IndexObj:
    return index_obj(random.Random(seed).randbytes(size))


def _serialised_weight(obj: Obj, repo: str = REPO) -> int:
    encoded = DEFAULT_CODEC.encode(obj)
    return ENTRY_OVERHEAD + len(repo) + len(obj.id) + len(encoded.data) + len(encoded.version_token or "")


def _weight(obj: Obj, repo: str = REPO) -> int:
    """What the cache charges: estimated for shareable instances, exact for stored bytes."""
    size = frozen_size(obj)
    return _serialised_weight(obj, repo) if size == MUTABLE else ENTRY_OVERHEAD + len(repo) + size


# --- configuration -------------------------------------------------------------------------------


def test_defaults() -> None:
    config = CacheConfig()
    assert config.capacity_bytes == DEFAULT_CAPACITY_BYTES == 64 * 1024 * 1024
    assert config.overshoot == 0.1
    assert config.admit_limit == int(DEFAULT_CAPACITY_BYTES * 1.1)
    assert not config.caches_references
    assert not ObjectCache().caches_references


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"capacity_bytes": -1}, "must not be negative"),
        ({"overshoot": 1.5}, "between 0 and 1"),
        ({"reference_ttl_seconds": 0}, "must be positive"),
        ({"reference_negative_ttl_seconds": 5.0}, "needs a positive reference TTL"),
        ({"reference_ttl_seconds": 5.0, "reference_negative_ttl_seconds": -1.0}, "must be positive"),
    ],
)
def test_invalid_config_is_rejected(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CacheConfig(**changes)


# --- bounds, admission, LRU ------------------------------------------------------------------------


@pytest.mark.parametrize("obj", SAMPLES, ids=lambda o: type(o).__name__)
def test_entry_weight_is_about_the_serialised_size_plus_overhead(obj: Obj) -> None:
    cache = ObjectCache()
    assert cache.put_obj(REPO, obj)
    weight = cache.stats().weight
    assert weight == _weight(obj)
    assert abs(weight - _serialised_weight(obj)) <= 64


def test_replacing_an_entry_does_not_count_it_twice() -> None:
    cache = ObjectCache()
    obj = _index(1000)
    assert cache.put_obj(REPO, obj)
    assert cache.stats().weight == _weight(obj) > 1000 + ENTRY_OVERHEAD
    assert cache.put_obj(REPO, obj)  # replacing an entry does not count it twice
    assert cache.stats().weight == _weight(obj)
    assert len(cache) == 1


def test_least_recently_used_entries_are_evicted_first() -> None:
    a, b, c, d = (_index(1000, seed) for seed in range(4))
    cache = ObjectCache(CacheConfig(capacity_bytes=3 * _weight(a), overshoot=0.5))
    for obj in (a, b, c):
        assert cache.put_obj(REPO, obj)
    assert cache.get_obj(REPO, a.id) == a  # a is now the most recently used
    assert cache.put_obj(REPO, d)
    assert cache.get_obj(REPO, b.id) is None
    assert [cache.get_obj(REPO, o.id) for o in (a, c, d)] == [a, c, d]
    stats = cache.stats()
    assert (stats.evictions, stats.entries, stats.weight) == (1, 3, 3 * _weight(a))
    assert stats.weight <= stats.capacity


def test_admission_rejects_puts_beyond_the_overshoot() -> None:
    small = [_index(500, seed) for seed in range(10)]
    unit = _weight(small[0])
    cache = ObjectCache(CacheConfig(capacity_bytes=10 * unit, overshoot=0.1))
    for obj in small:
        assert cache.put_obj(REPO, obj)
    assert cache.stats().weight == 10 * unit  # full
    # An entry that would take the weight to capacity * 1.1 or beyond is turned away...
    big = _index(unit + 100, seed=99)
    assert _weight(big) >= cache.config.admit_limit - 10 * unit
    assert not cache.put_obj(REPO, big)
    stats = cache.stats()
    assert (stats.rejections, stats.evictions, stats.entries) == (1, 0, 10)
    assert cache.get_obj(REPO, big.id) is None
    # ...while one that fits under the overshoot is admitted and LRU entries make room.
    fits = _index(200, seed=98)
    assert _weight(fits) < cache.config.admit_limit - 10 * unit
    assert cache.put_obj(REPO, fits)
    assert cache.get_obj(REPO, small[0].id) is None
    assert cache.stats().evictions == 1
    assert cache.stats().weight <= 10 * unit


def test_an_entry_larger_than_the_capacity_is_never_admitted() -> None:
    obj = _index(2000)
    cache = ObjectCache(CacheConfig(capacity_bytes=_weight(obj) - 1, overshoot=1.0))
    assert not cache.put_obj(REPO, obj)
    assert cache.stats().rejections == 1
    assert len(cache) == 0


def test_a_rejected_put_drops_the_previous_entry_of_the_key() -> None:
    v1 = VersionedTestObj(id=random_obj_id(), version_token="1", some_value="small")
    v2 = dataclasses.replace(v1, version_token="2", some_value="x" * 5000)
    cache = ObjectCache(CacheConfig(capacity_bytes=_weight(v1) + 100))
    assert cache.put_obj(REPO, v1)
    assert not cache.put_obj(REPO, v2)
    assert cache.get_obj(REPO, v1.id) is None  # never the outdated version


def test_capacity_zero_caches_nothing() -> None:
    cache = ObjectCache(CacheConfig(capacity_bytes=0))
    assert not cache.put_obj(REPO, tag_obj("t"))
    assert len(cache) == 0


def test_weight_stays_within_capacity_under_random_traffic() -> None:
    rng = random.Random(5)
    objs = [_index(rng.randrange(0, 3000), seed) for seed in range(200)]
    cache = ObjectCache(CacheConfig(capacity_bytes=40_000))
    for _ in range(3000):
        obj = rng.choice(objs)
        if rng.random() < 0.5:
            cache.put_obj(REPO, obj)
        elif rng.random() < 0.9:
            found = cache.get_obj(REPO, obj.id)
            assert found is None or found == obj
        else:
            cache.remove_objs(REPO, [obj.id])
        stats = cache.stats()
        assert stats.weight <= stats.capacity
    assert cache.stats().weight == sum(e.weight for e in cache._entries.values())


# --- keys ----------------------------------------------------------------------------------------


def test_repositories_and_key_spaces_do_not_mix() -> None:
    cache = ObjectCache(CacheConfig(reference_ttl_seconds=60))
    obj = tag_obj("same id")
    cache.put_obj("a", obj)
    assert cache.get_obj("b", obj.id) is None
    tricky = TagObj(id=ObjId(b"r:refs/heads/main"), message="an id that spells a reference key")
    ref = Reference("refs/heads/main", random_obj_id())
    cache.put_obj("a", tricky)
    cache.put_ref("a", ref)
    assert cache.get_obj("a", tricky.id) == tricky
    assert cache.get_ref("a", ref.name) == ref
    assert cache.get_ref("b", ref.name) is None
    cache.clear_repository("a")
    assert len(cache) == 0


def test_clear_repository_keeps_other_repositories() -> None:
    cache = ObjectCache()
    for repo in ("a", "ab", ""):
        cache.put_obj(repo, tag_obj(repo))
    cache.clear_repository("a")
    assert cache.get_obj("a", tag_obj("a").id) is None
    assert cache.get_obj("ab", tag_obj("ab").id) == tag_obj("ab")
    assert cache.get_obj("", tag_obj("").id) == tag_obj("")
    assert cache.stats().weight == _weight(tag_obj("ab"), "ab") + _weight(tag_obj(""), "")


# --- what comes back -----------------------------------------------------------------------------


def test_cached_objects_have_referenced_zero_and_share_no_mutable_state() -> None:
    cache = ObjectCache()
    simple = SimpleTestObj(id=random_obj_id(), flags={"a": "b"}, numbers=(1, 2)).with_referenced(123)
    commit = CommitObj(id=random_obj_id(), seq=1, tail=(EMPTY_OBJ_ID,)).with_referenced(456)
    cache.put_obj(REPO, simple)
    cache.put_obj(REPO, commit)
    first = cache.get_obj(REPO, simple.id)
    assert isinstance(first, SimpleTestObj)
    assert first == simple
    assert first.referenced == 0
    first.flags["a"] = "mutated by a caller"  # type: ignore[index]
    second = cache.get_obj(REPO, simple.id)
    assert isinstance(second, SimpleTestObj)
    assert second.flags == {"a": "b"}
    assert second is not first
    # Standard types hold only immutable values: one decoded instance serves every hit.
    c1, c2 = cache.get_obj(REPO, commit.id), cache.get_obj(REPO, commit.id)
    assert c1 == commit
    assert c1 is c2
    assert isinstance(c1, CommitObj)
    assert c1.referenced == 0


def test_only_deeply_immutable_values_may_be_shared() -> None:
    stripe = IndexStripe(key("a"), key("b"), random_obj_id())
    assert frozen_size((b"ab", "c", 1, 2.0, None, True, CommitType.NORMAL, stripe)) > 0
    assert frozen_size(frozenset({b"x"})) > 0
    assert frozen_size(CommitHeaders({"a": ("b",)})) > 0
    for mutable in ([], {}, bytearray(b"x"), (1, [2]), {1}, object()):
        assert frozen_size(mutable) == MUTABLE


@pytest.mark.parametrize(
    "obj", [o for o in SAMPLES if type(o) in cache_weight._FAST_WEIGHERS], ids=lambda o: type(o).__name__
)
def test_commits_and_values_are_weighed_as_the_generic_walk_weighs_them(obj: Obj) -> None:
    """Commits and content values, stored by every commit, skip the field-by-field walk."""
    walked = dict(cache_weight._FAST_WEIGHERS)
    try:
        cache_weight._FAST_WEIGHERS.clear()
        expected = frozen_size(obj)
    finally:
        cache_weight._FAST_WEIGHERS.update(walked)
    assert frozen_size(obj) == expected


def test_a_commit_with_a_mutable_field_is_still_caught() -> None:
    tail = [EMPTY_OBJ_ID]
    commit = CommitObj(id=random_obj_id(), seq=1, tail=tail)  # type: ignore[arg-type]
    assert frozen_size(commit) == MUTABLE
    value = ContentValueObj(id=random_obj_id(), content_id="c", payload=1, data=bytearray(b"x"))  # type: ignore[arg-type]
    assert frozen_size(value) == MUTABLE


def test_an_object_holding_a_list_is_copied_not_shared() -> None:
    cache = ObjectCache()
    tail = [EMPTY_OBJ_ID]
    commit = CommitObj(id=random_obj_id(), seq=1, tail=tail)  # type: ignore[arg-type]
    assert cache.put_obj(REPO, commit)
    tail.append(random_obj_id())  # the caller changes its list afterwards
    cached = cache.get_obj(REPO, commit.id)
    assert isinstance(cached, CommitObj)
    assert cached.tail == (EMPTY_OBJ_ID,)
    assert cache.get_obj(REPO, commit.id) is cached  # decoded into tuples: shareable from now on


@pytest.mark.parametrize("obj", SAMPLES, ids=lambda o: type(o).__name__)
def test_every_sample_round_trips_through_the_cache(obj: Obj) -> None:
    cache = ObjectCache()
    assert cache.put_obj(REPO, obj)
    assert cache.get_obj(REPO, obj.id) == obj
    assert cache.get_obj(REPO, obj.id) == obj


# --- expiry and negative entries -----------------------------------------------------------------


def test_entries_expire_by_their_types_policy() -> None:
    clock = ManualClock()
    cache = ObjectCache(CacheConfig(clock=clock))
    expiring, forever = ExpiringTestObj(id=random_obj_id(), text="x"), tag_obj("forever")
    assert cache.put_obj(REPO, expiring)
    assert cache.put_obj(REPO, forever)
    clock.advance(9.9)
    assert cache.get_obj(REPO, expiring.id) == expiring
    clock.advance(0.2)
    assert cache.get_obj(REPO, expiring.id) is None
    clock.advance(10**6)
    assert cache.get_obj(REPO, forever.id) == forever
    stats = cache.stats()
    assert (stats.expirations, stats.entries, stats.weight) == (1, 1, _weight(forever))


def test_a_type_that_is_not_cached_never_enters() -> None:
    cache = ObjectCache()
    obj = UncachedTestObj(id=random_obj_id(), text="x")
    assert not cache.put_obj(REPO, obj)
    assert cache.get_obj(REPO, obj.id) is None
    assert cache.stats().puts == 0


def test_negative_entries_only_for_types_that_opt_in() -> None:
    clock = ManualClock()
    cache = ObjectCache(CacheConfig(clock=clock))
    opted, standard = random_obj_id(), random_obj_id()
    assert cache.put_obj_negative(REPO, opted, NegativeCachedTestObj.TYPE)
    assert not cache.put_obj_negative(REPO, standard, CommitObj.TYPE)
    assert cache.get_obj(REPO, opted) == MissingObj(NegativeCachedTestObj.TYPE.short_name)
    assert cache.get_obj(REPO, standard) is None
    clock.advance(60)
    assert cache.get_obj(REPO, opted) is None


def test_reference_caching_is_off_by_default() -> None:
    cache = ObjectCache()
    ref = Reference("refs/heads/main", random_obj_id())
    assert not cache.put_ref(REPO, ref)
    assert not cache.put_ref_negative(REPO, ref.name)
    assert cache.get_ref(REPO, ref.name) is None
    assert cache.stats() == ObjectCache().stats()


def test_reference_entries_live_for_their_ttls() -> None:
    clock = ManualClock()
    cache = ObjectCache(CacheConfig(clock=clock, reference_ttl_seconds=10, reference_negative_ttl_seconds=2))
    ref = Reference("refs/heads/main", random_obj_id())
    cache.put_ref(REPO, ref)
    cache.put_ref_negative(REPO, "refs/heads/none")
    clock.advance(1.9)
    assert cache.get_ref(REPO, ref.name) == ref
    assert cache.get_ref(REPO, "refs/heads/none") is MISSING_REFERENCE
    clock.advance(0.2)
    assert cache.get_ref(REPO, "refs/heads/none") is None
    clock.advance(8)
    assert cache.get_ref(REPO, ref.name) is None
    only_positive = ObjectCache(CacheConfig(reference_ttl_seconds=10))
    only_positive.put_ref(REPO, ref)
    assert not only_positive.put_ref_negative(REPO, ref.name)  # without a negative TTL: evicts
    assert only_positive.get_ref(REPO, ref.name) is None


# --- stale fills ---------------------------------------------------------------------------------


def test_a_fill_that_raced_a_write_is_dropped() -> None:
    cache = ObjectCache(CacheConfig(reference_ttl_seconds=60))
    obj = tag_obj("raced")
    [token] = cache.obj_tokens(REPO, [obj.id])
    cache.remove_objs(REPO, [obj.id])  # a writer deleted it after the reader asked the database
    assert not cache.put_obj(REPO, obj, token, write=False)
    assert cache.get_obj(REPO, obj.id) is None
    [fresh] = cache.obj_tokens(REPO, [obj.id])
    assert cache.put_obj(REPO, obj, fresh, write=False)
    # Two writers: the one whose put arrives with an outdated token evicts instead of putting.
    old, new = Reference("refs/heads/x", random_obj_id()), Reference("refs/heads/x", random_obj_id())
    [t_old] = cache.ref_tokens(REPO, [old.name])
    [t_new] = cache.ref_tokens(REPO, [new.name])
    assert cache.put_ref(REPO, new, t_new)
    assert not cache.put_ref(REPO, old, t_old)
    assert cache.get_ref(REPO, old.name) is None
    assert cache.stats().stale_fills == 2


# --- threads -------------------------------------------------------------------------------------


def test_concurrent_puts_and_gets_keep_the_cache_consistent() -> None:
    objs = [_index(random.Random(i).randrange(10, 2000), i) for i in range(300)]
    cache = ObjectCache(CacheConfig(capacity_bytes=100_000))
    gets = Counter[int]()
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        try:
            barrier.wait(timeout=30)
            for _ in range(3000):
                obj = rng.choice(objs)
                roll = rng.random()
                if roll < 0.4:
                    cache.put_obj(rng.choice(["a", "b"]), obj)
                elif roll < 0.95:
                    found = cache.get_obj(rng.choice(["a", "b"]), obj.id)
                    gets[seed] += 1
                    assert found is None or found == obj
                else:
                    cache.remove_objs("a", [obj.id])
        except BaseException as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    stats = cache.stats()
    assert stats.hits + stats.misses == sum(gets.values())
    assert stats.weight == sum(e.weight for e in cache._entries.values()) <= stats.capacity
    assert stats.hits > 0
    assert stats.evictions > 0


# --- CachingPersist against the in-memory backend ---------------------------------------------------


class FaultyPersist(CountingPersist):
    """The spy, plus an injected failure *after* the real call (the write happened, the caller
    saw an error): what a timeout with unknown outcome looks like."""

    def __init__(self, delegate: Persist) -> None:
        super().__init__(delegate)
        self.failing: set[str] = set()
        #: One-shot actions run right after the real call of that name returns, before the caching
        #: layer sees the result: how a test interleaves another writer deterministically.
        self.interleave: dict[str, Callable[[], object]] = {}

    def _count(self, name: str, *args: Any) -> None:
        super()._count(name, *args)
        self._current = name

    def _after(self) -> None:
        action = self.interleave.pop(self._current, None)
        if action is not None:
            action()
        if self._current in self.failing:
            raise UnknownOperationResult(f"injected failure after {self._current}")

    def fetch_typed_objs_if_exist(self, ids: Any, obj_type: Any) -> list[Obj | None]:
        result = super().fetch_typed_objs_if_exist(ids, obj_type)
        self._after()
        return result

    def fetch_references_for_update(self, names: Any) -> list[Reference | None]:
        result = super().fetch_references_for_update(names)
        self._after()
        return result

    def upsert_objs(self, objs: Any) -> None:
        super().upsert_objs(objs)
        self._after()

    def delete_objs(self, ids: Any) -> None:
        super().delete_objs(ids)
        self._after()

    def delete_conditional(self, obj: Obj) -> bool:
        result = super().delete_conditional(obj)
        self._after()
        return result

    def update_conditional(self, expected: Obj, new: Obj) -> bool:
        result = super().update_conditional(expected, new)
        self._after()
        return result

    def update_reference_pointer(self, ref: Reference, new_pointer: ObjId) -> Reference:
        result = super().update_reference_pointer(ref, new_pointer)
        self._after()
        return result

    def erase(self) -> None:
        super().erase()
        self._after()


@dataclass
class Rig:
    backend: AdapterPersist
    spy: FaultyPersist
    cp: CachingPersist

    @property
    def cache(self) -> ObjectCache:
        return self.cp.cache


def _rig(repo: str = REPO, cache: ObjectCache | None = None, **config: Any) -> Rig:
    adapter = InMemoryBackendFactory().create()
    backend = AdapterPersist(adapter, StoreConfig(repository_id=repo, max_incremental_index_size=1024))
    spy = FaultyPersist(backend)
    return Rig(
        backend, spy, CachingPersist(spy, cache if cache is not None else ObjectCache(CacheConfig(**config)))
    )


@pytest.fixture
def rig() -> Rig:
    return _rig()


@pytest.fixture
def ref_rig() -> Rig:
    return _rig(reference_ttl_seconds=3600, reference_negative_ttl_seconds=3600)


def test_properties_delegate(rig: Rig) -> None:
    cp = rig.cp
    assert cp.is_caching
    assert not rig.backend.is_caching
    assert cp.config is rig.backend.config
    assert cp.repository_id == REPO
    assert cp.hard_object_size_limit == rig.backend.hard_object_size_limit
    assert cp.effective_incremental_index_size_limit == 1024
    assert cp.effective_index_segment_size_limit == rig.backend.effective_index_segment_size_limit
    assert cp.delegate is rig.spy


def test_the_process_wide_cache_is_shared_by_default() -> None:
    a, b = _rig(), _rig()
    shared = shared_object_cache()
    assert CachingPersist(a.backend).cache is shared is CachingPersist(b.backend).cache
    replaced = configure_shared_object_cache(CacheConfig(capacity_bytes=1024 * 1024))
    try:
        assert CachingPersist(a.backend).cache is replaced is shared_object_cache()
        assert replaced.config.capacity_bytes == 1024 * 1024
    finally:
        configure_shared_object_cache(CacheConfig())


def test_fetch_miss_reaches_the_backend_once_then_hits(rig: Rig) -> None:
    obj = SAMPLES[0]
    rig.backend.store_obj(obj)
    assert rig.cp.get_immediate(obj.id) is None
    assert rig.cp.fetch_obj(obj.id) == obj
    assert rig.cp.fetch_obj(obj.id) == obj
    assert rig.cp.get_immediate(obj.id) == obj
    assert rig.spy.calls == Counter({"fetch_typed_objs_if_exist": 1})
    with pytest.raises(ObjNotFound):
        rig.cp.fetch_obj(random_obj_id())
    assert rig.spy.calls["fetch_typed_objs_if_exist"] == 2


def test_bulk_fetch_sends_only_the_misses_in_one_call(rig: Rig) -> None:
    rig.backend.store_objs(SAMPLES)
    rig.cp.fetch_objs([o.id for o in SAMPLES[:10]])
    rig.spy.reset()
    ids = [o.id for o in SAMPLES] + [SAMPLES[12].id]  # a duplicate id is fetched once
    assert rig.cp.fetch_objs(ids) == [*SAMPLES, SAMPLES[12]]
    [(sent, obj_type)] = rig.spy.args_of("fetch_typed_objs_if_exist")
    assert sent == [o.id for o in SAMPLES[10:]]
    assert obj_type is None


def test_typed_hit_with_another_type_misses_without_the_backend(rig: Rig) -> None:
    tag = tag_obj("t")
    rig.cp.store_obj(tag)
    rig.spy.reset()
    with pytest.raises(ObjNotFound):
        rig.cp.fetch_typed_obj(tag.id, CommitObj.TYPE)
    assert rig.cp.fetch_typed_obj(tag.id, TagObj.TYPE) == tag
    assert rig.spy.total == 0


def test_fetch_obj_type_uses_a_hit_and_does_not_cache_a_miss(rig: Rig) -> None:
    cached, uncached = tag_obj("a"), tag_obj("b")
    rig.cp.store_obj(cached)
    rig.backend.store_obj(uncached)
    rig.spy.reset()
    assert rig.cp.fetch_obj_type(cached.id) == TagObj.TYPE
    assert rig.spy.total == 0
    assert rig.cp.fetch_obj_type(uncached.id) == TagObj.TYPE
    assert rig.spy.calls == Counter({"fetch_obj_type": 1})
    assert rig.cp.get_immediate(uncached.id) is None
    with pytest.raises(ObjNotFound):
        rig.cp.fetch_obj_type(EMPTY_OBJ_ID)


def test_store_caches_only_newly_stored_objects(rig: Rig) -> None:
    old, new = tag_obj("old"), tag_obj("new")
    rig.backend.store_obj(old)
    assert rig.cp.store_objs([old, new, None, new]) == [False, True, False, False]
    assert rig.cp.get_immediate(old.id) is None
    assert rig.cp.get_immediate(new.id) == new
    assert rig.cache.stats().puts == 1


def test_a_failed_store_caches_nothing(rig: Rig) -> None:
    small, big = (
        tag_obj("small"),
        CommitObj(id=random_obj_id(), seq=1, tail=(), incremental_index=b"x" * 2000),
    )
    with pytest.raises(ObjTooLarge):
        rig.cp.store_objs([small, big])
    assert len(rig.cache) == 0


@pytest.mark.parametrize("method", ["upsert_objs", "delete_objs"])
def test_upsert_and_delete_evict_even_when_they_fail(rig: Rig, method: str) -> None:
    obj = tag_obj("x")
    rig.cp.store_obj(obj)
    rig.spy.failing.add(method)
    write: Callable[[], object] = (
        (lambda: rig.cp.upsert_objs([obj, None]))
        if method == "upsert_objs"
        else (lambda: rig.cp.delete_objs([obj.id, None]))
    )
    with pytest.raises(UnknownOperationResult):
        write()
    assert rig.cp.get_immediate(obj.id) is None
    rig.spy.failing.clear()
    rig.cp.store_obj(obj)
    rig.cp.upsert_obj(obj)
    assert rig.cp.get_immediate(obj.id) is None
    rig.cp.fetch_obj(obj.id)
    rig.cp.delete_obj(obj.id)
    assert rig.cp.get_immediate(obj.id) is None


def test_delete_with_referenced_always_evicts(rig: Rig) -> None:
    obj = tag_obj("gc")
    rig.cp.store_obj(obj)
    assert rig.cp.delete_with_referenced(obj) is False
    assert rig.cp.get_immediate(obj.id) is None
    stored = rig.backend.fetch_obj(obj.id)
    rig.cp.fetch_obj(obj.id)
    assert rig.cp.delete_with_referenced(stored) is True
    assert rig.cp.get_immediate(obj.id) is None


def test_conditional_update_caches_on_success_and_evicts_otherwise(rig: Rig) -> None:
    v1 = VersionedTestObj(id=random_obj_id(), version_token="1", some_value="one")
    v2, v3 = (dataclasses.replace(v1, version_token=t, some_value=t) for t in ("2", "3"))
    rig.cp.store_obj(v1)
    assert rig.cp.update_conditional(v1, v2) is True
    assert rig.cp.get_immediate(v1.id) == v2
    assert rig.cp.update_conditional(v1, v3) is False
    assert rig.cp.get_immediate(v1.id) is None
    rig.cp.fetch_obj(v1.id)
    with pytest.raises(ValueError, match="version token"):
        rig.cp.update_conditional(v2, v2)
    assert rig.cp.get_immediate(v1.id) is None
    rig.cp.fetch_obj(v1.id)
    rig.spy.failing.add("update_conditional")
    with pytest.raises(UnknownOperationResult):
        rig.cp.update_conditional(v2, v3)
    assert rig.cp.get_immediate(v1.id) is None
    assert rig.cp.fetch_obj(v1.id) == v3


def test_conditional_delete_always_evicts(rig: Rig) -> None:
    v1 = VersionedTestObj(id=random_obj_id(), version_token="1")
    rig.cp.store_obj(v1)
    assert rig.cp.delete_conditional(dataclasses.replace(v1, version_token="0")) is False
    assert rig.cp.get_immediate(v1.id) is None
    rig.cp.fetch_obj(v1.id)
    rig.spy.failing.add("delete_conditional")
    with pytest.raises(UnknownOperationResult):
        rig.cp.delete_conditional(v1)
    assert rig.cp.get_immediate(v1.id) is None


def test_erase_clears_this_repository_even_when_it_fails() -> None:
    cache = ObjectCache(CacheConfig(reference_ttl_seconds=60))
    a, b = _rig("a", cache), _rig("b", cache)
    for r in (a, b):
        r.cp.store_obj(tag_obj("t"))
        r.cp.add_reference(Reference("refs/heads/main", random_obj_id()))
    a.spy.failing.add("erase")
    with pytest.raises(UnknownOperationResult):
        a.cp.erase()
    assert a.cp.get_immediate(tag_obj("t").id) is None
    assert cache.get_ref("a", "refs/heads/main") is None
    assert b.cp.get_immediate(tag_obj("t").id) == tag_obj("t")
    assert cache.get_ref("b", "refs/heads/main") is not None


def test_scans_always_reach_the_backend(rig: Rig) -> None:
    rig.cp.store_objs(SAMPLES[:3])
    assert len(list(rig.cp.scan_all_objects())) == 3
    assert len(list(rig.cp.scan_all_objects([TagObj.TYPE]))) == len(
        [o for o in SAMPLES[:3] if isinstance(o, TagObj)]
    )
    assert rig.spy.calls["scan_all_objects"] == 2


def test_negative_entries_answer_typed_reads_of_their_type_only(rig: Rig) -> None:
    obj = NegativeCachedTestObj(id=random_obj_id(), text="n")
    assert rig.cp.fetch_all_if_exist_as([obj.id], NegativeCachedTestObj) == [None]
    assert rig.cp.fetch_all_if_exist_as([obj.id], NegativeCachedTestObj) == [None]
    assert rig.cp.get_immediate(obj.id) is None
    assert rig.spy.calls["fetch_typed_objs_if_exist"] == 1
    with pytest.raises(ObjNotFound):
        rig.cp.fetch_obj(obj.id)  # untyped: asks the backend
    assert rig.spy.calls["fetch_typed_objs_if_exist"] == 2
    assert rig.cp.fetch_all_if_exist_as([obj.id], NegativeCachedTestObj) == [None]
    assert rig.spy.calls["fetch_typed_objs_if_exist"] == 2  # the untyped miss kept the entry
    assert rig.cp.store_obj(obj) is True
    assert rig.cp.fetch_as(obj.id, NegativeCachedTestObj) == obj
    assert rig.spy.calls["fetch_typed_objs_if_exist"] == 2


# --- references through CachingPersist -------------------------------------------------------------


def test_references_are_not_cached_by_default(rig: Rig) -> None:
    ref = rig.cp.add_reference(Reference("refs/heads/main", random_obj_id()))
    rig.cp.fetch_reference(ref.name)
    rig.cp.fetch_reference(ref.name)
    rig.cp.fetch_reference_for_update(ref.name)
    assert rig.spy.calls["fetch_references"] == 2
    assert rig.spy.calls["fetch_references_for_update"] == 1
    assert len(rig.cache) == 0


def test_reference_writes_cache_the_returned_row(ref_rig: Rig) -> None:
    cp, spy = ref_rig.cp, ref_rig.spy
    ref = cp.add_reference(Reference("refs/heads/main", random_obj_id()))
    moved = cp.update_reference_pointer(ref, random_obj_id())
    spy.reset()
    fetched = cp.fetch_reference(ref.name)
    assert fetched == moved
    assert fetched is not None
    assert fetched.previous_pointers == moved.previous_pointers
    deleted = cp.mark_reference_as_deleted(moved)
    assert cp.fetch_references([ref.name, None, ref.name]) == [deleted, None, deleted]
    assert spy.calls == Counter({"mark_reference_as_deleted": 1})
    cp.purge_reference(deleted)
    assert cp.fetch_reference(ref.name) is None
    assert spy.calls["fetch_references_for_update"] == 1
    assert cp.fetch_reference(ref.name) is None  # negatively cached now
    assert spy.calls["fetch_references_for_update"] == 1


def test_reference_failures_evict(ref_rig: Rig) -> None:
    cp, backend, cache = ref_rig.cp, ref_rig.backend, ref_rig.cache
    ref = cp.add_reference(Reference("refs/heads/main", random_obj_id()))
    with pytest.raises(RefAlreadyExists):
        cp.add_reference(ref)
    assert cache.get_ref(REPO, ref.name) is None
    cp.fetch_reference(ref.name)
    behind = backend.update_reference_pointer(ref, random_obj_id())
    with pytest.raises(RefConditionFailed):
        cp.mark_reference_as_deleted(ref)
    assert cache.get_ref(REPO, ref.name) is None
    assert cp.fetch_reference(ref.name) == behind
    ref_rig.spy.failing.add("update_reference_pointer")
    with pytest.raises(UnknownOperationResult):
        cp.update_reference_pointer(behind, random_obj_id())
    assert cache.get_ref(REPO, ref.name) is None
    ref_rig.spy.failing.clear()
    current = cp.fetch_reference(ref.name)
    assert current is not None
    with pytest.raises(RefConditionFailed):
        cp.purge_reference(current)  # not marked deleted
    assert cache.get_ref(REPO, ref.name) is None
    with pytest.raises(RefNotFound):
        cp.update_reference_pointer(Reference("refs/heads/ghost", random_obj_id()), random_obj_id())
    assert cache.get_ref(REPO, "refs/heads/ghost") is None


def test_for_update_reads_the_backend_and_refreshes(ref_rig: Rig) -> None:
    cp, backend, spy = ref_rig.cp, ref_rig.backend, ref_rig.spy
    ref = backend.add_reference(Reference("refs/heads/main", random_obj_id()))
    assert cp.fetch_reference(ref.name) == ref
    moved = backend.update_reference_pointer(ref, random_obj_id())
    assert cp.fetch_reference(ref.name) == ref
    spy.reset()
    assert cp.fetch_references_for_update([ref.name, "refs/heads/none", None]) == [moved, None, None]
    assert spy.calls == Counter({"fetch_references_for_update": 1})
    assert cp.fetch_references([ref.name, "refs/heads/none"]) == [moved, None]
    assert spy.total == 1


def test_racing_writers_and_readers_leave_no_stale_reference_row() -> None:
    r = _rig(reference_ttl_seconds=3600, reference_negative_ttl_seconds=3600)
    name = "refs/heads/contended"
    r.cp.add_reference(Reference(name, random_obj_id()))
    stop = threading.Event()

    def writer() -> None:
        for _ in range(200):
            current = (
                r.cp.fetch_reference(name) if random.random() < 0.5 else r.cp.fetch_reference_for_update(name)
            )
            assert current is not None
            with contextlib.suppress(RefConditionFailed):
                r.cp.update_reference_pointer(current, random_obj_id())

    def reader() -> None:
        while not stop.is_set():
            r.cp.fetch_reference(name)

    readers = [threading.Thread(target=reader) for _ in range(3)]
    writers = [threading.Thread(target=writer) for _ in range(5)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join()
    stop.set()
    for t in readers:
        t.join()
    assert r.cp.fetch_reference(name) == r.backend.fetch_reference(name)


def test_racing_conditional_updates_leave_no_stale_object() -> None:
    r = _rig()
    obj_id = random_obj_id()
    versions = [VersionedTestObj(id=obj_id, version_token=str(i), some_value=str(i)) for i in range(6)]
    r.cp.store_obj(versions[0])

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(300):
            current = r.cp.fetch_obj(obj_id)
            new = rng.choice(
                [
                    v
                    for v in versions
                    if v != current and v.version_token != getattr(current, "version_token", None)
                ]
            )
            r.cp.update_conditional(current, new)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert r.cp.fetch_obj(obj_id) == r.backend.fetch_obj(obj_id)


# --- deterministic interleavings: what the fill tokens are for --------------------------------------


def test_a_reader_never_fills_a_row_a_writer_replaced_meanwhile(ref_rig: Rig) -> None:
    cp, spy = ref_rig.cp, ref_rig.spy
    ref = cp.add_reference(Reference("refs/heads/main", random_obj_id()))
    cp.cache.remove_ref(REPO, ref.name)
    moved: list[Reference] = []
    # The reader has read ``ref`` from the database; before it fills the cache, a writer moves it.
    spy.interleave["fetch_references_for_update"] = lambda: moved.append(
        cp.update_reference_pointer(ref, random_obj_id())
    )
    assert cp.fetch_reference(ref.name) == ref  # what the database said when the reader asked
    assert cp.fetch_reference(ref.name) == moved[0]  # the reader's fill did not win


def test_a_slow_writer_never_overwrites_a_newer_row(ref_rig: Rig) -> None:
    cp, spy, backend = ref_rig.cp, ref_rig.spy, ref_rig.backend
    ref = cp.add_reference(Reference("refs/heads/main", random_obj_id()))
    later: list[Reference] = []

    def second_writer() -> None:
        current = backend.fetch_reference(ref.name)
        assert current is not None
        later.append(cp.update_reference_pointer(current, random_obj_id()))

    # Writer one has moved the row in the database; writer two moves it again before writer one
    # gets to cache its (now outdated) result.
    spy.interleave["update_reference_pointer"] = second_writer
    cp.update_reference_pointer(ref, random_obj_id())
    assert cp.fetch_reference(ref.name) == later[0] == backend.fetch_reference(ref.name)


def test_an_object_read_never_fills_a_version_replaced_meanwhile(rig: Rig) -> None:
    v1 = VersionedTestObj(id=random_obj_id(), version_token="1", some_value="one")
    v2 = dataclasses.replace(v1, version_token="2", some_value="two")
    rig.backend.store_obj(v1)
    rig.spy.interleave["fetch_typed_objs_if_exist"] = lambda: rig.cp.update_conditional(v1, v2)
    assert rig.cp.fetch_obj(v1.id) == v1
    assert rig.cp.fetch_obj(v1.id) == v2


def test_a_read_never_fills_an_object_deleted_meanwhile(rig: Rig) -> None:
    obj = tag_obj("deleted while read")
    rig.backend.store_obj(obj)
    rig.spy.interleave["fetch_typed_objs_if_exist"] = lambda: rig.cp.delete_obj(obj.id)
    assert rig.cp.fetch_obj(obj.id) == obj
    assert rig.cp.get_immediate(obj.id) is None
    with pytest.raises(ObjNotFound):
        rig.cp.fetch_obj(obj.id)


def _sharing_a_stripe(repo: str, count: int) -> list[SimpleTestObj]:
    """``count`` objects whose cache keys fall into one stripe (found by drawing ids)."""
    from persist_spi.cache_store import _STRIPE_MASK

    by_stripe: dict[int, list[SimpleTestObj]] = {}
    while True:
        obj = SimpleTestObj(id=random_obj_id(), text="x")
        group = by_stripe.setdefault(hash((repo, obj.id)) & _STRIPE_MASK, [])
        group.append(obj)
        if len(group) == count:
            return group


def test_objects_of_one_write_that_share_a_stripe_are_all_cached(rig: Rig) -> None:
    """Each put after a write moves its stripe on; the batch's own moves must not make its later
    objects look stale (a 10-put commit lost the caching of a value about once in 20 commits)."""
    objs = _sharing_a_stripe(REPO, 3)
    assert rig.cp.store_objs(objs) == [True] * 3
    assert [rig.cp.get_immediate(o.id) for o in objs] == objs


def test_a_concurrent_write_during_a_batch_still_makes_its_fill_stale(rig: Rig) -> None:
    objs = _sharing_a_stripe(REPO, 2)
    cache = rig.cache
    tokens = cache.obj_tokens(REPO, [o.id for o in objs])
    rig.backend.store_objs(objs)
    cache.remove_objs(REPO, [objs[0].id])  # another writer touched the stripe meanwhile
    cache.after_write(REPO, [(o, True, t) for o, t in zip(objs, tokens, strict=True)])
    assert [cache.get_obj(REPO, o.id) for o in objs] == [None, None]
