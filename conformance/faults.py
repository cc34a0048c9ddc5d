"""A Persist that delegates to the real backend but lets a test inject trouble: a concurrent
change right before a write, or an "unknown outcome" error before or after the real write.

It is not a fake: every call still reaches the backend under test; it only adds events a real
deployment sees (races, timeouts) at exactly the moment a test needs them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

from persist_spi.config import StoreConfig
from persist_spi.errors import UnknownOperationResult
from persist_spi.ids import ObjId
from persist_spi.objs import Obj
from persist_spi.objtypes import ObjType
from persist_spi.persist import Persist
from persist_spi.references import Reference


@dataclass
class Fault:
    """Raise ``UnknownOperationResult`` on the next ``times`` calls of ``method``; with
    ``after_write`` the real write happens first (the caller just never hears about it)."""

    method: str
    after_write: bool = False
    times: int = 1


@dataclass
class FaultInjectingPersist(Persist):
    delegate: Persist
    faults: list[Fault] = field(default_factory=list)
    #: Called before every update_reference_pointer, e.g. to commit concurrently.
    before_pointer_update: Callable[[Reference, ObjId], None] | None = None
    calls: dict[str, int] = field(default_factory=dict)

    @property
    def config(self) -> StoreConfig:
        return self.delegate.config

    @property
    def hard_object_size_limit(self) -> int:
        return self.delegate.hard_object_size_limit

    @property
    def is_caching(self) -> bool:
        return self.delegate.is_caching

    def _call(self, method: str, write: Callable[[], Any]) -> Any:
        self.calls[method] = self.calls.get(method, 0) + 1
        fault = next((f for f in self.faults if f.method == method and f.times > 0), None)
        if fault is None:
            return write()
        fault.times -= 1
        if fault.after_write:
            write()
        raise UnknownOperationResult(f"injected unknown outcome of {method}")

    # --- objects ---------------------------------------------------------------------------------

    def fetch_typed_objs_if_exist(
        self, ids: Sequence[ObjId | None], obj_type: ObjType | None
    ) -> list[Obj | None]:
        return self.delegate.fetch_typed_objs_if_exist(ids, obj_type)

    def store_objs(
        self, objs: Sequence[Obj | None], ignore_soft_size_restrictions: bool = False
    ) -> list[bool]:
        method = "store_obj" if len(objs) == 1 else "store_objs"
        result: list[bool] = self._call(
            method, lambda: self.delegate.store_objs(objs, ignore_soft_size_restrictions)
        )
        return result

    def upsert_objs(self, objs: Sequence[Obj | None]) -> None:
        self._call("upsert_objs", lambda: self.delegate.upsert_objs(objs))

    def delete_objs(self, ids: Sequence[ObjId | None]) -> None:
        self._call("delete_objs", lambda: self.delegate.delete_objs(ids))

    def delete_with_referenced(self, obj: Obj) -> bool:
        return bool(self._call("delete_with_referenced", lambda: self.delegate.delete_with_referenced(obj)))

    def update_conditional(self, expected: Obj, new: Obj) -> bool:
        return bool(self._call("update_conditional", lambda: self.delegate.update_conditional(expected, new)))

    def delete_conditional(self, obj: Obj) -> bool:
        return bool(self._call("delete_conditional", lambda: self.delegate.delete_conditional(obj)))

    def scan_all_objects(self, types: Collection[ObjType] | None = None) -> Generator[Obj, None, None]:
        yield from self.delegate.scan_all_objects(types)

    def erase(self) -> None:
        self.delegate.erase()

    # --- references ------------------------------------------------------------------------------

    def add_reference(self, ref: Reference) -> Reference:
        result: Reference = self._call("add_reference", lambda: self.delegate.add_reference(ref))
        return result

    def mark_reference_as_deleted(self, ref: Reference) -> Reference:
        result: Reference = self._call(
            "mark_reference_as_deleted", lambda: self.delegate.mark_reference_as_deleted(ref)
        )
        return result

    def purge_reference(self, ref: Reference) -> None:
        self._call("purge_reference", lambda: self.delegate.purge_reference(ref))

    def update_reference_pointer(self, ref: Reference, new_pointer: ObjId) -> Reference:
        if self.before_pointer_update is not None:
            hook, self.before_pointer_update = self.before_pointer_update, None
            try:
                hook(ref, new_pointer)
            finally:
                self.before_pointer_update = hook
        result: Reference = self._call(
            "update_reference_pointer", lambda: self.delegate.update_reference_pointer(ref, new_pointer)
        )
        return result

    def fetch_references(self, names: Sequence[str | None]) -> list[Reference | None]:
        return self.delegate.fetch_references(names)

    def fetch_references_for_update(self, names: Sequence[str | None]) -> list[Reference | None]:
        return self.delegate.fetch_references_for_update(names)
