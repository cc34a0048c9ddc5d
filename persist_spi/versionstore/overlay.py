"""A Persist that keeps writes in memory and reads through to another: dry runs build real
commits (later ones on top of earlier ones) without writing anything."""

from __future__ import annotations

from collections.abc import Collection, Generator, Sequence

from persist_spi.config import StoreConfig
from persist_spi.ids import ObjId
from persist_spi.objs import Obj
from persist_spi.objtypes import ObjType
from persist_spi.persist import Persist, is_fetchable
from persist_spi.references import Reference


class OverlayPersist(Persist):
    def __init__(self, delegate: Persist) -> None:
        self._delegate = delegate
        self._objs: dict[ObjId, Obj] = {}

    @property
    def config(self) -> StoreConfig:
        return self._delegate.config

    @property
    def hard_object_size_limit(self) -> int:
        return self._delegate.hard_object_size_limit

    def fetch_typed_objs_if_exist(
        self, ids: Sequence[ObjId | None], obj_type: ObjType | None
    ) -> list[Obj | None]:
        missing = [i for i in ids if i is not None and i not in self._objs]
        found = dict(zip(missing, self._delegate.fetch_typed_objs_if_exist(missing, obj_type), strict=True))
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
            self._delegate.store_objs(list(self._objs.values()), ignore_soft_size_restrictions=True)
            self._objs.clear()

    def upsert_objs(self, objs: Sequence[Obj | None]) -> None:
        for obj in objs:
            if obj is not None:
                self._objs[obj.id] = obj

    def _read_only(self, *_: object) -> bool:
        raise RuntimeError("A dry run must not delete objects or change references")

    delete_objs = _read_only  # type: ignore[assignment]
    delete_with_referenced = _read_only  # type: ignore[assignment]
    update_conditional = _read_only  # type: ignore[assignment]
    delete_conditional = _read_only  # type: ignore[assignment]
    erase = _read_only  # type: ignore[assignment]
    add_reference = _read_only  # type: ignore[assignment]
    mark_reference_as_deleted = _read_only  # type: ignore[assignment]
    purge_reference = _read_only  # type: ignore[assignment]
    update_reference_pointer = _read_only  # type: ignore[assignment]

    def scan_all_objects(self, types: Collection[ObjType] | None = None) -> Generator[Obj, None, None]:
        yield from self._delegate.scan_all_objects(types)

    def fetch_references(self, names: Sequence[str | None]) -> list[Reference | None]:
        return self._delegate.fetch_references(names)

    def fetch_references_for_update(self, names: Sequence[str | None]) -> list[Reference | None]:
        return self._delegate.fetch_references_for_update(names)
