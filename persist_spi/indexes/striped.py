"""An index split into stripes (usually lazily loaded segments) by key range."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import overload

from persist_spi.indexes.base import StoreIndex, Updater, check_range, in_range_filter
from persist_spi.indexes.elements import IndexElement
from persist_spi.indexes.lazy import LazyIndex
from persist_spi.keys import StoreKey, bisect_keys, key_less

#: Loads several lazy stripes at once (one database round trip); returns them in the same order.
BulkLoader = Callable[[Sequence[LazyIndex]], Sequence[StoreIndex]]


class LazyStripes(Sequence[StoreIndex]):
    """Stripes that come into being on first use. A commit reads one or two stripes of a reference
    index that may have hundreds; making a wrapper for every stripe on every commit would make
    commit cost grow with the number of keys."""

    def __init__(self, count: int, make: Callable[[int], StoreIndex]) -> None:
        self._count = count
        self._make = make
        self._made: dict[int, StoreIndex] = {}

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, i: int) -> StoreIndex: ...

    @overload
    def __getitem__(self, i: slice) -> list[StoreIndex]: ...

    def __getitem__(self, i: int | slice) -> StoreIndex | list[StoreIndex]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._count))]
        if i < 0:
            i += self._count
        if not 0 <= i < self._count:
            raise IndexError(i)
        made = self._made.get(i)
        if made is None:
            made = self._made[i] = self._make(i)
        return made

    def made(self) -> Iterable[StoreIndex]:
        """The stripes used so far; the others are neither loaded nor modified."""
        return self._made.values()


class StripedIndex(StoreIndex):
    """Stripes hold disjoint, ascending key ranges.

    Lookups binary-search the stripes' first/last keys, so a key outside every range is answered
    "absent" without loading anything. Writes go to the stripe whose last key is the first at or
    after the key (keys between two stripes go to the later one; keys after the end go to the last).
    """

    def __init__(
        self,
        stripes: Sequence[StoreIndex],
        first_last: Sequence[StoreKey] | None = None,
        bulk_loader: BulkLoader | None = None,
    ) -> None:
        if len(stripes) < 1:
            raise ValueError("A striped index needs at least one stripe")
        # LazyStripes is kept as it is (copying would make every stripe); other sequences are copied.
        self._stripes: Sequence[StoreIndex] = stripes if isinstance(stripes, LazyStripes) else list(stripes)
        self._bulk_loader = bulk_loader
        if first_last is None:
            first_last = []
            for stripe in self._stripes:
                first, last = stripe.first(), stripe.last()
                if first is None or last is None:
                    raise ValueError("Stripes of a striped index must not be empty")
                first_last += [first, last]
        if len(first_last) != 2 * len(self._stripes):
            raise ValueError("A striped index needs a first and a last key per stripe")
        self._firsts = list(first_last[0::2])
        self._lasts = list(first_last[1::2])

    # --- locating stripes ------------------------------------------------------------------------

    def _stripe_holding(self, key: StoreKey) -> int:
        """Index of the stripe whose range contains ``key``, or -1."""
        i = bisect_keys(self._firsts, key, right=True) - 1
        if i < 0 or key_less(self._lasts[i], key):
            return -1
        return i

    def _stripe_for_write(self, key: StoreKey) -> int:
        return min(bisect_keys(self._lasts, key), len(self._stripes) - 1)

    def _refresh_bounds(self, i: int) -> None:
        stripe = self._stripes[i]
        first, last = stripe.first(), stripe.last()
        if first is None or last is None:
            # An emptied stripe keeps a degenerate range at its neighbour's edge, so the bound
            # arrays stay sorted; spilling drops it when the index is persisted.
            edge = self._lasts[i - 1] if i > 0 else (self._firsts[i + 1] if i + 1 < len(self._firsts) else "")
            self._firsts[i] = self._lasts[i] = StoreKey(edge)
        else:
            self._firsts[i], self._lasts[i] = first, last

    # --- reads -----------------------------------------------------------------------------------

    def get(self, key: StoreKey) -> IndexElement | None:
        i = self._stripe_holding(key)
        return None if i < 0 else self._stripes[i].get(key)

    def contains(self, key: StoreKey) -> bool:
        i = self._stripe_holding(key)
        return i >= 0 and self._stripes[i].contains(key)

    def first(self) -> StoreKey | None:
        for stripe in self._stripes:
            first = stripe.first()
            if first is not None:
                return first
        return None

    def last(self) -> StoreKey | None:
        for stripe in reversed(self._stripes):
            last = stripe.last()
            if last is not None:
                return last
        return None

    def iterate(
        self, begin: StoreKey | None = None, end: StoreKey | None = None, prefetch: bool = False
    ) -> Iterator[IndexElement]:
        check_range(begin, end)
        start = 0 if begin is None else bisect_keys(self._lasts, begin)
        if prefetch:
            stop = len(self._stripes) if end is None else bisect_keys(self._firsts, end, right=True)
            self._bulk_load(self._stripes[start:stop])
        return in_range_filter(self._chain(start, begin), begin, end)

    def _chain(self, start: int, begin: StoreKey | None) -> Iterator[IndexElement]:
        for i in range(start, len(self._stripes)):
            yield from self._stripes[i].iterate(begin if i == start else None)

    def element_count(self) -> int:
        self._bulk_load(self._stripes)
        return sum(s.element_count() for s in self._stripes)

    def load_if_necessary(self, keys: Iterable[StoreKey]) -> None:
        wanted = {i for i in (self._stripe_holding(k) for k in keys) if i >= 0}
        self._bulk_load([self._stripes[i] for i in sorted(wanted)])

    def load_for_write(self, keys: Iterable[StoreKey]) -> None:
        """Bulk-load every stripe that ``add``/``remove`` of these keys will touch."""
        wanted = {self._stripe_for_write(k) for k in keys}
        self._bulk_load([self._stripes[i] for i in sorted(wanted)])

    def _bulk_load(self, stripes: Iterable[StoreIndex]) -> None:
        pending = [s for s in stripes if isinstance(s, LazyIndex) and not s.is_loaded]
        if not pending or self._bulk_loader is None:
            return
        for lazy, loaded in zip(pending, self._bulk_loader(pending), strict=True):
            lazy.set_loaded(loaded)

    def _used(self) -> Iterable[StoreIndex]:
        stripes = self._stripes
        return stripes.made() if isinstance(stripes, LazyStripes) else stripes

    @property
    def is_loaded(self) -> bool:
        return any(s.is_loaded for s in self._used())

    @property
    def is_modified(self) -> bool:
        return any(s.is_modified for s in self._used())

    def stripes(self) -> list[StoreIndex]:
        return list(self._stripes)

    def estimated_serialized_size(self) -> int:
        return sum(s.estimated_serialized_size() for s in self._stripes)

    # --- mutation --------------------------------------------------------------------------------

    def add(self, element: IndexElement) -> bool:
        i = self._stripe_for_write(element.key)
        added = self._stripes[i].add(element)
        key = element.key
        if key_less(key, self._firsts[i]):
            self._firsts[i] = key
        if key_less(self._lasts[i], key):
            self._lasts[i] = key
        return added

    def remove(self, key: StoreKey) -> bool:
        i = self._stripe_holding(key)
        if i < 0 or not self._stripes[i].remove(key):
            return False
        if key in (self._firsts[i], self._lasts[i]):
            self._refresh_bounds(i)
        return True

    def update_all(self, updater: Updater) -> None:
        for i, stripe in enumerate(self._stripes):
            stripe.update_all(updater)
            self._refresh_bounds(i)
