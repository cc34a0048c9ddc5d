"""Rows for tests that call a :class:`~persist_spi.adapter.BackendAdapter` directly: real objects
serialised the way the core does, and reference rows with history."""

from __future__ import annotations

from persist_spi.adapter import ObjRow, RefRow
from persist_spi.ids import random_obj_id
from persist_spi.layouts import LOCHKIT_LAYOUT, StorageLayout
from persist_spi.objs import Obj, tag_obj
from persist_spi.references import PreviousPointer


def obj_row(obj: Obj, referenced: int = 1, layout: StorageLayout = LOCHKIT_LAYOUT) -> ObjRow:
    encoded = layout.codec.encode(obj)
    return ObjRow(bytes(obj.id), encoded.type_short_name, encoded.version_token, encoded.data, referenced)


def with_other_data(row: ObjRow, label: str, layout: StorageLayout = LOCHKIT_LAYOUT) -> ObjRow:
    """``row`` with other bytes of the same type (a tag's), valid in ``layout``: Nessie's RocksDB
    layout keeps an object's type only inside its bytes, so arbitrary bytes cannot be stored there."""
    return row._replace(data=layout.codec.encode(tag_obj(label)).data)


def tag_rows(count: int, label: str = "t", layout: StorageLayout = LOCHKIT_LAYOUT) -> list[ObjRow]:
    return [obj_row(tag_obj(f"{label} {i}"), 1000 + i, layout) for i in range(count)]


def ref_row(
    name: str,
    *,
    extended_info: bytes | None = None,
    created: int = 7,
    history: int = 0,
    layout: StorageLayout = LOCHKIT_LAYOUT,
) -> RefRow:
    previous = tuple(PreviousPointer(random_obj_id(), 100 + i) for i in range(history))
    return RefRow(
        name, bytes(random_obj_id()), False, created, extended_info, layout.encode_history(previous)
    )
