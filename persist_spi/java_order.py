"""The order Java gives strings where Nessie's ids depend on it: a ``HashMap``'s iteration order.

Nessie hashes commit and tag headers in the iteration order of the ``HashMap`` that holds them
(``CommitHeadersImpl``: a builder map filled with ``computeIfAbsent``, copied into a new
``HashMap`` by ``build()``). That order is not random: it follows from the names' ``String.hashCode``,
the table sizes the two maps grow to, and the order names were first added. This module replays
what ``java.util.HashMap`` (OpenJDK 8 and later, unchanged since) does with those names, so lochkit
derives the same commit ids.

The same replay orders content keys where Nessie's answers list them from a ``HashMap``
(:func:`java_put_order`, used by :mod:`persist_spi.versionstore.key_hash_order`).

Java's other order, ``String.compareTo`` (by UTF-16 code unit), is the order of store keys:
:func:`persist_spi.keys.key_order`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Final

from persist_spi.errors import InputError

#: ``HashMap``'s defaults: the first table's size, and when a table doubles (size > 3/4 of it).
_DEFAULT_CAPACITY: Final = 16
_LOAD_FACTOR: Final = 0.75
#: A bucket holding this many names becomes a red-black tree when the table has at least
#: ``_MIN_TREEIFY_CAPACITY`` buckets (a smaller table doubles instead).
_TREEIFY_THRESHOLD: Final = 8
_MIN_TREEIFY_CAPACITY: Final = 64
_MAXIMUM_CAPACITY: Final = 1 << 30


def java_string_hash(text: str) -> int:
    """``String.hashCode``: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units, as an int32."""
    h = 0
    units = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h


def _spread(h: int) -> int:
    """``HashMap.hash``: the upper 16 bits folded into the lower ones (on the unsigned 32 bits)."""
    return h ^ (h >> 16)


class _Table:
    """The buckets of one ``HashMap``: each a list in the map's iteration order."""

    def __init__(self, capacity: int) -> None:
        self.buckets: list[list[tuple[int, str]]] = [[] for _ in range(capacity)]
        self.threshold = int(capacity * _LOAD_FACTOR)

    def bucket(self, h: int) -> list[tuple[int, str]]:
        return self.buckets[h & (len(self.buckets) - 1)]

    def doubled(self) -> _Table:
        """``resize()``: every bucket splits into the same index and index + old size, each keeping
        its nodes' relative order."""
        bigger = _Table(len(self.buckets) * 2)
        for bucket in self.buckets:
            for node in bucket:
                bigger.bucket(node[0]).append(node)
        return bigger

    def check_not_treeified(self, bucket: list[tuple[int, str]], *, always: bool = False) -> None:
        """Refuses a bucket Java would turn into a tree (or, ``always``, also a small table Java
        would grow at this point, which the copy below does not replay)."""
        if always or len(self.buckets) >= _MIN_TREEIFY_CAPACITY:
            raise InputError(
                f"{len(bucket)} header names share one bucket of a Java HashMap "
                f"({', '.join(n for _, n in bucket)}): Nessie would order them through a "
                "red-black tree, which lochkit does not reproduce; use other names"
            )

    def order(self) -> list[str]:
        return [name for bucket in self.buckets for _, name in bucket]


def _builder_map(names: Sequence[str]) -> _Table:
    """``new HashMap<>()`` filled by ``computeIfAbsent(name, ...)`` for each name in turn (a name
    seen before changes nothing but may still grow the table first)."""
    table: _Table | None = None
    size = 0
    for name in names:
        if table is None:
            table = _Table(_DEFAULT_CAPACITY)
        elif size > table.threshold:  # checked before the lookup, so also for a known name
            table = table.doubled()
        h = _spread(java_string_hash(name))
        bucket = table.bucket(h)
        if any(n == name for _, n in bucket):
            continue
        bucket.insert(0, (h, name))  # computeIfAbsent puts a new node first in its bucket
        size += 1
        if len(bucket) >= _TREEIFY_THRESHOLD:
            if len(table.buckets) < _MIN_TREEIFY_CAPACITY:
                table = table.doubled()
            else:
                table.check_not_treeified(bucket)
    return table if table is not None else _Table(_DEFAULT_CAPACITY)


def _table_size_for(wanted: int) -> int:
    return min(_MAXIMUM_CAPACITY, 1 << max(0, wanted - 1).bit_length())


@functools.lru_cache(maxsize=1024)
def _copied_order(names: tuple[str, ...]) -> tuple[str, ...]:
    source = _builder_map(names)
    distinct = source.order()
    if not distinct:
        return ()
    # new HashMap<>(map): a table sized for the entries up front (no resize while copying), filled
    # by put() in the source's iteration order, which appends to a bucket.
    copy = _Table(_table_size_for(int(len(distinct) / _LOAD_FACTOR + 1.0)))
    for name in distinct:
        h = _spread(java_string_hash(name))
        bucket = copy.bucket(h)
        bucket.append((h, name))
        if len(bucket) > _TREEIFY_THRESHOLD:  # put() treeifies at the ninth node
            copy.check_not_treeified(bucket, always=True)
    return tuple(copy.order())


def _guava_capacity(expected_size: int) -> int:
    """The capacity Guava's ``Maps.newHashMapWithExpectedSize`` asks ``HashMap`` for."""
    return expected_size + 1 if expected_size < 3 else math.ceil(expected_size / _LOAD_FACTOR)


def java_put_order(hashes: Sequence[int], expected_size: int | None = None) -> list[int]:
    """The positions of ``hashes`` (``hashCode()`` values of distinct keys, as unsigned 32 bits) in
    the order a ``HashMap`` iterates them after ``put()`` of each in turn: a map made with
    ``new HashMap<>()`` (``expected_size`` None) or with Guava's ``newHashMapWithExpectedSize``.

    ``put()`` appends to its bucket and a resize keeps each bucket's order, so the order is by bucket
    of the final table, then by position. (A bucket Java turns into a tree, eight keys of one hash
    slot, is not replayed: the order is then approximate, which no caller relies on.)"""
    capacity = _DEFAULT_CAPACITY if expected_size is None else _table_size_for(_guava_capacity(expected_size))
    while len(hashes) > int(capacity * _LOAD_FACTOR) and capacity < _MAXIMUM_CAPACITY:
        capacity *= 2
    mask = capacity - 1
    return sorted(range(len(hashes)), key=lambda i: _spread(hashes[i]) & mask)


def java_header_order(names: Sequence[str]) -> tuple[str, ...]:
    """The order Nessie's ``CommitHeaders`` iterates header ``names`` (lowercased already, in the
    order they were first added to its builder, repeats allowed)."""
    return _copied_order(tuple(names))
