"""A plain-Python model of the Persist contract, written from the contract's rules rather than from
any adapter, so the stateful test can compare a backend against an independent oracle."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from persist_spi.config import StoreConfig
from persist_spi.errors import RefAlreadyExists, RefConditionFailed, RefNotFound
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.objs import GenericObj, Obj, UpdateableObj
from persist_spi.references import Reference


def _token(obj: Obj) -> str | None:
    return obj.version_token if isinstance(obj, (UpdateableObj, GenericObj)) else None


@dataclass
class PersistModel:
    config: StoreConfig = field(default_factory=StoreConfig)
    objs: dict[ObjId, Obj] = field(default_factory=dict)
    refs: dict[str, Reference] = field(default_factory=dict)

    # --- objects ---------------------------------------------------------------------------------

    def fetch(self, ids: Sequence[ObjId | None]) -> list[Obj | None]:
        return [None if i is None or i == EMPTY_OBJ_ID else self.objs.get(i) for i in ids]

    def store(self, objs: Sequence[Obj | None]) -> list[bool]:
        result = []
        for obj in objs:
            if obj is None or obj.id in self.objs:
                result.append(False)
            else:
                self.objs[obj.id] = obj
                result.append(True)
        return result

    def upsert(self, objs: Sequence[Obj]) -> None:
        for obj in objs:
            self.objs[obj.id] = obj

    def delete(self, ids: Sequence[ObjId]) -> None:
        for i in ids:
            self.objs.pop(i, None)

    def update_conditional(self, expected: Obj, new: Obj) -> bool:
        current = self.objs.get(expected.id)
        if current is None or current.obj_type != expected.obj_type or _token(current) != _token(expected):
            return False
        self.objs[new.id] = new
        return True

    def delete_conditional(self, obj: Obj) -> bool:
        current = self.objs.get(obj.id)
        if current is None or current.obj_type != obj.obj_type or _token(current) != _token(obj):
            return False
        del self.objs[obj.id]
        return True

    # --- references ------------------------------------------------------------------------------

    def add_reference(self, ref: Reference) -> Reference:
        if ref.name in self.refs:
            raise RefAlreadyExists(self.refs[ref.name])
        self.refs[ref.name] = ref
        return ref

    def _current(self, name: str) -> Reference:
        current = self.refs.get(name)
        if current is None:
            raise RefNotFound(name)
        return current

    def mark_reference_as_deleted(self, ref: Reference) -> Reference:
        current = self._current(ref.name)
        if current.deleted or current != ref.with_deleted(False):
            raise RefConditionFailed(current)
        self.refs[ref.name] = ref.with_deleted(True)
        return ref.with_deleted(True)

    def purge_reference(self, ref: Reference) -> None:
        current = self._current(ref.name)
        if current != ref.with_deleted(True):
            raise RefConditionFailed(current)
        del self.refs[ref.name]

    def update_reference_pointer(self, ref: Reference, new_pointer: ObjId, now: int) -> Reference:
        current = self._current(ref.name)
        if current.deleted or current != ref.with_deleted(False):
            raise RefConditionFailed(current)
        updated = ref.with_deleted(False).for_new_pointer(new_pointer, self.config, now)
        self.refs[ref.name] = updated
        return updated
