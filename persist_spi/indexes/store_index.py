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

import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import Final

from persist_spi.errors import CorruptData, InputError
from persist_spi.indexes.action import Action
from persist_spi.indexes.base import StoreIndex, Updater, check_range, in_range_filter
from persist_spi.indexes.elements import (
    CommitOp,
    IndexElement,
    deserialize_op,
    serialize_op,
    serialized_op_size,
)
from persist_spi.indexes.varint import decode_varint, encode_varint
from persist_spi.keys import KEY_TERMINATOR, StoreKey, bisect_keys, serialize_key, sort_keys

_CURRENT_VERSION = 2
#: Nessie's per-element allowance for the strip varint and similar bookkeeping in size estimates.
_ASSUMED_PER_ENTRY_OVERHEAD = 4


def _key_size(key: str) -> int:
    return 2 + len(key.encode("utf-8"))


class StoreIndexImpl(StoreIndex):
    """Mutable sorted index. Not thread-safe (each commit builds its own).

    Besides keys and operations it keeps, per element, the bytes that element occupied in the
    serialised form it was read from (strip, key suffix and value), while they stay valid: a
    commit re-serialises an index that differs from its parent's in a few elements only, so most
    of the output is copied rather than encoded again.
    """

    def __init__(
        self,
        keys: list[StoreKey] | None = None,
        ops: list[CommitOp] | None = None,
        *,
        original_size: int = 2,
        serialized: bytes | None = None,
        chunks: list[bytes | None] | None = None,
    ) -> None:
        self._keys: list[StoreKey] = keys if keys is not None else []
        self._ops: list[CommitOp] = ops if ops is not None else []
        self._chunks: list[bytes | None] = chunks if chunks is not None else [None] * len(self._keys)
        self._original_size = original_size
        self._size_diff = 0
        self._modified = False
        self._serialized = serialized
        self.obj_id = None

    # --- reads -----------------------------------------------------------------------------------

    def get(self, key: StoreKey) -> IndexElement | None:
        keys = self._keys
        i = bisect_keys(keys, key)
        if i < len(keys) and keys[i] == key:
            return IndexElement(key, self._ops[i])
        return None

    def contains(self, key: StoreKey) -> bool:
        keys = self._keys
        i = bisect_keys(keys, key)
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
        start = 0 if begin is None else bisect_keys(self._keys, begin)
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
        i = bisect_keys(keys, key)
        self._modified = True
        if i < len(keys) and keys[i] == key:
            old = self._ops[i]
            self._ops[i] = op
            if op != old:
                self._chunks[i] = _with_op(self._chunks[i], old, op)
            self._size_diff += op.serialized_size() - old.serialized_size()
            return False
        keys.insert(i, key)
        self._ops.insert(i, op)
        self._chunks.insert(i, None)
        if i + 1 < len(self._chunks):
            self._chunks[i + 1] = None  # its key is now compressed against another predecessor
        self._size_diff += _key_size(key) + _ASSUMED_PER_ENTRY_OVERHEAD + op.serialized_size()
        return True

    def remove(self, key: StoreKey) -> bool:
        keys = self._keys
        i = bisect_keys(keys, key)
        if i >= len(keys) or keys[i] != key:
            return False
        self._modified = True
        del keys[i]
        del self._chunks[i]
        if i < len(self._chunks):
            self._chunks[i] = None
        old = self._ops.pop(i)
        self._size_diff -= 2 + old.serialized_size()
        return True

    def update_all(self, updater: Updater) -> None:
        keys, ops, chunks = self._keys, self._ops, self._chunks
        new_keys: list[StoreKey] = []
        new_ops: list[CommitOp] = []
        new_chunks: list[bytes | None] = []
        changed = False
        dropped_previous = False
        for key, op, chunk in zip(keys, ops, chunks, strict=True):
            updated = updater(IndexElement(key, op))
            if updated is None:
                changed = True
                dropped_previous = True
                self._size_diff -= 2 + op.serialized_size()
                continue
            if updated is not op and updated != op:
                changed = True
                chunk = None
                self._size_diff += updated.serialized_size() - op.serialized_size()
            new_keys.append(key)
            new_ops.append(updated)
            new_chunks.append(None if dropped_previous else chunk)
            dropped_previous = False
        if changed:
            self._keys, self._ops, self._chunks = new_keys, new_ops, new_chunks
            self._modified = True

    def rewrite_actions(self, mapping: dict[Action, Action | None]) -> None:
        """Change the action of every element whose action is in ``mapping`` (None removes it).

        Same effect as an ``update_all`` doing that, but touches only the affected elements: a
        child commit carries its parent's index over this way, and usually only the parent's own
        few operations change.
        """
        ops = self._ops
        affected = _positions_of(ops, mapping)
        if not affected:
            return
        self._modified = True
        removed: list[int] = []
        for i, target in affected:
            op = ops[i]
            if target is None:
                removed.append(i)
                self._size_diff -= 2 + op.serialized_size()
            else:
                ops[i] = CommitOp(target, op[1], op[2], op[3])
                self._chunks[i] = _with_action(self._chunks[i], op, target)
        for i in reversed(removed):
            del self._keys[i]
            del ops[i]
            del self._chunks[i]
            if i < len(self._chunks):
                self._chunks[i] = None

    def copy(self) -> StoreIndexImpl:
        """An independent copy (elements are immutable, so copying the two lists is enough)."""
        clone = StoreIndexImpl(
            list(self._keys),
            list(self._ops),
            original_size=self._original_size,
            serialized=self._serialized,
            chunks=list(self._chunks),
        )
        clone._size_diff = self._size_diff
        clone._modified = self._modified
        clone.obj_id = self.obj_id
        return clone

    def divide(self, parts: int) -> list[StoreIndexImpl]:
        """Split into ``parts`` indexes of ``len // parts`` elements, the last taking the rest."""
        size = len(self._keys)
        if parts <= 0 or parts > size:
            raise InputError(f"Number of parts {parts} must be between 1 and the element count {size}")
        per_part = size // parts
        result = []
        for p in range(parts):
            lo = p * per_part
            hi = size if p == parts - 1 else lo + per_part
            part = _from_elements(self._keys[lo:hi], self._ops[lo:hi])
            part._chunks = [None, *self._chunks[lo + 1 : hi]]  # the first key is written in full
            result.append(part)
        return result

    # --- serialisation ---------------------------------------------------------------------------

    def serialize(self) -> bytes:
        if self._serialized is not None and not self._modified:
            return self._serialized
        keys, ops, chunks = self._keys, self._ops, self._chunks
        # Usually few elements changed: find them with C-level scans, write only those, and
        # join the rest as they were.
        at = -1
        previous_at, previous = -2, b""
        for _ in range(chunks.count(None)):
            at = chunks.index(None, at + 1)
            current = serialize_key(keys[at])
            if at == 0:
                chunks[0] = current + serialize_op(ops[0])
            else:
                if previous_at != at - 1:
                    previous = serialize_key(keys[at - 1])
                common = _common_prefix_length(previous, current)
                chunks[at] = encode_varint(len(previous) - common) + current[common:] + serialize_op(ops[at])
            previous_at, previous = at, current
        header = bytes((_CURRENT_VERSION,)) + encode_varint(len(keys))
        return header + b"".join(chunks)  # type: ignore[arg-type]  # no None is left


