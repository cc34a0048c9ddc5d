"""The in-memory store keeps the objects the core writes as themselves, not as bytes.

What must hold: a kept object reads back exactly as its row would (in both layouts, every field,
``referenced`` included); the row methods still answer the codec's bytes; objects that are not
safe to keep (updateable, custom) stay rows; and an adapter subclass that changes how rows are
stored or read, or a Persist given its own codec, gets rows only.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from typing import Any

import pytest

from backends.inmemory.adapter import InMemoryAdapter
from conformance.samples import all_samples, standard_samples
from persist_spi.adapter import ObjRow
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.clock import Clock
from persist_spi.codec import DEFAULT_CODEC
from persist_spi.config import StoreConfig
from persist_spi.layouts import LOCHKIT_LAYOUT, NESSIE_LAYOUT, StorageLayout
from persist_spi.live_objects import LIVE_OBJ_TYPES, LiveObjRow, as_row
from persist_spi.objs import Obj, tag_obj
from persist_spi.references import Reference

LAYOUTS = pytest.mark.parametrize("layout", [LOCHKIT_LAYOUT, NESSIE_LAYOUT], ids=lambda lay: lay.name)


class RowsOnly(InMemoryAdapter):
    """Stores rows as the plain store does, but overrides a row method: the core must send rows."""

    def insert_objs(self, repo: str, rows: Sequence[ObjRow]) -> list[bool]:
        assert all(isinstance(r, ObjRow) for r in rows), "a row-recording subclass was sent a live object"
        return super().insert_objs(repo, rows)


class SteppingClock:
    def __init__(self) -> None:
        self.now = 1_000

    def micros(self) -> int:
        self.now += 1
        return self.now


def _persist(adapter: InMemoryAdapter, clock: Clock | None = None) -> AdapterPersist:
    if clock is None:
        return AdapterPersist(adapter, StoreConfig())
    return AdapterPersist(adapter, StoreConfig(), clock=clock)


def _every_field(obj: Obj) -> dict[str, Any]:
    """All fields, those left out of equality (``created``) too."""
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


def _standard(layout: StorageLayout) -> list[Obj]:
    """The standard samples (every kept type is among them)."""
    return standard_samples(random.Random(7))


@LAYOUTS
def test_kept_objects_read_back_exactly_as_their_rows_would(layout: StorageLayout) -> None:
    live, rows = InMemoryAdapter("live", layout), RowsOnly("rows", layout)
    clock_live, clock_rows = SteppingClock(), SteppingClock()
    samples = _standard(layout)
    assert _persist(live, clock_live).store_objs(samples) == [True] * len(samples)
    assert _persist(rows, clock_rows).store_objs(samples) == [True] * len(samples)
    ids = [s.id for s in samples]
    from_live = _persist(live).fetch_objs(ids)
    from_rows = _persist(rows).fetch_objs(ids)
    for kept, decoded in zip(from_live, from_rows, strict=True):
        assert kept is not None
        assert decoded is not None
        assert type(kept) is type(decoded)
        assert _every_field(kept) == _every_field(decoded)


@LAYOUTS
def test_the_row_methods_answer_the_codecs_bytes(layout: StorageLayout) -> None:
    adapter = InMemoryAdapter("bytes", layout)
    samples = _standard(layout)
    _persist(adapter, SteppingClock()).store_objs(samples)
    kept = [adapter._objs[("", bytes(s.id))] for s in samples]
    assert all(isinstance(k, LiveObjRow) for k in kept)
    fetched = adapter.fetch_objs("", [bytes(s.id) for s in samples])
    scanned = {r.obj_id: r for r in adapter.scan_objs("", None)}
    for sample, row, entry in zip(samples, fetched, kept, strict=True):
        encoded = layout.codec.encode(sample)
        expected = ObjRow(bytes(sample.id), encoded.type_short_name, None, encoded.data, entry.referenced)
        assert row == expected
        assert scanned[bytes(sample.id)] == expected


@LAYOUTS
def test_each_kept_type_carries_the_short_name_and_no_token_its_row_has(layout: StorageLayout) -> None:
    seen = set()
    for sample in _standard(layout):
        name = LIVE_OBJ_TYPES.get(type(sample))
        if name is None:
            continue
        seen.add(type(sample))
        encoded = layout.codec.encode(sample)
        assert (name, None) == (encoded.type_short_name, encoded.version_token)
    assert seen == set(LIVE_OBJ_TYPES), "a kept type has no sample: add one to conformance/samples.py"


def test_objects_that_are_not_safe_to_keep_stay_rows() -> None:
    adapter = InMemoryAdapter("mixed")
    samples = all_samples()
    _persist(adapter).store_objs(samples)
    for sample in samples:
        entry = adapter._objs[("", bytes(sample.id))]
        assert isinstance(entry, LiveObjRow) == (type(sample) in LIVE_OBJ_TYPES), sample
    assert any(isinstance(adapter._objs[("", bytes(s.id))], ObjRow) for s in samples)
    fetched = _persist(adapter).fetch_objs([s.id for s in samples])
    assert fetched == samples


def test_a_second_write_refreshes_referenced_and_the_object_reads_back_with_it() -> None:
    adapter, clock = InMemoryAdapter("again"), SteppingClock()
    obj = tag_obj("twice")
    persist = _persist(adapter, clock)
    assert persist.store_objs([obj]) == [True]
    first = persist.fetch_obj(obj.id).referenced
    assert persist.store_objs([obj]) == [False]
    second = persist.fetch_obj(obj.id)
    assert second.referenced > first
    assert second == obj
    assert adapter.fetch_objs("", [bytes(obj.id)])[0] == as_row(
        adapter._objs[("", bytes(obj.id))], DEFAULT_CODEC
    )
    assert persist.delete_with_referenced(second) is True
    assert persist.fetch_typed_objs_if_exist([obj.id], None) == [None]


def test_a_row_written_by_the_row_methods_is_read_through_the_core() -> None:
    adapter = InMemoryAdapter("row-first")
    obj = tag_obj("as a row")
    encoded = DEFAULT_CODEC.encode(obj)
    adapter.insert_objs("", [ObjRow(bytes(obj.id), encoded.type_short_name, None, encoded.data, 5)])
    fetched = _persist(adapter).fetch_obj(obj.id)
    assert fetched == obj
    assert fetched.referenced == 5
    assert _persist(adapter).store_objs([obj]) == [False]
    assert isinstance(adapter._objs[("", bytes(obj.id))], ObjRow)


def test_a_subclass_that_changes_rows_and_a_persist_with_its_own_codec_get_rows() -> None:
    assert InMemoryAdapter().takes_live_objects
    assert not RowsOnly().takes_live_objects
    rows_only = RowsOnly("sub")
    obj = tag_obj("row please")
    _persist(rows_only).store_objs([obj])
    assert isinstance(rows_only._objs[("", bytes(obj.id))], ObjRow)
    plain = InMemoryAdapter("codec")
    AdapterPersist(plain, StoreConfig(), codec=DEFAULT_CODEC).store_objs([obj])
    assert isinstance(plain._objs[("", bytes(obj.id))], ObjRow)


def test_storing_with_the_swap_keeps_the_objects_and_moves_the_branch_once() -> None:
    adapter = InMemoryAdapter("swap")
    persist = _persist(adapter)
    head = tag_obj("head")
    persist.store_objs([head])
    branch = persist.add_reference(Reference("refs/heads/main", head.id, created_at_micros=1))
    value, commit = tag_obj("value"), tag_obj("commit")
    moved = persist.store_objs_and_update_reference([value, commit], branch, commit.id)
    assert moved.stored == [True, True]
    assert moved.moved is not None
    assert moved.moved.pointer == commit.id
    assert all(isinstance(adapter._objs[("", bytes(o.id))], LiveObjRow) for o in (value, commit))
    # The same objects again with the (now stale) reference: nothing new, so no swap is tried.
    again = persist.store_objs_and_update_reference([value, commit], branch, commit.id)
    assert again.stored == [False, False]
    assert again.moved is None
    assert persist.fetch_reference("refs/heads/main") == moved.moved
