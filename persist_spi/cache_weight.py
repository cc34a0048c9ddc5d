"""Weighing cache entries, and deciding whether one instance may serve every cache hit.

An object may be shared between callers only if nothing reachable from it can change: a frozen
dataclass whose field values are themselves immutable (strings, bytes, numbers, enums, tuples
and frozensets of immutable values, :class:`~persist_spi.headers.CommitHeaders`, nested frozen
dataclasses). Anything else (a dict, a list, a ``bytearray``, an unknown class) disqualifies it.

The same walk estimates the serialised size (about what the codec writes: payload bytes plus a
byte or so per value), so shareable objects are weighed without being encoded.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from typing import Any, Final

from persist_spi.headers import CommitHeaders
from persist_spi.ids import ObjId
from persist_spi.objs import CommitObj, CommitType, ContentValueObj

#: Returned by :func:`frozen_size` for values that can change after the fact.
MUTABLE: Final = -1

_SCALAR_SIZE: Final = 9  # an int, float, bool or None: at most a tag and eight bytes
_SIZED: Final[frozenset[type]] = frozenset({bytes, str, ObjId})
_LEAVES: Final[frozenset[type]] = _SIZED | {int, float, bool, type(None)}
_frozen_fields: dict[type, tuple[str, ...] | None] = {}


def frozen_size(value: Any) -> int:
    """About how many bytes ``value`` serialises to, or :data:`MUTABLE` if it is not deeply
    immutable (and so must not be shared between callers)."""
    cls = type(value)
    fast = _FAST_WEIGHERS.get(cls)
    if fast is not None:
        size = fast(value)
        if size is not None:
            return size
    if cls in _LEAVES:
        return len(value) + 1 if cls in _SIZED else _SCALAR_SIZE
    if cls is tuple or cls is frozenset:
        if _SIZED.issuperset(map(type, value)):  # the common case, checked in C: a tuple of ids
            return 1 + len(value) + sum(map(len, value))
        total = 1
        for item in value:
            item_cls = type(item)
            if item_cls in _SIZED:  # the common case: a tuple of ids
                total += len(item) + 1
                continue
            size = frozen_size(item)
            if size < 0:
                return MUTABLE
            total += size
        return total
    if cls is CommitHeaders:
        return 1 + sum(len(name) + len(v) + 2 for name, v in value.pairs())
    names = _fields_if_frozen(cls)
    if names is None:
        # Subclasses of the leaf types (a str NewType is plain str; an IntEnum member is not).
        if isinstance(value, (bytes, str)):
            return len(value) + 1
        if isinstance(value, (int, float, enum.Enum)):
            return _SCALAR_SIZE
        return MUTABLE
    total = 1
    for name in names:
        field_value = getattr(value, name)
        field_cls = type(field_value)
        if field_cls in _LEAVES:
            total += len(field_value) + 1 if field_cls in _SIZED else _SCALAR_SIZE
            continue
        size = frozen_size(field_value)
        if size < 0:
            return MUTABLE
        total += size
    return total


def _fields_if_frozen(cls: type) -> tuple[str, ...] | None:
    """The field names of a frozen dataclass; None for any other class."""
    try:
        return _frozen_fields[cls]
    except KeyError:
        pass
    params = getattr(cls, "__dataclass_params__", None)
    names = tuple(f.name for f in dataclasses.fields(cls)) if params is not None and params.frozen else None
    _frozen_fields[cls] = names  # a benign race: every thread computes the same answer
    return names


# --- the objects every commit stores, weighed without the generic walk -----------------------------
# Same figures as the walk above; None (fall back to the walk) unless every field has the type a
# standard object is built with, so a caller's odd list or bytearray is still caught there.


def _ids_size(ids: Any) -> int | None:
    if type(ids) is not tuple:
        return None
    # One loop, not a set of the items' types and a sum: compiled, it is several times cheaper
    # for the tail of ids every commit carries.
    total = 1 + len(ids)
    for item in ids:
        if type(item) not in _SIZED:
            return None
        total += len(item)
    return total


def _commit_size(c: CommitObj) -> int | None:
    tail, parents = _ids_size(c.tail), _ids_size(c.secondary_parents)
    headers, index, message, ref = c.headers, c.incremental_index, c.message, c.reference_index
    if (
        tail is None
        or parents is None
        or c.reference_index_stripes != ()
        or type(headers) is not CommitHeaders
        or type(index) is not bytes
        or type(message) is not str
        or type(c.id) is not ObjId
        or (ref is not None and type(ref) is not ObjId)
        or type(c.commit_type) is not CommitType
    ):
        return None
    return (
        1  # the object
        + len(c.id) + 1
        + 3 * _SCALAR_SIZE  # referenced, created, seq
        + tail
        + parents
        + 1 + headers.pairs_size()
        + len(message) + 1
        + len(index) + 1
        + (_SCALAR_SIZE if ref is None else len(ref) + 1)
        + 1  # no stripes
        + 2 * _SCALAR_SIZE  # incomplete_index, commit_type
    )  # fmt: skip


def _value_size(v: ContentValueObj) -> int | None:
    if type(v.id) is not ObjId or type(v.content_id) is not str or type(v.data) is not bytes:
        return None
    return 1 + len(v.id) + 1 + _SCALAR_SIZE + len(v.content_id) + 1 + _SCALAR_SIZE + len(v.data) + 1


_FAST_WEIGHERS: Final[dict[type, Callable[[Any], int | None]]] = {
    CommitObj: _commit_size,
    ContentValueObj: _value_size,
}
