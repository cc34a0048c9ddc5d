"""The order in which Nessie's server lists content keys it collected in a Java ``HashMap``.

Several of Nessie's answers list keys in the iteration order of a ``HashMap<ContentKey, ...>``:
the content ids a commit added, the details of a merge or transplant, the contents of several keys.
That is neither the order of the request nor the order of the keys, but it follows from Java's hash
codes: a ``ContentKey`` hashes as the list of its elements (``List.hashCode()`` over
``String.hashCode()``), and :func:`persist_spi.java_order.java_put_order` replays the map.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from persist_spi.java_order import java_put_order, java_string_hash
from persist_spi.versionstore.content import ContentKey

K = TypeVar("K", bound=ContentKey)


def content_key_hash(key: ContentKey) -> int:
    """``ContentKey.hashCode()`` of Nessie's model, as an unsigned 32-bit value."""
    h = 1
    for element in key.elements:
        h = (31 * h + java_string_hash(element)) & 0xFFFFFFFF
    return h


def hash_map_order(keys: Iterable[K], expected_size: int | None = None) -> list[K]:
    """``keys`` (in the order they were put into the map; repeats count once) as a Java ``HashMap``
    iterates them: one made with ``new HashMap<>()``, or with Guava's
    ``Maps.newHashMapWithExpectedSize(expected_size)``."""
    distinct = list(dict.fromkeys(keys))
    return [distinct[i] for i in java_put_order([content_key_hash(k) for k in distinct], expected_size)]


__all__ = ["content_key_hash", "hash_map_order"]
