"""The index interface shared by every variant, and the range rules they all follow."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator

from persist_spi.errors import InputError
from persist_spi.ids import ObjId
from persist_spi.indexes.elements import CommitOp, IndexElement
from persist_spi.keys import StoreKey, key_less, key_order, orders_by_code_point

#: ``update_all`` callback: same op (keep), another op (replace) or None (remove).
Updater = Callable[[IndexElement], CommitOp | None]


class StoreIndex(ABC):
    """A sorted map from store keys to commit operations.

    ``get`` returns tombstones (REMOVE / INCREMENTAL_REMOVE) as they are, so callers that want
    live keys must check ``op.exists``.

    Ranges (:meth:`iterate`): no bounds means everything; ``begin == end`` is a *prefix scan* (keys
    whose raw string starts with ``begin``); otherwise ``begin`` is inclusive and iteration stops at
    the first key above ``end`` (so ``end`` is inclusive on an exact match).
    """

    obj_id: ObjId | None = None

    @abstractmethod
    def get(self, key: StoreKey) -> IndexElement | None: ...

    def contains(self, key: StoreKey) -> bool:
        return self.get(key) is not None

    @abstractmethod
    def first(self) -> StoreKey | None: ...

    @abstractmethod
    def last(self) -> StoreKey | None: ...

    @abstractmethod
    def iterate(
        self, begin: StoreKey | None = None, end: StoreKey | None = None, prefetch: bool = False
    ) -> Iterator[IndexElement]: ...

    def __iter__(self) -> Iterator[IndexElement]:
        return self.iterate()

    @abstractmethod
    def element_count(self) -> int: ...

    def keys(self) -> list[StoreKey]:
        return [e.key for e in self.iterate()]

    def load_if_necessary(self, keys: Iterable[StoreKey]) -> None:  # noqa: B027 (no-op for loaded indexes)
        """Bulk-load whatever parts of the index could hold ``keys`` (one fetch for striped ones)."""

    @property
    def is_loaded(self) -> bool:
        return True

    @property
    def is_modified(self) -> bool:
        return False

    def stripes(self) -> list[StoreIndex]:
        return [self]

    @abstractmethod
    def estimated_serialized_size(self) -> int: ...

    # --- mutation (plain and striped indexes only) -----------------------------------------------

    def add(self, element: IndexElement) -> bool:
        """Insert or replace; True if the key was new."""
        raise TypeError(f"{type(self).__name__} is read-only")

    def remove(self, key: StoreKey) -> bool:
        raise TypeError(f"{type(self).__name__} is read-only")

    def update_all(self, updater: Updater) -> None:
        raise TypeError(f"{type(self).__name__} is read-only")

    def serialize(self) -> bytes:
        raise TypeError(f"{type(self).__name__} cannot be serialised as one piece")


def check_range(begin: StoreKey | None, end: StoreKey | None) -> None:
    if begin is not None and end is not None and key_less(end, begin):
        raise InputError(f"Range begin {begin!r} is after end {end!r}")


def in_range_filter(
    elements: Iterable[IndexElement], begin: StoreKey | None, end: StoreKey | None
) -> Iterator[IndexElement]:
    """Apply the end/prefix rule to elements already positioned at ``begin``."""
    if end is None:
        yield from elements
        return
    if begin is not None and begin == end:
        for element in elements:
            if not element.key.startswith(begin):
                return
            yield element
        return
    if orders_by_code_point(end):  # the usual case: plain comparison is exact, and cheaper
        for element in elements:
            if element.key > end:
                return
            yield element
        return
    end_order = key_order(end)
    for element in elements:
        if key_order(element.key) > end_order:
            return
        yield element
