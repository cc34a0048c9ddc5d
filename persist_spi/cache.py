"""A caching :class:`~persist_spi.persist.Persist`: wraps any Persist and serves reads from an
:class:`~persist_spi.cache_store.ObjectCache` shared by every repository of the process.

What is cached and when (see ``docs/cache.md``):

- reads: hits are served from the cache; all misses of one call go to the wrapped Persist in
  **one** call, and what it returns is cached. A typed read that finds nothing leaves a negative
  entry only when the type opts in (standard types never do); that entry answers typed reads of
  the same type only, because a typed miss does not prove that no object of another type exists.
- ``store_objs`` caches the objects that were newly written (``True``), and nothing else.
- ``upsert_objs``, ``delete_objs``, ``delete_with_referenced`` and ``delete_conditional`` evict
  their ids afterwards, also when the write raised. ``update_conditional`` caches the new value on
  success and evicts otherwise. ``erase`` drops the repository's entries. Scans are never cached.
- references (only when the cache's ``reference_ttl_seconds`` is set): successful add, mark-deleted
  and pointer updates cache the returned row, failures evict it, purge always evicts;
  ``fetch_references`` serves cached rows; ``fetch_references_for_update`` always reads the
  wrapped Persist and refreshes the cache.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from persist_spi.cache_config import DEFAULT_CAPACITY_BYTES, CacheConfig
from persist_spi.cache_store import CacheStats, MissingObj, ObjectCache
from persist_spi.errors import RefConditionFailed, RefNotFound
from persist_spi.forwarding import ForwardingPersist
from persist_spi.ids import ObjId
from persist_spi.objs import Obj
from persist_spi.objtypes import ObjType
from persist_spi.persist import Persist, StoredAndMoved, is_fetchable
from persist_spi.references import Reference

__all__ = [
    "DEFAULT_CAPACITY_BYTES",
    "CacheConfig",
    "CacheStats",
    "CachingPersist",
    "ObjectCache",
    "configure_shared_object_cache",
    "shared_object_cache",
]

_shared: ObjectCache | None = None
_shared_lock = threading.Lock()


def shared_object_cache() -> ObjectCache:
    """The process-wide cache (created with the default :class:`CacheConfig` on first use)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = ObjectCache()
        return _shared


def configure_shared_object_cache(config: CacheConfig) -> ObjectCache:
    """Replace the process-wide cache; call at start-up, before Persists are wrapped."""
    global _shared
    with _shared_lock:
        _shared = ObjectCache(config)
        return _shared


