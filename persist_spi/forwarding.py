"""A Persist that hands every call to another Persist: the base of every wrapper.

:class:`ForwardingPersist` forwards the whole contract to ``delegate``. Each method call passes
through one hook, :meth:`ForwardingPersist._call`, so a wrapper (timing, counting, injecting
faults, recording) overrides that hook, plus the few methods whose meaning it changes (a cache,
a dry-run overlay), and nothing else. A method the contract gains later is forwarded here once,
for every wrapper.

What is forwarded, and how:

- the primitives, ``get_immediate`` and ``fetch_references_for_update`` go to the delegate's
  method of the same name through the hook: they are what a delegate answers its own way (a cache
  underneath holds objects and rows of its own);
- the properties go to the delegate directly, outside the hook (reading configuration is no call
  to time or count);
- the derived reads and writes (``fetch_obj``, ``store_obj``, ``fetch_reference``...) are the
  contract's own, built on the forwarded primitives: each database round trip then passes the
  hook exactly once, under the primitive's name, and a wrapper that serves primitives itself
  (a cache) serves the derived calls too.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Generator, Sequence
from typing import Any, TypeVar

from persist_spi.config import StoreConfig
from persist_spi.ids import ObjId
from persist_spi.objs import Obj
from persist_spi.objtypes import ObjType
from persist_spi.persist import Persist, StoredAndMoved
from persist_spi.references import Reference

T = TypeVar("T")


class ForwardingPersist(Persist):
    """Forwards every call of the Persist contract to ``delegate``, through :meth:`_call`."""

    def __init__(self, delegate: Persist) -> None:
        self.delegate = delegate

    def _call(self, method: str, call: Callable[..., T], *args: Any) -> T:
        """Every forwarded call passes here: ``method`` is the contract's name of it, ``call`` the
        delegate's bound method and ``args`` its positional arguments. Override to act around
        the call; the default just makes it."""
        return call(*args)

    # --- properties ------------------------------------------------------------------------------

    @property
    def config(self) -> StoreConfig:
        return self.delegate.config

    @property
    def repository_id(self) -> str:
        return self.delegate.repository_id

    @property
    def is_caching(self) -> bool:
        return self.delegate.is_caching

    @property
    def hard_object_size_limit(self) -> int:
        return self.delegate.hard_object_size_limit

    @property
    def effective_incremental_index_size_limit(self) -> int:
        return self.delegate.effective_incremental_index_size_limit

    @property
    def effective_index_segment_size_limit(self) -> int:
        return self.delegate.effective_index_segment_size_limit

    # --- objects ---------------------------------------------------------------------------------

    def fetch_typed_objs_if_exist(
        self, ids: Sequence[ObjId | None], obj_type: ObjType | None
    ) -> list[Obj | None]:
        return self._call("fetch_typed_objs_if_exist", self.delegate.fetch_typed_objs_if_exist, ids, obj_type)

    def get_immediate(self, obj_id: ObjId) -> Obj | None:
        return self._call("get_immediate", self.delegate.get_immediate, obj_id)

    def store_objs(
        self, objs: Sequence[Obj | None], ignore_soft_size_restrictions: bool = False
    ) -> list[bool]:
        return self._call("store_objs", self.delegate.store_objs, objs, ignore_soft_size_restrictions)

    def upsert_objs(self, objs: Sequence[Obj | None]) -> None:
        self._call("upsert_objs", self.delegate.upsert_objs, objs)

    def delete_objs(self, ids: Sequence[ObjId | None]) -> None:
        self._call("delete_objs", self.delegate.delete_objs, ids)

    def delete_with_referenced(self, obj: Obj) -> bool:
        return self._call("delete_with_referenced", self.delegate.delete_with_referenced, obj)

    def update_conditional(self, expected: Obj, new: Obj) -> bool:
        return self._call("update_conditional", self.delegate.update_conditional, expected, new)

    def delete_conditional(self, obj: Obj) -> bool:
        return self._call("delete_conditional", self.delegate.delete_conditional, obj)

    def scan_all_objects(self, types: Collection[ObjType] | None = None) -> Generator[Obj, None, None]:
        # A generator itself: the hook runs when the scan starts, and closing this scan closes
        # the delegate's.
        yield from self._call("scan_all_objects", self.delegate.scan_all_objects, types)

    def erase(self) -> None:
        self._call("erase", self.delegate.erase)

    # --- references ------------------------------------------------------------------------------

    def add_reference(self, ref: Reference) -> Reference:
        return self._call("add_reference", self.delegate.add_reference, ref)

    def mark_reference_as_deleted(self, ref: Reference) -> Reference:
        return self._call("mark_reference_as_deleted", self.delegate.mark_reference_as_deleted, ref)

    def purge_reference(self, ref: Reference) -> None:
        self._call("purge_reference", self.delegate.purge_reference, ref)

    def update_reference_pointer(self, ref: Reference, new_pointer: ObjId) -> Reference:
        return self._call(
            "update_reference_pointer", self.delegate.update_reference_pointer, ref, new_pointer
        )

    def store_objs_and_update_reference(
        self, objs: Sequence[Obj], ref: Reference, new_pointer: ObjId
    ) -> StoredAndMoved:
        return self._call(
            "store_objs_and_update_reference",
            self.delegate.store_objs_and_update_reference,
            objs,
            ref,
            new_pointer,
        )

    def fetch_references(self, names: Sequence[str | None]) -> list[Reference | None]:
        return self._call("fetch_references", self.delegate.fetch_references, names)

    def fetch_references_for_update(self, names: Sequence[str | None]) -> list[Reference | None]:
        return self._call("fetch_references_for_update", self.delegate.fetch_references_for_update, names)
