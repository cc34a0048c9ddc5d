"""An index loaded on first use, which can answer first/last key questions without loading."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from persist_spi.ids import ObjId
from persist_spi.indexes.base import StoreIndex, Updater
from persist_spi.indexes.elements import IndexElement
from persist_spi.keys import StoreKey


class LazyIndex(StoreIndex):
    def __init__(
        self,
        loader: Callable[[], StoreIndex],
        first_key: StoreKey | None = None,
        last_key: StoreKey | None = None,
        obj_id: ObjId | None = None,
    ) -> None:
        self._loader: Callable[[], StoreIndex] | None = loader
        self._loaded: StoreIndex | None = None
        self._first = first_key
        self._last = last_key
        self.obj_id = obj_id

    def loaded(self) -> StoreIndex:
        if self._loaded is None:
            assert self._loader is not None
            self.set_loaded(self._loader())
        assert self._loaded is not None
        return self._loaded

    def set_loaded(self, index: StoreIndex) -> None:
        """Install an index loaded elsewhere (bulk loading of several stripes in one fetch)."""
        if self.obj_id is not None and index.obj_id is None:
            index.obj_id = self.obj_id
        self._loaded = index
        self._loader = None

    @property
    def is_loaded(self) -> bool:
        return self._loaded is not None

    @property
    def is_modified(self) -> bool:
        return self._loaded is not None and self._loaded.is_modified

    def get(self, key: StoreKey) -> IndexElement | None:
        return self.loaded().get(key)

    def contains(self, key: StoreKey) -> bool:
        if self._loaded is None and key in (self._first, self._last):
            return True
        return self.loaded().contains(key)

    def first(self) -> StoreKey | None:
        if self._loaded is None and self._first is not None:
            return self._first
        return self.loaded().first()

    def last(self) -> StoreKey | None:
        if self._loaded is None and self._last is not None:
            return self._last
        return self.loaded().last()

    def iterate(
        self, begin: StoreKey | None = None, end: StoreKey | None = None, prefetch: bool = False
    ) -> Iterator[IndexElement]:
        return self.loaded().iterate(begin, end, prefetch)

    def element_count(self) -> int:
        return self.loaded().element_count()

    def keys(self) -> list[StoreKey]:
        return self.loaded().keys()

    def load_if_necessary(self, keys: Iterable[StoreKey]) -> None:
        self.loaded().load_if_necessary(keys)

    def estimated_serialized_size(self) -> int:
        return self.loaded().estimated_serialized_size()

    def stripes(self) -> list[StoreIndex]:
        return self.loaded().stripes()

    def add(self, element: IndexElement) -> bool:
        return self.loaded().add(element)

    def remove(self, key: StoreKey) -> bool:
        return self.loaded().remove(key)

    def update_all(self, updater: Updater) -> None:
        self.loaded().update_all(updater)

    def serialize(self) -> bytes:
        return self.loaded().serialize()
