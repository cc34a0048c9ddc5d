"""The plain index: a sorted array, and its binary form (byte-for-byte Nessie's format, version 2).

Serialised form::

    byte    version (2; version 1 has no element count)
    varint  element count
    per element, ascending by key:
        varint  strip   (absent for the first element): bytes to drop from the end of the
                        previous serialised key
        bytes   suffix  the rest of this element's serialised key (UTF-8 of the raw key, then 00 00)
        bytes   value   the serialised CommitOp
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from persist_spi.indexes.base import StoreIndex, Updater, check_range, in_range_filter
from persist_spi.indexes.elements import CommitOp, IndexElement, deserialize_op, serialize_op
from persist_spi.indexes.varint import decode_varint, encode_varint
from persist_spi.keys import KEY_TERMINATOR, StoreKey, serialize_key

_CURRENT_VERSION = 2
#: Nessie's per-element allowance for the strip varint and similar bookkeeping in size estimates.
_ASSUMED_PER_ENTRY_OVERHEAD = 4


def _key_size(key: str) -> int:
    return 2 + len(key.encode("utf-8"))


class StoreIndexImpl(StoreIndex):
    """Mutable sorted index. Not thread-safe (each commit builds its own)."""

    def __init__(
        self,
        keys: list[StoreKey] | None = None,
        ops: list[CommitOp] | None = None,
        *,
        original_size: int = 2,
        serialized: bytes | None = None,
    ) -> None:
        self._keys: list[StoreKey] = keys if keys is not None else []
        self._ops: list[CommitOp] = ops if ops is not None else []
        self._original_size = original_size
        self._size_diff = 0
        self._modified = False
        self._serialized = serialized
        self.obj_id = None

    # --- reads -----------------------------------------------------------------------------------

    def get(self, key: StoreKey) -> IndexElement | None:
        keys = self._keys
        i = bisect.bisect_left(keys, key)
        if i < len(keys) and keys[i] == key:
            return IndexElement(key, self._ops[i])
        return None

    def contains(self, key: StoreKey) -> bool:
        keys = self._keys
        i = bisect.bisect_left(keys, key)
        return i < len(keys) and keys[i] == key

    def first(self) -> StoreKey | None:
        return self._keys[0] if self._keys else None

    def last(self) -> StoreKey | None:
        return self._keys[-1] if self._keys else None

    def element_count(self) -> int:
        return len(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def keys(self) -> list[StoreKey]:
        return list(self._keys)

    def iterate(
        self, begin: StoreKey | None = None, end: StoreKey | None = None, prefetch: bool = False
    ) -> Iterator[IndexElement]:
        check_range(begin, end)
        start = 0 if begin is None else bisect.bisect_left(self._keys, begin)
        keys, ops = self._keys, self._ops
        return in_range_filter((IndexElement(keys[i], ops[i]) for i in range(start, len(keys))), begin, end)

    @property
    def is_modified(self) -> bool:
        return self._modified

    def estimated_serialized_size(self) -> int:
        return self._original_size + self._size_diff

    # --- mutation --------------------------------------------------------------------------------

    def add(self, element: IndexElement) -> bool:
        key, op = element
        keys = self._keys
        i = bisect.bisect_left(keys, key)
        self._modified = True
        if i < len(keys) and keys[i] == key:
            old = self._ops[i]
            self._ops[i] = op
            self._size_diff += op.serialized_size() - old.serialized_size()
            return False
        keys.insert(i, key)
        self._ops.insert(i, op)
        self._size_diff += _key_size(key) + _ASSUMED_PER_ENTRY_OVERHEAD + op.serialized_size()
        return True

    def remove(self, key: StoreKey) -> bool:
        keys = self._keys
        i = bisect.bisect_left(keys, key)
        if i >= len(keys) or keys[i] != key:
            return False
        self._modified = True
        del keys[i]
        old = self._ops.pop(i)
        self._size_diff -= 2 + old.serialized_size()
        return True

    def update_all(self, updater: Updater) -> None:
        keys, ops = self._keys, self._ops
        new_keys: list[StoreKey] = []
        new_ops: list[CommitOp] = []
        changed = False
        for key, op in zip(keys, ops, strict=True):
            updated = updater(IndexElement(key, op))
            if updated is None:
                changed = True
                self._size_diff -= 2 + op.serialized_size()
                continue
            if updated is not op:
                changed = True
                self._size_diff += updated.serialized_size() - op.serialized_size()
            new_keys.append(key)
            new_ops.append(updated)
        if changed:
            self._keys, self._ops = new_keys, new_ops
            self._modified = True

    def divide(self, parts: int) -> list[StoreIndexImpl]:
        """Split into ``parts`` indexes of ``len // parts`` elements, the last taking the rest."""
        size = len(self._keys)
        if parts <= 0 or parts > size:
            raise ValueError(f"Number of parts {parts} must be between 1 and the element count {size}")
        per_part = size // parts
        result = []
        for p in range(parts):
            lo = p * per_part
            hi = size if p == parts - 1 else lo + per_part
            result.append(_from_elements(self._keys[lo:hi], self._ops[lo:hi]))
        return result

    # --- serialisation ---------------------------------------------------------------------------

    def serialize(self) -> bytes:
        if self._serialized is not None and not self._modified:
            return self._serialized
        out = bytearray((_CURRENT_VERSION,))
        out += encode_varint(len(self._keys))
        previous = b""
        for key, op in zip(self._keys, self._ops, strict=True):
            current = serialize_key(key)
            if previous:
                common = _common_prefix_length(previous, current)
                out += encode_varint(len(previous) - common)
                out += current[common:]
            else:
                out += current
            out += serialize_op(op)
            previous = current
        return bytes(out)


