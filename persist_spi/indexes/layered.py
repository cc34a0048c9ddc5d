"""A read-only view of an incremental index laid over a reference index."""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator

from persist_spi.indexes.base import StoreIndex, check_range
from persist_spi.indexes.elements import IndexElement
from persist_spi.keys import StoreKey, key_order


class LayeredIndex(StoreIndex):
    """``updates`` wins over ``reference`` for equal keys. Tombstones in ``updates`` are returned as
    they are (they hide the reference element; callers check ``op.exists``)."""

    def __init__(self, reference: StoreIndex, updates: StoreIndex) -> None:
        self.reference = reference
        self.updates = updates

    def get(self, key: StoreKey) -> IndexElement | None:
        found = self.updates.get(key)
        return found if found is not None else self.reference.get(key)

    def contains(self, key: StoreKey) -> bool:
        return self.updates.contains(key) or self.reference.contains(key)

    def first(self) -> StoreKey | None:
        candidates = [k for k in (self.reference.first(), self.updates.first()) if k is not None]
        return min(candidates, key=key_order) if candidates else None

    def last(self) -> StoreKey | None:
        candidates = [k for k in (self.reference.last(), self.updates.last()) if k is not None]
        return max(candidates, key=key_order) if candidates else None

    def iterate(
        self, begin: StoreKey | None = None, end: StoreKey | None = None, prefetch: bool = False
    ) -> Iterator[IndexElement]:
        check_range(begin, end)
        # Tag each stream so that on equal keys the updates element sorts first and wins.
        upd = ((key_order(e.key), 0, e) for e in self.updates.iterate(begin, end, prefetch))
        ref = ((key_order(e.key), 1, e) for e in self.reference.iterate(begin, end, prefetch))
        previous: str | None = None
        for key, _, element in heapq.merge(upd, ref):
            if key == previous:
                continue
            previous = key
            yield element

    def element_count(self) -> int:
        return sum(1 for _ in self.iterate())

    def load_if_necessary(self, keys: Iterable[StoreKey]) -> None:
        wanted = list(keys)
        self.reference.load_if_necessary(wanted)
        self.updates.load_if_necessary(wanted)

    @property
    def is_loaded(self) -> bool:
        return self.reference.is_loaded or self.updates.is_loaded

    def estimated_serialized_size(self) -> int:
        return self.reference.estimated_serialized_size() + self.updates.estimated_serialized_size()