class CachingPersist(ForwardingPersist):
    """Serves reads of ``delegate``'s repository from ``cache`` (the process-wide one by default)."""

    def __init__(self, delegate: Persist, cache: ObjectCache | None = None) -> None:
        super().__init__(delegate)
        self._cache = cache if cache is not None else shared_object_cache()
        self._repo = delegate.repository_id

    @property
    def cache(self) -> ObjectCache:
        return self._cache

    @property
    def caches_references(self) -> bool:
        return self._cache.caches_references

    def __repr__(self) -> str:
        return f"CachingPersist({self.delegate!r})"

    @property
    def is_caching(self) -> bool:
        return True

    # --- object reads ----------------------------------------------------------------------------

    def fetch_typed_objs_if_exist(
        self, ids: Sequence[ObjId | None], obj_type: ObjType | None
    ) -> list[Obj | None]:
        cache, repo = self._cache, self._repo
        wanted = None if obj_type is None else obj_type.short_name
        result: list[Obj | None] = [None] * len(ids)
        misses: dict[ObjId, list[int]] = {}
        for i, obj_id in enumerate(ids):
            if obj_id is None or not is_fetchable(obj_id):
                continue
            hit = cache.get_obj(repo, obj_id)
            if hit is None:
                misses.setdefault(obj_id, []).append(i)
            elif isinstance(hit, MissingObj):
                if wanted is None or hit.type_short_name != wanted:
                    misses.setdefault(obj_id, []).append(i)  # says nothing about other types
            elif wanted is None or hit.obj_type.short_name == wanted:
                result[i] = hit
            # else: the id holds an object of another type, which a typed read treats as missing
        if not misses:
            return result
        miss_ids = list(misses)
        tokens = cache.obj_tokens(repo, miss_ids)
        loaded = self.delegate.fetch_typed_objs_if_exist(miss_ids, obj_type)
        for obj_id, token, obj in zip(miss_ids, tokens, loaded, strict=True):
            if obj is None:
                if obj_type is None:
                    cache.discard_obj(repo, obj_id, token)
                else:
                    cache.put_obj_negative(repo, obj_id, obj_type, token)
                continue
            cache.put_obj(repo, obj, token, write=False)
            for i in misses[obj_id]:
                result[i] = obj
        return result

    def fetch_obj_type(self, obj_id: ObjId) -> ObjType:
        hit = self._cache.get_obj(self._repo, obj_id) if is_fetchable(obj_id) else None
        if isinstance(hit, Obj):
            return hit.obj_type
        # Only asked to validate a type: not worth fetching and caching the whole object.
        return self.delegate.fetch_obj_type(obj_id)

    def get_immediate(self, obj_id: ObjId) -> Obj | None:
        hit = self._cache.get_obj(self._repo, obj_id)
        return hit if isinstance(hit, Obj) else None

    # --- object writes ---------------------------------------------------------------------------

    def store_objs(
        self, objs: Sequence[Obj | None], ignore_soft_size_restrictions: bool = False
    ) -> list[bool]:
        present = [o.id for o in objs if o is not None]
        tokens = dict(zip(present, self._cache.obj_tokens(self._repo, present), strict=True))
        stored = self.delegate.store_objs(objs, ignore_soft_size_restrictions)
        self._after_store(objs, stored, tokens)
        return stored

    def store_objs_and_update_reference(
        self, objs: Sequence[Obj], ref: Reference, new_pointer: ObjId
    ) -> StoredAndMoved:
        cache = self._cache
        ids = [o.id for o in objs]
        tokens = dict(zip(ids, cache.obj_tokens(self._repo, ids), strict=True))
        ref_token = cache.ref_tokens(self._repo, [ref.name])[0] if cache.caches_references else None
        try:
            outcome = self.delegate.store_objs_and_update_reference(objs, ref, new_pointer)
        except (RefConditionFailed, RefNotFound):
            # The swap failed after the objects were stored, which of them by this call is not
            # said: each is taken as one that existed (no negative entry stays, nothing is added).
            self._after_store(objs, [False] * len(objs), tokens)
            if ref_token is not None:
                cache.remove_ref(self._repo, ref.name)
            raise
        except BaseException:
            if ref_token is not None:
                cache.remove_ref(self._repo, ref.name)
            raise
        self._after_store(objs, outcome.stored, tokens)
        if ref_token is not None and outcome.moved is not None:
            cache.put_ref(self._repo, outcome.moved, ref_token)
        return outcome

    def _after_store(
        self, objs: Sequence[Obj | None], stored: Sequence[bool], tokens: dict[ObjId, int]
    ) -> None:
        """Stored ones are cached; for an id that existed already a cached object stays valid and a
        negative entry is wrong."""
        self._cache.after_write(
            self._repo,
            [(obj, new, tokens[obj.id]) for obj, new in zip(objs, stored, strict=True) if obj is not None],
        )

    def upsert_objs(self, objs: Sequence[Obj | None]) -> None:
        try:
            self.delegate.upsert_objs(objs)
        finally:
            self._cache.remove_objs(self._repo, [o.id for o in objs if o is not None])

    def delete_objs(self, ids: Sequence[ObjId | None]) -> None:
        try:
            self.delegate.delete_objs(ids)
        finally:
            self._cache.remove_objs(self._repo, ids)

    def delete_with_referenced(self, obj: Obj) -> bool:
        try:
            return self.delegate.delete_with_referenced(obj)
        finally:
            self._cache.remove_objs(self._repo, [obj.id])

    def delete_conditional(self, obj: Obj) -> bool:
        try:
            return self.delegate.delete_conditional(obj)
        finally:
            self._cache.remove_objs(self._repo, [obj.id])

    def update_conditional(self, expected: Obj, new: Obj) -> bool:
        token = self._cache.obj_tokens(self._repo, [new.id])[0]
        updated = False
        try:
            updated = self.delegate.update_conditional(expected, new)
            return updated
        finally:
            if updated:
                self._cache.put_obj(self._repo, new, token)
            else:
                self._cache.remove_objs(self._repo, [expected.id, new.id])

    def erase(self) -> None:
        try:
            self.delegate.erase()
        finally:
            self._cache.clear_repository(self._repo)

    # --- references ------------------------------------------------------------------------------

    def add_reference(self, ref: Reference) -> Reference:
        return self._write_reference(ref.name, lambda: self.delegate.add_reference(ref))

    def mark_reference_as_deleted(self, ref: Reference) -> Reference:
        return self._write_reference(ref.name, lambda: self.delegate.mark_reference_as_deleted(ref))

    def update_reference_pointer(self, ref: Reference, new_pointer: ObjId) -> Reference:
        return self._write_reference(
            ref.name, lambda: self.delegate.update_reference_pointer(ref, new_pointer)
        )

    def purge_reference(self, ref: Reference) -> None:
        try:
            self.delegate.purge_reference(ref)
        finally:
            self._cache.remove_ref(self._repo, ref.name)

    def fetch_references(self, names: Sequence[str | None]) -> list[Reference | None]:
        cache = self._cache
        if not cache.caches_references:
            return self.delegate.fetch_references(names)
        result: list[Reference | None] = [None] * len(names)
        misses: dict[str, list[int]] = {}
        for i, name in enumerate(names):
            if name is None:
                continue
            hit = cache.get_ref(self._repo, name)
            if hit is None:
                misses.setdefault(name, []).append(i)
            elif isinstance(hit, Reference):
                result[i] = hit
        if misses:
            for name, ref in zip(misses, self._load_references(list(misses)), strict=True):
                for i in misses[name]:
                    result[i] = ref
        return result

    def fetch_references_for_update(self, names: Sequence[str | None]) -> list[Reference | None]:
        if not self._cache.caches_references:
            return self.delegate.fetch_references_for_update(names)
        wanted = list(dict.fromkeys(n for n in names if n is not None))
        by_name = dict(zip(wanted, self._load_references(wanted), strict=True))
        return [None if n is None else by_name[n] for n in names]

    def _load_references(self, names: list[str]) -> list[Reference | None]:
        """Read rows from the wrapped Persist, bypassing every cache, and refresh this one."""
        if not names:
            return []
        tokens = self._cache.ref_tokens(self._repo, names)
        loaded = self.delegate.fetch_references_for_update(names)
        for name, token, ref in zip(names, tokens, loaded, strict=True):
            if ref is None:
                self._cache.put_ref_negative(self._repo, name, token)
            else:
                self._cache.put_ref(self._repo, ref, token, write=False)
        return loaded

    def _write_reference(self, name: str, write: Callable[[], Reference]) -> Reference:
        cache = self._cache
        if not cache.caches_references:
            return write()
        token = cache.ref_tokens(self._repo, [name])[0]
        try:
            written = write()
        except BaseException:
            cache.remove_ref(self._repo, name)
            raise
        cache.put_ref(self._repo, written, token)
        return written