def _positions_of(
    ops: list[CommitOp], mapping: dict[Action, Action | None]
) -> list[tuple[int, Action | None]]:
    """(position, new action) of every element whose action the mapping names, ascending."""
    return [(i, mapping[op[0]]) for i, op in enumerate(ops) if op[0] in mapping]


def _op_start(chunk: bytes, op: CommitOp) -> int:
    """Where ``op``'s bytes start in its element's serialised bytes; -1 if they are not laid out
    as this module writes them (then the element is serialised afresh)."""
    at = len(chunk) - serialized_op_size(op)
    return at if at >= 0 and chunk[at] == op.action.code_byte else -1


def _with_op(chunk: bytes | None, old: CommitOp, new: CommitOp) -> bytes | None:
    """An element's serialised bytes with its operation replaced: the key part (strip and suffix)
    does not depend on the operation, so only the operation's bytes at the end are written anew."""
    if chunk is None or (at := _op_start(chunk, old)) < 0:
        return None
    return chunk[:at] + serialize_op(new)


def _with_action(chunk: bytes | None, op: CommitOp, action: Action) -> bytes | None:
    """An element's serialised bytes with only its action byte (the operation's first) changed."""
    if chunk is None or (at := _op_start(chunk, op)) < 0:
        return None
    return chunk[:at] + action.code + chunk[at + 1 :]


