"""Timing every Persist call and every version-store request, for metrics.

:class:`ObservingPersist` wraps any Persist (typically the cached one, as Nessie does, so the
timings include cache hits) and reports each call of the contract to an :data:`Observer`:
``observer(layer, class name, method, seconds, exception name or None)``.
:func:`observing_api` does the same for a :class:`~persist_spi.versionstore.api.VersionStoreApi`,
under Nessie's method names (``commit``, ``getValues``, ``getCommits``...); a listing is timed
until it is read to its end. Nothing here knows Prometheus: ``loadgen.metrics`` turns the
observations into ``lochkit_nessie_storage_persist_seconds`` and
``lochkit_nessie_versionstore_request_seconds``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Generator, Iterator, Sequence
from typing import Any, Final, TypeVar

from persist_spi.config import StoreConfig
from persist_spi.ids import ObjId
from persist_spi.objs import Obj
from persist_spi.objtypes import ObjType
from persist_spi.persist import Persist
from persist_spi.references import Reference

T = TypeVar("T")
#: (layer "persist" or "versionstore", class name, method, seconds, exception name or None)
Observer = Callable[[str, str, str, float, str | None], None]

#: VersionStoreApi method -> Nessie's ObservingVersionStore method name.
VERSION_STORE_METHODS: Final = {
    "commit": "commit",
    "merge": "merge",
    "transplant": "transplant",
    "create_reference": "create",
    "assign": "assign",
    "delete_reference": "delete",
    "named_ref": "getNamedRef",
    "reference": "getNamedRef",
    "list_references": "getNamedRefs",
    "get_commits": "getCommits",
    "get_entries": "getKeys",
    "get_values": "getValues",
    "get_value": "getValue",
    "get_contents": "getValues",
    "get_diffs": "getDiffs",
    "hash_on_reference": "hashOnReference",
}


class ObservingPersist(Persist):
    """Delegates every call to ``delegate`` and reports how long it took."""

    def __init__(self, delegate: Persist, observer: Observer) -> None:
        self.delegate = delegate
        self._observer = observer
        self._class = type(delegate).__name__

    def _timed(self, method: str, call: Callable[[], T]) -> T:
        start = time.perf_counter()
        try:
            result = call()
        except Exception as e:
            self._observer("persist", self._class, method, time.perf_counter() - start, type(e).__name__)
            raise
        self._observer("persist", self._class, method, time.perf_counter() - start, None)
        return result

    @property
    def config(self) -> StoreConfig:
        return self.delegate.config

    @property
    def is_caching(self) -> bool:
        return self.delegate.is_caching

    @property
    def hard_object_size_limit(self) -> int:
        return self.delegate.hard_object_size_limit

    def fetch_typed_objs_if_exist(
        self, ids: Sequence[ObjId | None], obj_type: ObjType | None
    ) -> list[Obj | None]:
        return self._timed(
            "fetchTypedObjsIfExist", lambda: self.delegate.fetch_typed_objs_if_exist(ids, obj_type)
        )

    def get_immediate(self, obj_id: ObjId) -> Obj | None:
        return self._timed("getImmediate", lambda: self.delegate.get_immediate(obj_id))

    def store_objs(
        self, objs: Sequence[Obj | None], ignore_soft_size_restrictions: bool = False
    ) -> list[bool]:
        return self._timed("storeObjs", lambda: self.delegate.store_objs(objs, ignore_soft_size_restrictions))

    def upsert_objs(self, objs: Sequence[Obj | None]) -> None:
        self._timed("upsertObjs", lambda: self.delegate.upsert_objs(objs))

    def delete_objs(self, ids: Sequence[ObjId | None]) -> None:
        self._timed("deleteObjs", lambda: self.delegate.delete_objs(ids))

    def delete_with_referenced(self, obj: Obj) -> bool:
        return self._timed("deleteWithReferenced", lambda: self.delegate.delete_with_referenced(obj))

    def update_conditional(self, expected: Obj, new: Obj) -> bool:
        return self._timed("updateConditional", lambda: self.delegate.update_conditional(expected, new))

    def delete_conditional(self, obj: Obj) -> bool:
        return self._timed("deleteConditional", lambda: self.delegate.delete_conditional(obj))

    def scan_all_objects(self, types: Collection[ObjType] | None = None) -> Generator[Obj, None, None]:
        start = time.perf_counter()
        error: str | None = None
        try:
            yield from self.delegate.scan_all_objects(types)
        except Exception as e:
            error = type(e).__name__
            raise
        finally:
            self._observer("persist", self._class, "scanAllObjects", time.perf_counter() - start, error)

    def erase(self) -> None:
        self._timed("erase", self.delegate.erase)

    def add_reference(self, ref: Reference) -> Reference:
        return self._timed("addReference", lambda: self.delegate.add_reference(ref))

    def mark_reference_as_deleted(self, ref: Reference) -> Reference:
        return self._timed("markReferenceAsDeleted", lambda: self.delegate.mark_reference_as_deleted(ref))

    def purge_reference(self, ref: Reference) -> None:
        self._timed("purgeReference", lambda: self.delegate.purge_reference(ref))

    def update_reference_pointer(self, ref: Reference, new_pointer: ObjId) -> Reference:
        return self._timed(
            "updateReferencePointer", lambda: self.delegate.update_reference_pointer(ref, new_pointer)
        )

    def fetch_references(self, names: Sequence[str | None]) -> list[Reference | None]:
        return self._timed("fetchReferences", lambda: self.delegate.fetch_references(names))

    def fetch_references_for_update(self, names: Sequence[str | None]) -> list[Reference | None]:
        return self._timed(
            "fetchReferencesForUpdate", lambda: self.delegate.fetch_references_for_update(names)
        )


class _ObservingApi:
    """A VersionStoreApi proxy timing the calls named in :data:`VERSION_STORE_METHODS`."""

    def __init__(self, api: Any, observer: Observer) -> None:
        self._api = api
        self._observer = observer
        self._class = type(api).__name__

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._api, name)
        method = VERSION_STORE_METHODS.get(name)
        if method is None or not callable(target):
            return target

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                result = target(*args, **kwargs)
            except Exception as e:
                self._observer(
                    "versionstore", self._class, method, time.perf_counter() - start, type(e).__name__
                )
                raise
            if isinstance(result, Iterator):
                return self._timed_listing(result, method, start)
            self._observer("versionstore", self._class, method, time.perf_counter() - start, None)
            return result

        return timed

    def _timed_listing(self, items: Iterator[Any], method: str, start: float) -> Iterator[Any]:
        error: str | None = None
        try:
            yield from items
        except Exception as e:
            error = type(e).__name__
            raise
        finally:
            self._observer("versionstore", self._class, method, time.perf_counter() - start, error)


def observing_api(api: T, observer: Observer) -> T:
    """``api`` with every version-store request timed (typed as the api it wraps)."""
    return _ObservingApi(api, observer)  # type: ignore[return-value]
