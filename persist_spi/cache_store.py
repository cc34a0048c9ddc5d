"""The object cache itself: a byte-bounded, least-recently-used map shared by every repository.

Keys are ``(repository id, ObjId)`` for objects and ``(repository id, "r:" + name)`` for reference
rows; a ``str`` never equals a ``bytes``, so the two key spaces cannot collide. Each entry weighs
about its serialised size plus a fixed bookkeeping overhead, and carries its own expiry deadline.

What an entry holds. Objects are frozen dataclasses. One whose every value is immutable (all
standard types: strings, bytes, ints, tuples, :class:`~persist_spi.headers.CommitHeaders`) is kept
as an instance with ``referenced = 0`` and that instance serves every hit: nobody can change it, so
sharing it is safe and no hit pays for decoding. Any other object (a custom type or a generic
object holding a dict or a list) is kept as the codec's bytes and decoded afresh on every hit, so
callers never share mutable state. Entries are weighed by their serialised size either way
(estimated for instances, see :mod:`persist_spi.cache_weight`).

Stale fills. A reader that misses asks the database and then fills the cache; a writer may change
the same key in between. Every key hashes to one of a fixed set of stripes whose counter moves on
every write-side change (put after a write, eviction after a write, clear). Callers take a *token*
(the stripe counter) before calling the database and hand it back with the fill: a read-side fill
is dropped when the counter moved, and a write-side put is turned into an eviction, because two
writers' puts may arrive in the opposite order to their database writes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Final

from persist_spi.cache_config import CacheConfig
from persist_spi.cache_weight import MUTABLE, frozen_size
from persist_spi.codec import DEFAULT_CODEC, ObjCodec
from persist_spi.ids import ObjId
from persist_spi.objs import Obj
from persist_spi.objtypes import CACHE_UNLIMITED, NOT_CACHED, ObjType
from persist_spi.references import Reference

#: Bytes charged per entry on top of its payload: the key tuple, the entry record, the map slot and
#: the object headers of the id and the byte string (about 250 bytes measured on CPython 3.11).
ENTRY_OVERHEAD: Final = 320
#: Bytes charged per reference row besides its name: pointer, flags, times, extended info.
REFERENCE_BASE_WEIGHT: Final = 96
#: Bytes charged per entry of a reference's previous-pointer history.
PREVIOUS_POINTER_WEIGHT: Final = 48

_STRIPES: Final = 1024
_STRIPE_MASK: Final = _STRIPES - 1
_REF_PREFIX: Final = "r:"

_Key = tuple[str, bytes | str]


@dataclass(frozen=True, slots=True)
class MissingObj:
    """A negative-cache hit: no object of the type with this short name exists under the id."""

    type_short_name: str


class _MissingReference:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING_REFERENCE"


#: A negative-cache hit for a reference name: the row does not exist.
MISSING_REFERENCE: Final = _MissingReference()


@dataclass(frozen=True, slots=True)
class CacheStats:
    """A snapshot of the counters, for benchmarks and monitoring."""

    hits: int
    misses: int
    puts: int
    rejections: int
    evictions: int
    expirations: int
    stale_fills: int
    entries: int
    weight: int
    capacity: int

    @property
    def hit_ratio(self) -> float:
        lookups = self.hits + self.misses
        return self.hits / lookups if lookups else 0.0


class _Entry:
    __slots__ = ("data", "expires_at", "missing", "type_short", "value", "version_token", "weight")

    def __init__(
        self,
        weight: int,
        expires_at: int,
        *,
        data: bytes | None = None,
        type_short: str = "",
        version_token: str | None = None,
        value: Obj | Reference | None = None,
        missing: bool = False,
    ) -> None:
        self.weight = weight
        #: Absolute deadline in µs, or CACHE_UNLIMITED.
        self.expires_at = expires_at
        self.data = data
        self.type_short = type_short
        self.version_token = version_token
        self.value = value
        self.missing = missing


class ObjectCache:
    """A thread-safe, byte-bounded LRU cache of objects and reference rows for many repositories.

    Admission: a put is rejected (and counted) when the current weight plus the entry's weight
    reaches ``capacity * (1 + overshoot)``, or when the entry alone is larger than the capacity.
    Otherwise the entry goes in and least-recently-used entries are evicted until the weight is
    within the capacity again. A rejected put also drops the key's previous entry.
    """

    def __init__(self, config: CacheConfig | None = None, *, codec: ObjCodec = DEFAULT_CODEC) -> None:
        self._config = config if config is not None else CacheConfig()
        self._codec = codec
        self._clock = self._config.clock
        self._capacity = self._config.capacity_bytes
        self._admit = self._config.admit_limit
        self._ref_ttl = self._config.reference_ttl_micros
        self._ref_negative_ttl = self._config.reference_negative_ttl_micros
        self._lock = threading.Lock()
        self._entries: OrderedDict[_Key, _Entry] = OrderedDict()
        self._weight = 0
        self._stripes = [0] * _STRIPES
        self._hits = self._misses = self._puts = self._rejections = 0
        self._evictions = self._expirations = self._stale_fills = 0

    @property
    def config(self) -> CacheConfig:
        return self._config

    @property
    def caches_references(self) -> bool:
        return self._config.caches_references

    def __len__(self) -> int:
        return len(self._entries)

    def __bool__(self) -> bool:
        return True  # an empty cache is still a cache (``cache or default`` must not replace it)

    def __repr__(self) -> str:
        return f"ObjectCache(entries={len(self._entries)}, weight={self._weight}, capacity={self._capacity})"

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(
                hits=self._hits,
                misses=self._misses,
                puts=self._puts,
                rejections=self._rejections,
                evictions=self._evictions,
                expirations=self._expirations,
                stale_fills=self._stale_fills,
                entries=len(self._entries),
                weight=self._weight,
                capacity=self._capacity,
            )

    def reset_stats(self) -> None:
        with self._lock:
            self._hits = self._misses = self._puts = self._rejections = 0
            self._evictions = self._expirations = self._stale_fills = 0

    # --- objects ---------------------------------------------------------------------------------

    def obj_tokens(self, repo: str, ids: Sequence[ObjId]) -> list[int]:
        """Tokens to take before asking the database about ``ids`` (see the module docstring)."""
        with self._lock:
            return [self._stripes[hash((repo, i)) & _STRIPE_MASK] for i in ids]

    def get_obj(self, repo: str, obj_id: ObjId) -> Obj | MissingObj | None:
        """The cached object (``referenced == 0``), a :class:`MissingObj`, or None on a miss."""
        key: _Key = (repo, obj_id)
        with self._lock:
            entry = self._lookup(key)
            if entry is None:
                return None
            if entry.missing:
                return MissingObj(entry.type_short)
            value = entry.value
            if isinstance(value, Obj):
                return value
            data = entry.data
            type_short, version_token = entry.type_short, entry.version_token
        assert data is not None
        obj = self._codec.decode(obj_id, type_short, data, 0, version_token)
        if frozen_size(obj) != MUTABLE:  # e.g. stored with a list where the type says tuple
            with self._lock:
                if self._entries.get(key) is entry:
                    entry.value = obj
                    entry.data = None  # the instance now stands in for the bytes
        return obj

    def put_obj(self, repo: str, obj: Obj, token: int | None = None, *, write: bool = True) -> bool:
        """Cache ``obj`` under the type's expiry policy; True if it was admitted.

        ``write=True`` (after a database write): an expired token, a "not cached" policy or an
        object the codec cannot encode evict the key instead. ``write=False`` (filling after a
        read): the fill is simply dropped in those cases.
        """
        key: _Key = (repo, obj.id)
        now = self._clock.micros()
        expires_at = obj.obj_type.cached_object_expires_at(obj, now)
        if expires_at == NOT_CACHED or (expires_at != CACHE_UNLIMITED and expires_at <= now):
            if write:
                self._remove(key)
            return False
        size = frozen_size(obj)
        if size != MUTABLE:
            shared = obj if obj.referenced == 0 else obj.with_referenced(0)
            weight = ENTRY_OVERHEAD + len(repo) + size
            entry = _Entry(weight, expires_at, type_short=obj.obj_type.short_name, value=shared)
            return self._store(key, entry, token, write)
        try:
            encoded = self._codec.encode(obj)
        except (TypeError, ValueError, OverflowError):
            if write:
                self._remove(key)
            return False
        weight = (
            ENTRY_OVERHEAD + len(repo) + len(obj.id) + len(encoded.data) + len(encoded.version_token or "")
        )
        entry = _Entry(
            weight,
            expires_at,
            data=encoded.data,
            type_short=encoded.type_short_name,
            version_token=encoded.version_token,
        )
        return self._store(key, entry, token, write)

    def put_obj_negative(self, repo: str, obj_id: ObjId, obj_type: ObjType, token: int | None = None) -> bool:
        """After a typed read found nothing: remember that, if the type opts in to negative caching
        (standard types never do); otherwise drop whatever the key held."""
        key: _Key = (repo, obj_id)
        now = self._clock.micros()
        expires_at = obj_type.negative_cache_expires_at(now)
        if expires_at == NOT_CACHED or (expires_at != CACHE_UNLIMITED and expires_at <= now):
            self.discard_obj(repo, obj_id, token)
            return False
        weight = ENTRY_OVERHEAD + len(repo) + len(obj_id) + len(obj_type.short_name)
        entry = _Entry(weight, expires_at, type_short=obj_type.short_name, missing=True)
        return self._store(key, entry, token, write=False)

    def discard_obj(self, repo: str, obj_id: ObjId, token: int | None = None) -> None:
        """After a read found nothing: drop a cached object for the id (it is gone) unless a writer
        touched the key since ``token``. A negative entry stays: the read confirmed it."""
        self._discard((repo, obj_id), token, keep_missing=True)

    def remove_negative_obj(self, repo: str, obj_id: ObjId) -> bool:
        """Drop a negative entry for the id (the object exists after all); keep a cached object.
        True if there was one (its stripe moved on)."""
        key: _Key = (repo, obj_id)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.missing:
                self._drop(key)
                self._stripes[hash(key) & _STRIPE_MASK] += 1
                return True
            return False

    def after_write(self, repo: str, written: Sequence[tuple[Obj, bool, int | None]]) -> None:
        """After one bulk write: cache each (object, newly stored, token taken before the write)
        that was stored, drop a negative entry for one that existed already.

        Every put after a write moves its key's stripe on, so two objects of one batch that share
        a stripe would see the first one's put as a concurrent change and the second would not be
        cached. The batch's own moves are added to the tokens it hands in; other writers' moves
        still make a fill stale."""
        own: dict[int, int] = {}
        for obj, new, token in written:
            stripe = hash((repo, obj.id)) & _STRIPE_MASK
            if new:
                moved = own.get(stripe, 0)
                self.put_obj(repo, obj, None if token is None else token + moved)
                own[stripe] = moved + 1  # a put after a write moves the stripe exactly once
            elif self.remove_negative_obj(repo, obj.id):
                own[stripe] = own.get(stripe, 0) + 1

    def remove_objs(self, repo: str, ids: Iterable[ObjId | None]) -> None:
        """Evict after a write (also when the write failed)."""
        for obj_id in ids:
            if obj_id is not None:
                self._remove((repo, obj_id))

    # --- references ------------------------------------------------------------------------------

    def ref_tokens(self, repo: str, names: Sequence[str]) -> list[int]:
        with self._lock:
            return [self._stripes[hash((repo, _REF_PREFIX + n)) & _STRIPE_MASK] for n in names]

    def get_ref(self, repo: str, name: str) -> Reference | _MissingReference | None:
        """The cached row, :data:`MISSING_REFERENCE`, or None (always None when refs are not cached)."""
        if not self._ref_ttl:
            return None
        with self._lock:
            entry = self._lookup((repo, _REF_PREFIX + name))
            if entry is None:
                return None
            if entry.missing:
                return MISSING_REFERENCE
            assert isinstance(entry.value, Reference)
            return entry.value

    def put_ref(self, repo: str, ref: Reference, token: int | None = None, *, write: bool = True) -> bool:
        if not self._ref_ttl:
            return False
        if not isinstance(ref.previous_pointers, tuple):
            ref = replace(ref, previous_pointers=tuple(ref.previous_pointers))
        key: _Key = (repo, _REF_PREFIX + ref.name)
        weight = (
            ENTRY_OVERHEAD
            + len(repo)
            + len(ref.name)
            + REFERENCE_BASE_WEIGHT
            + PREVIOUS_POINTER_WEIGHT * len(ref.previous_pointers)
        )
        entry = _Entry(weight, self._clock.micros() + self._ref_ttl, value=ref)
        return self._store(key, entry, token, write)

    def put_ref_negative(self, repo: str, name: str, token: int | None = None) -> bool:
        """After a read found no row: remember that for the negative TTL, or drop the key."""
        if not self._ref_ttl:
            return False
        key: _Key = (repo, _REF_PREFIX + name)
        if not self._ref_negative_ttl:
            self._discard(key, token)
            return False
        weight = ENTRY_OVERHEAD + len(repo) + len(name)
        entry = _Entry(weight, self._clock.micros() + self._ref_negative_ttl, missing=True)
        return self._store(key, entry, token, write=False)

    def remove_ref(self, repo: str, name: str) -> None:
        if self._ref_ttl:
            self._remove((repo, _REF_PREFIX + name))

    # --- whole repositories ----------------------------------------------------------------------

    def clear_repository(self, repo: str) -> None:
        """Drop every object and reference entry of one repository."""
        with self._lock:
            doomed = [k for k in self._entries if k[0] == repo]
            for key in doomed:
                self._weight -= self._entries.pop(key).weight
            self._bump_all()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._weight = 0
            self._bump_all()

    # --- internals (callers hold no lock unless the name says so) ---------------------------------

    def _lookup(self, key: _Key) -> _Entry | None:
        """Under the lock: the live entry, marked recently used, with hit/miss/expiry counted."""
        entry = self._entries.get(key)
        if entry is None:
            self._misses += 1
            return None
        if entry.expires_at != CACHE_UNLIMITED and entry.expires_at <= self._clock.micros():
            del self._entries[key]
            self._weight -= entry.weight
            self._expirations += 1
            self._misses += 1
            return None
        self._entries.move_to_end(key)
        self._hits += 1
        return entry

    def _store(self, key: _Key, entry: _Entry, token: int | None, write: bool) -> bool:
        stripe = hash(key) & _STRIPE_MASK
        with self._lock:
            if token is not None and self._stripes[stripe] != token:
                self._stale_fills += 1
                if write:
                    self._drop(key)
                    self._stripes[stripe] += 1
                return False
            if write:
                self._stripes[stripe] += 1
            self._drop(key)
            if entry.weight > self._capacity or self._weight + entry.weight >= self._admit:
                self._rejections += 1
                return False
            self._entries[key] = entry
            self._weight += entry.weight
            self._puts += 1
            while self._weight > self._capacity:
                _, evicted = self._entries.popitem(last=False)
                self._weight -= evicted.weight
                self._evictions += 1
            return True

    def _remove(self, key: _Key) -> None:
        with self._lock:
            self._drop(key)
            self._stripes[hash(key) & _STRIPE_MASK] += 1

    def _discard(self, key: _Key, token: int | None, keep_missing: bool = False) -> None:
        with self._lock:
            if token is not None and self._stripes[hash(key) & _STRIPE_MASK] != token:
                return
            entry = self._entries.get(key)
            if entry is not None and not (keep_missing and entry.missing):
                self._drop(key)

    def _drop(self, key: _Key) -> None:
        """Under the lock: remove the key's entry, if any."""
        old = self._entries.pop(key, None)
        if old is not None:
            self._weight -= old.weight

    def _bump_all(self) -> None:
        """Under the lock: invalidate every outstanding token."""
        self._stripes = [s + 1 for s in self._stripes]