def _common_prefix_length(a: bytes, b: bytes) -> int:
    """Length of the common prefix, by binary search over slice comparisons (done in C)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


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
    keys = sort_keys(by_key)
    return _from_elements(keys, [by_key[k] for k in keys])


def deserialize_index(data: bytes) -> StoreIndexImpl:
    """Read version 1 or 2. Elements are read until the buffer ends (the v2 count is advisory)."""
    if not data:
        raise CorruptData("Serialized index is empty")
    version = data[0]
    if version == 2:
        _, pos = decode_varint(data, 1)
    elif version == 1:
        pos = 1
    else:
        raise CorruptData(f"Unsupported serialized index version {version}")
    keys: list[StoreKey] = []
    ops: list[CommitOp] = []
    chunks: list[bytes | None] = []
    previous = b""
    end = len(data)
    find = data.find
    while pos < end:
        start = pos
        if previous:
            strip, pos = decode_varint(data, pos)
            prefix = previous[: len(previous) - strip]
        else:
            prefix = b""
        # The key ends at the first double zero: a zero byte inside a key always separates two
        # non-empty elements, so only the terminator is followed by another zero.
        stop = find(KEY_TERMINATOR, pos)
        if stop < 0:
            raise CorruptData(f"Serialized index is truncated in a key at offset {pos}")
        current = prefix + data[pos : stop + 2]
        pos = stop + 2
        op, pos = deserialize_op(data, pos)
        keys.append(StoreKey(current[:-2].decode("utf-8")))
        ops.append(op)
        chunks.append(data[start:pos])
        previous = current
    return StoreIndexImpl(keys, ops, original_size=len(data), serialized=data, chunks=chunks)


#: Decoded indexes kept at most. A commit reads its parent's index, a retry or a reader the few
#: before it: the newest hundreds are what gets hit. Each one kept is a list of element objects
#: the garbage collector walks in every full collection. Bounded by bytes alone (64 MB: about
#: 11,000 commits' indexes), full collections took 31 % of compiled in-memory commits' time over
#: 20,000 commits; with this bound, 18 %, and the commits ran 1.3 times as fast.
MAX_DECODED_INDEXES: Final = 512


class DecodedIndexCache:
    """Decoded indexes by their serialised bytes, bounded by the total size of those bytes and by
    their number.

    Serialised indexes never change meaning (equal bytes, equal index), so a decoded index can be
    shared; callers get a copy they may mutate. The bytes themselves are the key: Python caches a
    bytes object's hash, and a hit costs one memory comparison.
    """

    def __init__(self, max_bytes: int = 64 * 1024 * 1024, max_entries: int = MAX_DECODED_INDEXES) -> None:
        self._max_bytes = max_bytes
        self._max_entries = max_entries
        self._entries: OrderedDict[bytes, StoreIndexImpl] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, data: bytes) -> StoreIndexImpl:
        with self._lock:
            found = self._entries.get(data)
            if found is not None:
                self._entries.move_to_end(data)
                self.hits += 1
                return found.copy()
            self.misses += 1
        decoded = deserialize_index(data)
        self.adopt(data, decoded)
        return decoded.copy()

    def put(self, data: bytes, index: StoreIndexImpl) -> None:
        """Remember an index whose serialised form is ``data`` (e.g. one just built and serialised)."""
        if len(data) <= self._max_bytes // 4:
            self.adopt(data, index.copy())

    def adopt(self, data: bytes, index: StoreIndexImpl) -> None:
        """:meth:`put` without the copy: the cache takes ``index`` over, and the caller must
        neither use nor change it afterwards."""
        if len(data) > self._max_bytes // 4:
            return
        pristine = index
        pristine._modified = False
        pristine._serialized = data
        pristine._original_size = len(data)
        pristine._size_diff = 0
        with self._lock:
            if data in self._entries:
                return
            self._entries[data] = pristine
            self._size += len(data)
            while (self._size > self._max_bytes or len(self._entries) > self._max_entries) and self._entries:
                old, _ = self._entries.popitem(last=False)
                self._size -= len(old)


#: Process-wide; safe to share across repositories because equal bytes mean an equal index.
DECODED_INDEXES = DecodedIndexCache()


def deserialize_index_cached(data: bytes) -> StoreIndexImpl:
    return DECODED_INDEXES.get(data)


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
