"""A Persist that keeps writes in memory and reads through to another: dry runs build real
commits (later ones on top of earlier ones) without writing anything."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final, TypeVar

from persist_spi.forwarding import ForwardingPersist
from persist_spi.ids import ObjId
from persist_spi.objs import Obj
from persist_spi.objtypes import ObjType
from persist_spi.persist import Persist, is_fetchable

T = TypeVar("T")

#: What a dry run cannot keep in memory: deleting objects and changing references.
REFUSED: Final = frozenset(
    {
        "delete_objs",
        "delete_with_referenced",
        "update_conditional",
        "delete_conditional",
        "erase",
        "add_reference",
        "mark_reference_as_deleted",
        "purge_reference",
        "update_reference_pointer",
        "store_objs_and_update_reference",
    }
)


class OverlayPersist(ForwardingPersist):
    def __init__(self, delegate: Persist) -> None:
        super().__init__(delegate)
        self._objs: dict[ObjId, Obj] = {}

    def _call(self, method: str, call: Callable[..., T], *args: Any) -> T:
        if method in REFUSED:
            raise RuntimeError("A dry run must not delete objects or change references")
        return call(*args)

    def fetch_typed_objs_if_exist(
        self, ids: Sequence[ObjId | None], obj_type: ObjType | None
    ) -> list[Obj | None]:
        missing = [i for i in ids if i is not None and i not in self._objs]
        found = dict(zip(missing, self.delegate.fetch_typed_objs_if_exist(missing, obj_type), strict=True))
        result: list[Obj | None] = []
        for i in ids:
            if i is None or not is_fetchable(i):
                result.append(None)
                continue
            obj = self._objs.get(i, found.get(i))
            result.append(obj if obj is not None and (obj_type is None or obj.obj_type == obj_type) else None)
        return result

    def store_objs(
        self, objs: Sequence[Obj | None], ignore_soft_size_restrictions: bool = False
    ) -> list[bool]:
        existing = self.fetch_objs_if_exist([o.id if o is not None else None for o in objs])
        result = []
        for obj, there in zip(objs, existing, strict=True):
            if obj is None or there is not None or obj.id in self._objs:
                result.append(False)
            else:
                self._objs[obj.id] = obj
                result.append(True)
        return result

    def flush(self) -> None:
        """Write everything buffered to the underlying Persist (insert-if-absent; sizes were
        checked when the logic stored them, so soft limits are not applied again)."""
        if self._objs:
            self.delegate.store_objs(list(self._objs.values()), ignore_soft_size_restrictions=True)
            self._objs.clear()

    def upsert_objs(self, objs: Sequence[Obj | None]) -> None:
        for obj in objs:
            if obj is not None:
                self._objs[obj.id] = obj
