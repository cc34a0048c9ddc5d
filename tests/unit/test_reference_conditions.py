"""The expected row of a reference's compare-and-swap carries the reference's history, encoded by
the adapter's layout: an adapter that compares the whole stored reference (Nessie's Bigtable store
compares its serialized ReferenceProto, history included) needs it; the others ignore it
(``RefRow.same_condition``)."""

from __future__ import annotations

import pytest

from backends.inmemory.adapter import InMemoryAdapter
from persist_spi.adapter import RefRow
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.ids import ObjId
from persist_spi.layouts import LOCHKIT_LAYOUT, NESSIE_LAYOUT, StorageLayout
from persist_spi.references import Reference


class RecordingAdapter(InMemoryAdapter):
    def __init__(self, layout: StorageLayout) -> None:
        super().__init__(layout=layout)
        self.expected: list[RefRow] = []

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        self.expected.append(expected)
        return super().update_ref(repo, expected, new)

    def delete_ref(self, repo: str, expected: RefRow) -> bool:
        self.expected.append(expected)
        return super().delete_ref(repo, expected)


@pytest.mark.parametrize("layout", [LOCHKIT_LAYOUT, NESSIE_LAYOUT], ids=lambda layout: layout.name)
def test_every_reference_condition_holds_the_history_the_caller_holds(layout: StorageLayout) -> None:
    adapter = RecordingAdapter(layout)
    persist = AdapterPersist(adapter)
    ref = persist.add_reference(Reference("refs/heads/main", ObjId(b"\x01" * 32), False, 5, None, ()))
    for pointer in (b"\x02", b"\x03"):
        ref = persist.update_reference_pointer(ref, ObjId(pointer * 32))
    assert len(ref.previous_pointers) == 2
    deleted = persist.mark_reference_as_deleted(ref)
    persist.purge_reference(deleted)

    stored_history = layout.encode_history(ref.previous_pointers)
    assert [row.previous_pointers for row in adapter.expected[2:]] == [stored_history, stored_history]
    # Each update's condition is the reference as stored before it, history included.
    assert adapter.expected[1].previous_pointers == layout.encode_history(ref.previous_pointers[1:])
    assert adapter.expected[0].previous_pointers == layout.encode_history(())