def _common_prefix_length(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _from_elements(keys: list[StoreKey], ops: list[CommitOp]) -> StoreIndexImpl:
    index = StoreIndexImpl(keys, ops)
    index._modified = True
    index._size_diff = sum(
        _key_size(k) + _ASSUMED_PER_ENTRY_OVERHEAD + o.serialized_size()
        for k, o in zip(keys, ops, strict=True)
    )
    return index


def new_index() -> StoreIndexImpl:
    """An empty mutable index (serialises to ``02 00``)."""
    return StoreIndexImpl()


def index_from_elements(elements: list[IndexElement]) -> StoreIndexImpl:
    """A modified index holding the given elements (sorted and de-duplicated, last one wins)."""
    by_key = {e.key: e.op for e in elements}
    keys = sorted(by_key)
    return _from_elements(keys, [by_key[k] for k in keys])


def deserialize_index(data: bytes) -> StoreIndexImpl:
    """Read version 1 or 2. Elements are read until the buffer ends (the v2 count is advisory)."""
    if not data:
        raise ValueError("Serialized index is empty")
    version = data[0]
    if version == 2:
        _, pos = decode_varint(data, 1)
    elif version == 1:
        pos = 1
    else:
        raise ValueError(f"Unsupported serialized index version {version}")
    keys: list[StoreKey] = []
    ops: list[CommitOp] = []
    previous = b""
    end = len(data)
    find = data.find
    while pos < end:
        if previous:
            strip, pos = decode_varint(data, pos)
            prefix = previous[: len(previous) - strip]
        else:
            prefix = b""
        # The key ends at the first double zero: a zero byte inside a key always separates two
        # non-empty elements, so only the terminator is followed by another zero.
        stop = find(KEY_TERMINATOR, pos)
        if stop < 0:
            raise ValueError(f"Serialized index is truncated in a key at offset {pos}")
        current = prefix + data[pos : stop + 2]
        pos = stop + 2
        op, pos = deserialize_op(data, pos)
        keys.append(StoreKey(current[:-2].decode("utf-8")))
        ops.append(op)
        previous = current
    return StoreIndexImpl(keys, ops, original_size=len(data), serialized=data)


class _EmptyImmutableIndex(StoreIndex):
    """The index of "nothing": no elements, cannot change, serialises to the single byte ``01``."""

    def get(self, key: StoreKey) -> IndexElement | None:
        return None

    def first(self) -> StoreKey | None:
        return None

    def last(self) -> StoreKey | None:
        return None

    def iterate(
        self, begin: StoreKey | None = None, end: StoreKey | None = None, prefetch: bool = False
    ) -> Iterator[IndexElement]:
        check_range(begin, end)
        return iter(())

    def element_count(self) -> int:
        return 0

    def estimated_serialized_size(self) -> int:
        return 1

    def serialize(self) -> bytes:
        return b"\x01"


EMPTY_IMMUTABLE_INDEX: StoreIndex = _EmptyImmutableIndex()
