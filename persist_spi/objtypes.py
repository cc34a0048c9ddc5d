"""Object types: their names, persisted type codes, classes and cache policies, and the registry;
and :class:`Obj`, the base class of every object, which names its type as its type names it.

A type has two names. ``name`` (``COMMIT``) starts the hash stream of ids derived for it; the
``short_name`` (``c``) is the type code stored beside each object. Both must be unique across all
registered types, standard and custom.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from importlib.metadata import entry_points
from typing import ClassVar, Final, Self, TypeVar

from persist_spi.errors import InputError
from persist_spi.ids import ObjId

#: Cache-policy answers, in microseconds since the epoch: keep forever, never keep, or a deadline.
CACHE_UNLIMITED: Final = -1
NOT_CACHED: Final = 0

ENTRY_POINT_GROUP: Final = "lochkit.obj_types"


def _cache_forever(obj: Obj, now_micros: int) -> int:
    return CACHE_UNLIMITED


def _never_negative_cache(now_micros: int) -> int:
    return NOT_CACHED


@dataclass(frozen=True, slots=True)
class ObjType:
    name: str
    short_name: str
    cls: type[Obj] = field(compare=False)
    #: When a cached instance expires: CACHE_UNLIMITED, NOT_CACHED or an absolute deadline (µs).
    cached_object_expires_at: Callable[[Obj, int], int] = field(default=_cache_forever, compare=False)
    #: When a cached "does not exist" answer expires; standard types never cache misses.
    negative_cache_expires_at: Callable[[int], int] = field(default=_never_negative_cache, compare=False)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True, kw_only=True)
class Obj:
    """Base of every stored object."""

    TYPE: ClassVar[ObjType]

    id: ObjId
    #: µs timestamp of the last write, set by the backend; 0 when unknown. Not part of equality.
    referenced: int = field(default=0, compare=False)

    @property
    def obj_type(self) -> ObjType:
        return type(self).TYPE

    def with_referenced(self, referenced: int) -> Self:
        return replace(self, referenced=referenced)


class ObjTypeRegistry:
    """All known object types, looked up by name or by persisted short name."""

    def __init__(self) -> None:
        self._by_name: dict[str, ObjType] = {}
        self._by_short: dict[str, ObjType] = {}
        self._lock = threading.Lock()
        self._entry_points_loaded = False

    def register(self, obj_type: ObjType) -> ObjType:
        with self._lock:
            existing = self._by_name.get(obj_type.name)
            if existing is not None and existing.cls is obj_type.cls and existing == obj_type:
                return existing  # re-importing a module registers the same type again
            taken = {
                self._by_name.get(obj_type.name),
                self._by_short.get(obj_type.name),
                self._by_name.get(obj_type.short_name),
                self._by_short.get(obj_type.short_name),
            }
            taken.discard(None)
            if taken:
                clash = ", ".join(f"{t.name}/{t.short_name}" for t in taken if t is not None)
                raise InputError(
                    f"Object type {obj_type.name}/{obj_type.short_name} clashes with the registered "
                    f"type(s) {clash}; names and short names must be unique across all types"
                )
            self._by_name[obj_type.name] = obj_type
            self._by_short[obj_type.short_name] = obj_type
            return obj_type

    def by_name(self, name: str) -> ObjType | None:
        self._load_entry_points()
        return self._by_name.get(name)

    def by_short_name(self, short_name: str) -> ObjType | None:
        found = self._by_short.get(short_name)
        if found is None and not self._entry_points_loaded:
            self._load_entry_points()
            found = self._by_short.get(short_name)
        return found

    def __iter__(self) -> Iterator[ObjType]:
        self._load_entry_points()
        return iter(list(self._by_name.values()))

    def _load_entry_points(self) -> None:
        """Import modules that third parties registered under the ``lochkit.obj_types`` group."""
        if self._entry_points_loaded:
            return
        self._entry_points_loaded = True
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            ep.load()  # importing the module registers its types


OBJ_TYPES: Final = ObjTypeRegistry()

ObjClass = TypeVar("ObjClass", bound="type[Obj]")


def register_obj_type(
    name: str,
    short_name: str,
    *,
    cached_object_expires_at: Callable[[Obj, int], int] = _cache_forever,
    negative_cache_expires_at: Callable[[int], int] = _never_negative_cache,
) -> Callable[[ObjClass], ObjClass]:
    """Class decorator: register an :class:`~persist_spi.objs.Obj` dataclass as an object type."""

    def decorate(cls: ObjClass) -> ObjClass:
        obj_type = OBJ_TYPES.register(
            ObjType(name, short_name, cls, cached_object_expires_at, negative_cache_expires_at)
        )
        cls.TYPE = obj_type
        return cls

    return decorate
