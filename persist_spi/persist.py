"""The Persist contract: what the commit and reference logic may ask of storage.

A Persist is bound to one repository. It offers a references table changed only by
compare-and-swap and a table of immutable, content-addressed objects written insert-if-absent.
Subclasses implement the primitives (marked abstract); the convenience reads are built here, once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Generator, Sequence
from typing import NamedTuple, TypeVar

from persist_spi.config import StoreConfig
from persist_spi.errors import InputError, ObjNotFound, RefNotFound
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.objs import Obj
from persist_spi.objtypes import ObjType
from persist_spi.references import Reference

T = TypeVar("T", bound=Obj)


class StoredAndMoved(NamedTuple):
    """What :meth:`Persist.store_objs_and_update_reference` did."""

    #: Per object, as :meth:`Persist.store_objs` answers.
    stored: list[bool]
    #: The reference as moved; None when the object the new pointer names existed already, so
    #: nothing was moved (the caller tells the same object from a colliding one, then moves).
    moved: Reference | None


class Persist(ABC):
    """Storage of one repository. See the module docstring and docs/architecture.md."""

    @property
    @abstractmethod
    def config(self) -> StoreConfig: ...

    @property
    def repository_id(self) -> str:
        return self.config.repository_id

    @property
    def is_caching(self) -> bool:
        return False

    @property
    @abstractmethod
    def hard_object_size_limit(self) -> int:
        """The database's largest object in bytes (``INT_MAX`` when it has no practical limit)."""

    @property
    def effective_incremental_index_size_limit(self) -> int:
        return min(self.config.max_incremental_index_size, self.hard_object_size_limit // 2)

    @property
    def effective_index_segment_size_limit(self) -> int:
        return min(self.config.max_serialized_index_size, self.hard_object_size_limit // 2)

    # --- object primitives -----------------------------------------------------------------------

    @abstractmethod
    def fetch_typed_objs_if_exist(
        self, ids: Sequence[ObjId | None], obj_type: ObjType | None
    ) -> list[Obj | None]:
        """The one bulk read: results in input order; None for a None id, a missing object, the
        empty id, or an object of another type than ``obj_type`` (None accepts every type)."""

    @abstractmethod
    def store_objs(
        self, objs: Sequence[Obj | None], ignore_soft_size_restrictions: bool = False
    ) -> list[bool]:
        """Insert-if-absent, positionally: True if newly written, False if the id existed (its
        ``referenced`` is refreshed, its content kept) or the element was None. Size limits are
        checked for every object before anything is written."""

    @abstractmethod
    def upsert_objs(self, objs: Sequence[Obj | None]) -> None:
        """Insert or overwrite (maintenance only: the object's meaning must not change)."""

    @abstractmethod
    def delete_objs(self, ids: Sequence[ObjId | None]) -> None: ...

    @abstractmethod
    def delete_with_referenced(self, obj: Obj) -> bool:
        """Delete only if the stored ``referenced`` equals ``obj.referenced`` (safe for GC)."""

    @abstractmethod
    def update_conditional(self, expected: Obj, new: Obj) -> bool:
        """Replace an updateable object if it is stored with ``expected``'s type and version token."""

    @abstractmethod
    def delete_conditional(self, obj: Obj) -> bool:
        """Delete an updateable object if it is stored with ``obj``'s type and version token."""

    @abstractmethod
    def scan_all_objects(self, types: Collection[ObjType] | None = None) -> Generator[Obj, None, None]:
        """Every object of this repository (an empty or None type set means all), in no order.
        Close the generator (``contextlib.closing``) when not reading to the end."""

    @abstractmethod
    def erase(self) -> None:
        """Delete every reference and object of this repository."""

    # --- reference primitives --------------------------------------------------------------------

    @abstractmethod
    def add_reference(self, ref: Reference) -> Reference:
        """Insert a new row; ``RefAlreadyExists`` (carrying the stored row) if the name is taken."""

    @abstractmethod
    def mark_reference_as_deleted(self, ref: Reference) -> Reference:
        """Set ``deleted`` if the stored row equals ``ref`` and is not deleted.
        ``RefNotFound`` without a row, ``RefConditionFailed`` (carrying the stored row) otherwise."""

    @abstractmethod
    def purge_reference(self, ref: Reference) -> None:
        """Delete the row if it is marked deleted and otherwise equals ``ref``."""

    @abstractmethod
    def update_reference_pointer(self, ref: Reference, new_pointer: ObjId) -> Reference:
        """Move a non-deleted row that equals ``ref`` to ``new_pointer``; returns the new row.
        Never creates a row. Moving to the current pointer is a legal no-op."""

    @abstractmethod
    def fetch_references(self, names: Sequence[str | None]) -> list[Reference | None]:
        """Rows for the names, positionally; deleted-marked rows are returned too."""

    def store_objs_and_update_reference(
        self, objs: Sequence[Obj], ref: Reference, new_pointer: ObjId
    ) -> StoredAndMoved:
        """:meth:`store_objs`, then :meth:`update_reference_pointer` (raising as it does, the objects
        then stored and unreferenced), in one round trip where the database allows it. The
        reference is moved only when this call wrote the object ``new_pointer`` (one of ``objs``);
        when that object existed already nothing is moved (``moved`` is None). ``ObjTooLarge``
        comes before anything is written. This default is the two calls; :class:`AdapterPersist`
        hands them to the adapter as one (``BackendAdapter.insert_objs_and_update_ref``)."""
        stored = self.store_objs(objs)
        target = next((i for i, o in enumerate(objs) if o.id == new_pointer), None)
        if target is None:
            raise InputError(f"The new pointer {new_pointer} must be one of the objects stored with it")
        if not stored[target]:
            return StoredAndMoved(stored, None)
        return StoredAndMoved(stored, self.update_reference_pointer(ref, new_pointer))

    # --- derived reads ---------------------------------------------------------------------------

    def fetch_references_for_update(self, names: Sequence[str | None]) -> list[Reference | None]:
        """Like :meth:`fetch_references` but always from the database (matters only when caching)."""
        return self.fetch_references(names)

    def fetch_reference(self, name: str) -> Reference | None:
        return self.fetch_references([name])[0]

    def fetch_reference_for_update(self, name: str) -> Reference | None:
        return self.fetch_references_for_update([name])[0]

    def fetch_existing_reference(self, name: str) -> Reference:
        ref = self.fetch_reference(name)
        if ref is None:
            raise RefNotFound(name)
        return ref

    def fetch_objs_if_exist(self, ids: Sequence[ObjId | None]) -> list[Obj | None]:
        return self.fetch_typed_objs_if_exist(ids, None)

    def fetch_typed_objs(self, ids: Sequence[ObjId | None], obj_type: ObjType | None) -> list[Obj | None]:
        """Like the primitive, but ``ObjNotFound`` naming every requested id that is missing."""
        found = self.fetch_typed_objs_if_exist(ids, obj_type)
        missing = [i for i, o in zip(ids, found, strict=True) if i is not None and o is None]
        if missing:
            raise ObjNotFound(missing)
        return found

    def fetch_objs(self, ids: Sequence[ObjId | None]) -> list[Obj | None]:
        return self.fetch_typed_objs(ids, None)

    def fetch_typed_obj(self, obj_id: ObjId, obj_type: ObjType | None) -> Obj:
        found = self.fetch_typed_objs([obj_id], obj_type)[0]
        assert found is not None  # fetch_typed_objs raised otherwise
        return found

    def fetch_obj(self, obj_id: ObjId) -> Obj:
        return self.fetch_typed_obj(obj_id, None)

    def fetch_obj_type(self, obj_id: ObjId) -> ObjType:
        return self.fetch_obj(obj_id).obj_type

    def fetch_as(self, obj_id: ObjId, cls: type[T]) -> T:
        """Typed single read: the object, or ``ObjNotFound`` if missing or of another type."""
        found = self.fetch_typed_obj(obj_id, cls.TYPE)
        if not isinstance(found, cls):
            raise ObjNotFound([obj_id])
        return found

    def fetch_all_as(self, ids: Sequence[ObjId | None], cls: type[T]) -> list[T | None]:
        """Typed bulk read raising ``ObjNotFound`` for every missing id."""
        return [o if isinstance(o, cls) else None for o in self.fetch_typed_objs(ids, cls.TYPE)]

    def fetch_all_if_exist_as(self, ids: Sequence[ObjId | None], cls: type[T]) -> list[T | None]:
        return [o if isinstance(o, cls) else None for o in self.fetch_typed_objs_if_exist(ids, cls.TYPE)]

    def get_immediate(self, obj_id: ObjId) -> Obj | None:
        """The object if a cache holds it; a non-caching Persist always answers None."""
        return None

    # --- derived writes --------------------------------------------------------------------------

    def store_obj(self, obj: Obj, ignore_soft_size_restrictions: bool = False) -> bool:
        return self.store_objs([obj], ignore_soft_size_restrictions)[0]

    def upsert_obj(self, obj: Obj) -> None:
        self.upsert_objs([obj])

    def delete_obj(self, obj_id: ObjId) -> None:
        self.delete_objs([obj_id])


def is_fetchable(obj_id: ObjId | None) -> bool:
    """The empty id is never stored, so asking for it is always a miss."""
    return obj_id is not None and obj_id != EMPTY_OBJ_ID
