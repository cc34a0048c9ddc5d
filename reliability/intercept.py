"""A Persist that hands every primitive call to one hook before it reaches the real Persist.

The campaign's wrappers (crash points, the compare-and-swap history) are subclasses overriding
:meth:`InterceptingPersist.intercept`; nothing in the commit logic knows they exist. Derived reads
and writes of the contract go through the primitives, so each database round trip is seen once.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Generator, Sequence
from typing import Any, TypeVar

from persist_spi.config import StoreConfig
from persist_spi.ids import ObjId
from persist_spi.objs import Obj
from persist_spi.objtypes import ObjType
from persist_spi.persist import Persist
from persist_spi.references import Reference

T = TypeVar("T")


class InterceptingPersist(Persist):
    def __init__(self, delegate: Persist) -> None:
        self.delegate = delegate

    def intercept(self, method: str, args: tuple[Any, ...], call: Callable[[], T]) -> T:
        """Called for every primitive; ``call`` performs it on the delegate."""
        return call()

    @property
    def config(self) -> StoreConfig:
        return self.delegate.config

    @property
    def hard_object_size_limit(self) -> int:
        return self.delegate.hard_object_size_limit

    @property
    def is_caching(self) -> bool:
        return self.delegate.is_caching

    # --- objects ---------------------------------------------------------------------------------

    def fetch_typed_objs_if_exist(
        self, ids: Sequence[ObjId | None], obj_type: ObjType | None
    ) -> list[Obj | None]:
        d = self.delegate
        return self.intercept(
            "fetch_objs", (ids, obj_type), lambda: d.fetch_typed_objs_if_exist(ids, obj_type)
        )

    def store_objs(
        self, objs: Sequence[Obj | None], ignore_soft_size_restrictions: bool = False
    ) -> list[bool]:
        d = self.delegate
        return self.intercept(
            "store_objs", (objs,), lambda: d.store_objs(objs, ignore_soft_size_restrictions)
        )

    def upsert_objs(self, objs: Sequence[Obj | None]) -> None:
        self.intercept("upsert_objs", (objs,), lambda: self.delegate.upsert_objs(objs))

    def delete_objs(self, ids: Sequence[ObjId | None]) -> None:
        self.intercept("delete_objs", (ids,), lambda: self.delegate.delete_objs(ids))

    def delete_with_referenced(self, obj: Obj) -> bool:
        return self.intercept(
            "delete_with_referenced", (obj,), lambda: self.delegate.delete_with_referenced(obj)
        )

    def update_conditional(self, expected: Obj, new: Obj) -> bool:
        d = self.delegate
        return self.intercept(
            "update_conditional", (expected, new), lambda: d.update_conditional(expected, new)
        )

    def delete_conditional(self, obj: Obj) -> bool:
        return self.intercept("delete_conditional", (obj,), lambda: self.delegate.delete_conditional(obj))

    def scan_all_objects(self, types: Collection[ObjType] | None = None) -> Generator[Obj, None, None]:
        yield from self.intercept("scan_all_objects", (types,), lambda: self.delegate.scan_all_objects(types))

    def erase(self) -> None:
        self.intercept("erase", (), self.delegate.erase)

    # --- references ------------------------------------------------------------------------------

    def add_reference(self, ref: Reference) -> Reference:
        return self.intercept("add_reference", (ref,), lambda: self.delegate.add_reference(ref))

    def mark_reference_as_deleted(self, ref: Reference) -> Reference:
        d = self.delegate
        return self.intercept("mark_reference_as_deleted", (ref,), lambda: d.mark_reference_as_deleted(ref))

    def purge_reference(self, ref: Reference) -> None:
        self.intercept("purge_reference", (ref,), lambda: self.delegate.purge_reference(ref))

    def update_reference_pointer(self, ref: Reference, new_pointer: ObjId) -> Reference:
        d = self.delegate
        return self.intercept(
            "update_reference_pointer",
            (ref, new_pointer),
            lambda: d.update_reference_pointer(ref, new_pointer),
        )

    def fetch_references(self, names: Sequence[str | None]) -> list[Reference | None]:
        return self.intercept("fetch_references", (names,), lambda: self.delegate.fetch_references(names))

    def fetch_references_for_update(self, names: Sequence[str | None]) -> list[Reference | None]:
        d = self.delegate
        return self.intercept("fetch_references", (names,), lambda: d.fetch_references_for_update(names))
