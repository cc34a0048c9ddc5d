"""Commit (and tag) headers: a multi-map from lowercased names to ordered values."""

from __future__ import annotations

from collections.abc import ItemsView, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from persist_spi.java_order import java_header_order

if TYPE_CHECKING:
    from persist_spi.hashing import ObjIdHasher


class CommitHeaders(Mapping[str, tuple[str, ...]]):
    """Immutable headers. Names are lowercased on insert, so lookups ignore case.

    The id contribution feeds the names in the order Nessie's ``CommitHeaders`` iterates them (a
    Java ``HashMap``'s, computed from the names and the order they were first added:
    :mod:`persist_spi.java_order`), each followed by its values in insertion order.
    """

    __slots__ = ("_map",)

    def __init__(self, entries: Mapping[str, Iterable[str]] | Iterable[tuple[str, str]] = ()) -> None:
        merged: dict[str, list[str]] = {}
        items: Iterable[tuple[str, Iterable[str]]]
        if isinstance(entries, Mapping):
            items = entries.items()
        else:
            items = ((name, (value,)) for name, value in entries)
        for name, values in items:
            if isinstance(values, str):
                values = (values,)
            merged.setdefault(name.lower(), []).extend(values)
        self._map: dict[str, tuple[str, ...]] = {n: tuple(v) for n, v in merged.items()}

    @classmethod
    def from_lowercase(cls, headers: dict[str, tuple[str, ...]]) -> CommitHeaders:
        """Headers from a dict whose names are lowercase already, each with its values; the dict
        is taken over (the caller must not change it)."""
        made = cls()
        made._map = headers
        return made

    def __getitem__(self, name: str) -> tuple[str, ...]:
        return self._map[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._map

    def __iter__(self) -> Iterator[str]:
        return iter(self._map)

    def __len__(self) -> int:
        return len(self._map)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CommitHeaders):
            return self._map == other._map
        return NotImplemented

    def __hash__(self) -> int:
        return hash(frozenset(self._map.items()))

    def __repr__(self) -> str:
        return f"CommitHeaders({self._map!r})"

    def items(self) -> ItemsView[str, tuple[str, ...]]:
        # The dict's own view: Mapping's generic one looks every name up again, lowercasing it.
        return self._map.items()

    def first(self, name: str) -> str | None:
        values = self._map.get(name.lower())
        return values[0] if values else None

    def with_header(self, name: str, value: str) -> CommitHeaders:
        return CommitHeaders([*self.pairs(), (name, value)])

    def pairs_size(self) -> int:
        """The characters of every name and value, and two per pair: about what the headers take
        serialised (the object cache's weight of a commit)."""
        total = 0
        for name, values in self._map.items():
            for value in values:
                total += len(name) + len(value) + 2
        return total

    def pairs(self) -> Iterator[tuple[str, str]]:
        for name, values in self._map.items():
            for value in values:
                yield name, value

    def hash_into(self, hasher: ObjIdHasher) -> None:
        for name in java_header_order(tuple(self._map)):
            hasher.put_str(name)
            for value in self._map[name]:
                hasher.put_str(value)


EMPTY_COMMIT_HEADERS = CommitHeaders()
